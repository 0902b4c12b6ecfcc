"""The preview server and rude clients: cancelled loads are silent, partial requests time out."""

from __future__ import annotations

import socket
import struct
import time
from pathlib import Path

import pytest

from sitegen.preview import httpserver
from sitegen.preview.reload import ReloadChannel

from .conftest import serving, write_site


def _rude_get(port: int, target: str) -> None:
    """Ask for *target*, read a little of the answer, then reset the connection."""
    conn = socket.create_connection(("127.0.0.1", port), timeout=5)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    conn.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    conn.recv(1024)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()  # an RST: the server's next writes fail


def test_a_client_that_disconnects_mid_response_is_silent(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    write_site(tmp_path)
    (tmp_path / "static" / "big.bin").write_bytes(b"\0" * (16 * 1024 * 1024))
    with serving(tmp_path, ReloadChannel()) as server:
        for _ in range(5):
            _rude_get(server.server_port, "/static/big.bin")
        time.sleep(1.0)  # the handlers meet the reset while sending
    err = capfd.readouterr().err
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert "ConnectionResetError" not in err, err


def _is_closed(conn: socket.socket, within: float) -> bool:
    """True when the server closes *conn* within *within* seconds."""
    conn.settimeout(within)
    try:
        return conn.recv(1024) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


@pytest.mark.parametrize("partial", [b"", b"GET / HTTP/1.1\r\nHost: x\r\n"])
def test_a_request_whose_headers_never_finish_times_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, partial: bytes) -> None:
    monkeypatch.setattr(httpserver, "HEADER_TIMEOUT", 1.0, raising=False)
    write_site(tmp_path)
    with serving(tmp_path, ReloadChannel()) as server, \
            socket.create_connection(("127.0.0.1", server.server_port), timeout=5) as conn:
        started = time.monotonic()
        conn.sendall(partial)
        for _ in range(4):  # a trickle: every byte comes well within any per-read timeout
            time.sleep(0.3)
            try:
                conn.sendall(b"X")
            except OSError:
                break
        assert _is_closed(conn, within=3.0)
        assert time.monotonic() - started < 4.0


def test_a_complete_request_after_a_slow_start_is_still_answered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(httpserver, "HEADER_TIMEOUT", 2.0, raising=False)
    write_site(tmp_path)
    with serving(tmp_path, ReloadChannel()) as server, \
            socket.create_connection(("127.0.0.1", server.server_port), timeout=5) as conn:
        for piece in (b"GET /hello/ HTTP/1.1\r\n", b"Host: localhost\r\n",
                      b"Connection: close\r\n\r\n"):
            conn.sendall(piece)
            time.sleep(0.3)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200") and b"<p>hi</p>" in answer


def test_the_deadline_spares_a_request_being_answered_and_a_kept_alive_connection(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An event stream lasts far past the header deadline (the deadline counts only while no
    request is under way); after an answer, a kept-alive connection gets a new deadline."""
    import httpx

    monkeypatch.setattr(httpserver, "HEADER_TIMEOUT", 1.0, raising=False)
    write_site(tmp_path)
    channel = ReloadChannel()
    with serving(tmp_path, channel) as server, httpx.Client(timeout=10) as client:
        with client.stream("GET", server.url + "__sitegen/events") as stream:
            lines = stream.iter_lines()
            assert next(line for line in lines if line.startswith("event: ")) == "event: hello"
            time.sleep(2.5)  # (two and a half deadlines)
            channel.built()
            assert next(line for line in lines if line.startswith("event: ")) == "event: reload"
        for _ in range(3):  # one connection, its requests 0.5 s apart: each within a deadline
            assert client.get(server.url + "hello/").status_code == 200
            time.sleep(0.5)
    with serving(tmp_path, ReloadChannel()) as server, \
            socket.create_connection(("127.0.0.1", server.server_port), timeout=5) as conn:
        conn.sendall(b"GET /hello/ HTTP/1.1\r\nHost: localhost\r\n\r\n")
        answer = b""
        while b"</html>" not in answer:  # (the whole answer; the connection stays open)
            answer += conn.recv(65536)
        assert answer.startswith(b"HTTP/1.1 200")
        started = time.monotonic()
        assert _is_closed(conn, within=3.0)  # (idle after its answer: closed at the deadline)
        assert 0.5 < time.monotonic() - started < 2.5
