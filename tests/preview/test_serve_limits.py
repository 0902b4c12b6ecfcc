"""The preview answers only its own host, keeps its threads bounded, and answers real requests
whatever idle or trickling connections are open."""

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


def test_idle_connections_take_no_thread_and_no_real_requests_place(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """1,500 idle connections once made 1,506 threads: now 200 idle connections add no thread
    (they wait on the event loop), and a request made while they are open is answered, even
    with the request cap (MAX_REQUESTS) far below them (16 here)."""
    monkeypatch.setattr(httpserver, "MAX_REQUESTS", 16)
    write_site(tmp_path)
    before = threading.active_count()
    conns: list[socket.socket] = []
    with serving(tmp_path, ReloadChannel()) as server:
        try:
            for number in range(200):
                conns.append(socket.create_connection(("127.0.0.1", server.server_port),
                                                      timeout=30))
                conns[-1].sendall(b"G" if number % 2 else b"")
                assert threading.active_count() <= before + 1  # (+1: the server's)
            time.sleep(0.5)  # (the server has taken them in)
            for _ in range(20):
                response = httpx.get(server.url + "hello/", timeout=30)
                assert response.status_code == 200 and "<p>hi</p>" in response.text
            assert threading.active_count() <= before + 1 + 16  # (+ the file threads)
        finally:
            for conn in conns:
                conn.close()


def _one_byte_clients(port: int, count: int, stop: threading.Event) -> list[threading.Thread]:
    """*count* clients that each connect, send one byte, wait for the server to close the
    connection (the header deadline) and connect again, until *stop*."""
    def client() -> None:
        while not stop.is_set():
            with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
                conn.sendall(b"G")
                conn.settimeout(0.2)
                while not stop.is_set():
                    try:
                        if conn.recv(1024) == b"":
                            break
                    except TimeoutError:
                        continue
                    except OSError:
                        break
    threads = [threading.Thread(target=client, daemon=True) for _ in range(count)]
    for thread in threads:
        thread.start()
    return threads


def test_eighty_reconnecting_one_byte_clients_never_starve_real_requests(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(httpserver, "HEADER_TIMEOUT", 1.0)
    write_site(tmp_path)
    stop = threading.Event()
    with serving(tmp_path, ReloadChannel()) as server:
        threads = _one_byte_clients(server.server_port, 80, stop)
        try:
            time.sleep(0.5)  # (all 80 connected, each holding a partial request)
            answers = []
            past = time.monotonic() + 3.0  # (past a header deadline: they reconnected)
            while len(answers) < 10 or time.monotonic() < past:
                answers.append(httpx.get(server.url + "hello/", timeout=30).status_code)
                time.sleep(0.1)
        finally:
            stop.set()
            for thread in threads:
                thread.join(timeout=30)
    assert set(answers) == {200}, answers


def test_requests_beyond_the_request_cap_are_answered_503_and_the_server_recovers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Requests being answered count (an event stream lasts as long as its page): with
    MAX_REQUESTS (3 here) streams open, a page request is told to retry; one stream closing
    frees a place."""
    monkeypatch.setattr(httpserver, "MAX_REQUESTS", 3)
    write_site(tmp_path)
    with serving(tmp_path, ReloadChannel()) as server, httpx.Client(timeout=30) as client:
        events = server.url + "__sitegen/events"
        with ExitStack() as streams:
            for _ in range(3):
                response = streams.enter_context(client.stream("GET", events))
                assert response.status_code == 200
            with httpx.Client(timeout=30) as other:
                busy = other.get(server.url + "hello/")
            assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
            assert busy.headers["cache-control"] == "no-store"
        deadline = time.monotonic() + 120
        while server.channel.subscriber_count and time.monotonic() < deadline:
            time.sleep(0.05)
        response = client.get(server.url + "hello/")
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
