"""The preview answers only its own host, and keeps its connection threads bounded."""

from __future__ import annotations

import socket
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from sitegen.preview import app, httpserver
from sitegen.preview.reload import ReloadChannel
from sitegen.preview.routing import host_allowed

from .conftest import Running, serving, write_site


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1.nip.io",
                                  "localhost.evil.example:{port}", "127.0.0.1:1", ""])
@pytest.mark.parametrize("path", ["/", "/hello/", "/__sitegen/events", "/__sitegen/livereload.js"])
def test_a_request_for_another_host_is_refused(running: Running, host: str, path: str) -> None:
    """DNS rebinding: a page of evil.example whose name now resolves to 127.0.0.1 must not
    read the preview (its requests carry `Host: evil.example`); the event stream neither."""
    port = running.server.server_port
    with httpx.stream("GET", running.url + path, headers={"Host": host.format(port=port)},
                      timeout=30) as response:
        assert response.status_code == 403  # (the event stream would never end: not read)
        text = response.read().decode()
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert text.startswith("403 Forbidden") and "<" not in text
    assert "Home" not in text and "<p>hi</p>" not in text


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "127.0.0.1", "localhost:{port}",
                                  "localhost", "LocalHost:{port}", "[::1]:{port}"])
def test_the_listening_address_and_localhost_are_answered(running: Running, host: str) -> None:
    port = running.server.server_port
    response = httpx.get(running.url + "/hello/", headers={"Host": host.format(port=port)},
                         timeout=30)
    assert response.status_code == 200
    assert "<p>hi</p>" in response.text


def test_host_rules_for_other_bindings() -> None:
    # every interface: an IP address cannot be rebound, a DNS name can
    assert host_allowed("192.168.1.20:8000", "0.0.0.0", "0.0.0.0", 8000)
    assert host_allowed("localhost:8000", "0.0.0.0", "0.0.0.0", 8000)
    assert not host_allowed("evil.example:8000", "0.0.0.0", "0.0.0.0", 8000)
    # one address: that one (and localhost), not another
    assert host_allowed("192.168.1.20", "192.168.1.20", "192.168.1.20", 8000)
    assert not host_allowed("10.0.0.1", "192.168.1.20", "192.168.1.20", 8000)
    # IPv6 loopback; the name given to --host
    assert host_allowed("[::1]:8000", "::1", "::1", 8000)
    assert host_allowed("127.0.0.1:8000", "::1", "::1", 8000)
    assert host_allowed("box.lan:8000", "192.168.1.20", "box.lan", 8000)
    for bad in (None, "", "[::1", "a@127.0.0.1", "127.0.0.1/x", "127.0.0.1:99999"):
        assert not host_allowed(bad, "127.0.0.1", "127.0.0.1", 8000)


def test_a_request_beyond_the_connection_cap_is_answered_503_and_the_server_recovers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """1,500 idle connections once made 1,506 threads: now 200 idle connections add no thread
    (they wait on the event loop), a request made while MAX_CONNECTIONS of them (16 here, to
    see the bound) are open is answered 503 at once, and once they go a request is answered."""
    cap = 16
    monkeypatch.setattr(httpserver, "MAX_CONNECTIONS", cap)
    write_site(tmp_path)
    before = threading.active_count()
    conns: list[socket.socket] = []
    with serving(tmp_path, ReloadChannel()) as server:
        url = server.url
        try:
            for _ in range(200):
                conns.append(socket.create_connection(("127.0.0.1", server.server_port),
                                                      timeout=30))
                assert threading.active_count() <= before + 1 + cap  # (+1: the server's)
            deadline = time.monotonic() + 120  # until the server has taken the connections in
            while True:
                busy = httpx.get(url + "hello/", timeout=30)
                if busy.status_code == 503 or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            assert busy.status_code == 503
            assert threading.active_count() <= before + 1 + cap
        finally:
            for conn in conns:
                conn.close()
        deadline = time.monotonic() + 120  # the server sees the closes
        while True:
            response = httpx.get(url + "hello/", timeout=30)
            if response.status_code == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert response.status_code == 200 and "<p>hi</p>" in response.text


def test_event_streams_beyond_their_cap_are_answered_503(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One stream per open page, at most MAX_STREAMS (3 here); one more is told to retry, and
    a stream that closes frees its place."""
    monkeypatch.setattr(app, "MAX_STREAMS", 3)
    write_site(tmp_path)
    with serving(tmp_path, ReloadChannel()) as server, httpx.Client(timeout=30) as client:
        events = server.url + "__sitegen/events"
        with ExitStack() as streams:
            for _ in range(3):
                response = streams.enter_context(client.stream("GET", events))
                assert response.status_code == 200
            with client.stream("GET", events) as refused:  # (a stream would never end)
                assert refused.status_code == 503 and refused.headers["retry-after"] == "5"
        deadline = time.monotonic() + 120
        while server.channel.subscriber_count and time.monotonic() < deadline:
            time.sleep(0.05)
        with client.stream("GET", events) as response:
            assert response.status_code == 200
