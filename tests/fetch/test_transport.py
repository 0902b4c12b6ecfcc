"""The lean HTTP/1.1 transport over real loopback sockets: reuse, framing, failures."""

from __future__ import annotations

import asyncio
import gzip
import json
import ssl
import subprocess
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from sitegen.fetch.transport import LeanTransport

#: What the scripted server does with the n-th request: bytes to send, "close" (hang up
#: without answering) or "hang" (never answer).
Reply = bytes | str
Script = Callable[[int, bytes, bytes], Reply]


@dataclass
class Seen:
    connections: int = 0
    requests: list[tuple[bytes, bytes]] = field(default_factory=list)


def answer(body: bytes, *, status: str = "200 OK", headers: str = "") -> bytes:
    return (f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\n{headers}\r\n").encode() + body


@asynccontextmanager
async def scripted(script: Script, tls: ssl.SSLContext | None = None
                   ) -> AsyncIterator[tuple[str, Seen]]:
    seen = Seen()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.split(b"\r\n")
                method, target, _ = lines[0].split(b" ", 2)
                length = 0
                for line in lines[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                body = await reader.readexactly(length) if length else b""
                seen.requests.append((method + b" " + target, body))
                reply = script(len(seen.requests), method, body)
                if reply == "close":
                    break
                if reply == "hang":
                    await asyncio.sleep(3600)
                assert isinstance(reply, bytes)
                writer.write(reply)
                await writer.drain()
                if b"connection: close" in reply.lower():
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=tls)
    port = server.sockets[0].getsockname()[1]
    try:
        yield (f"https://localhost:{port}" if tls else f"http://127.0.0.1:{port}"), seen
    finally:
        server.close()


def run(coro: object) -> object:
    return asyncio.run(coro)  # type: ignore[arg-type]


async def send(transport: LeanTransport, method: str, url: str, *, timeout: float = 5.0,
               **options: object) -> httpx.Response:
    request = httpx.Request(method, url, extensions={"timeout": httpx.Timeout(timeout).as_dict()},
                            **options)  # type: ignore[arg-type]
    response = await transport.handle_async_request(request)
    await response.aread()
    return response


def test_keep_alive_reuses_one_connection_and_reads_each_answer_whole() -> None:
    async def scenario() -> tuple[list[object], Seen]:
        async with scripted(lambda n, m, b: answer(json.dumps({"n": n}).encode())) as (url, seen):
            transport = LeanTransport()
            bodies = [(await send(transport, "GET", f"{url}/api/x?page={i}")).json()
                      for i in range(5)]
            await transport.aclose()
            return bodies, seen

    bodies, seen = run(scenario())  # type: ignore[misc]
    assert bodies == [{"n": n} for n in range(1, 6)]
    assert seen.connections == 1
    assert seen.requests[2][0] == b"GET /api/x?page=2"


def test_chunked_gzip_answer_is_decoded_and_headers_and_reason_kept() -> None:
    payload = gzip.compress(json.dumps({"ok": True, "text": "é" * 3000}).encode())
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(payload[i:i + 500]), payload[i:i + 500])
                      for i in range(0, len(payload), 500))
    reply = (b"HTTP/1.1 201 Made Here\r\ncontent-type: application/json\r\n"
             b"content-encoding: gzip\r\ntransfer-encoding: chunked\r\nx-ratelimit-remaining: 7"
             b"\r\n\r\n" + chunks + b"0\r\n\r\n")

    async def scenario() -> httpx.Response:
        async with scripted(lambda n, m, b: reply) as (url, _):
            transport = LeanTransport()
            response = await send(transport, "GET", f"{url}/a")
            await transport.aclose()
            return response

    response = run(scenario())
    assert isinstance(response, httpx.Response)
    assert response.status_code == 201
    assert response.reason_phrase == "Made Here"
    assert response.headers["x-ratelimit-remaining"] == "7"
    assert response.json() == {"ok": True, "text": "é" * 3000}


def test_connection_close_is_honoured_and_a_body_is_sent_with_its_length() -> None:
    script: Script = lambda n, m, b: answer(b, headers="connection: close\r\n")  # noqa: E731

    async def scenario() -> tuple[list[bytes], Seen]:
        async with scripted(script) as (url, seen):
            transport = LeanTransport()
            echoed = [(await send(transport, "PUT", f"{url}/d", json={"i": i})).content
                      for i in range(2)]
            await transport.aclose()
            return echoed, seen

    echoed, seen = run(scenario())  # type: ignore[misc]
    assert [json.loads(e) for e in echoed] == [{"i": 0}, {"i": 1}]
    assert seen.connections == 2


def test_a_stale_keep_alive_connection_is_replaced_once_for_a_get() -> None:
    # The server hangs up on the second request without answering (a keep-alive timeout
    # racing the request): a GET goes again on a new connection and succeeds.
    script: Script = lambda n, m, b: "close" if n == 2 else answer(b'{"n": %d}' % n)  # noqa: E731

    async def scenario() -> tuple[object, Seen]:
        async with scripted(script) as (url, seen):
            transport = LeanTransport()
            await send(transport, "GET", f"{url}/a")
            second = (await send(transport, "GET", f"{url}/a")).json()
            await transport.aclose()
            return second, seen

    second, seen = run(scenario())  # type: ignore[misc]
    assert second == {"n": 3}
    assert seen.connections == 2


def test_a_stale_connection_is_not_retried_for_a_post() -> None:
    script: Script = lambda n, m, b: "close" if n == 2 else answer(b"{}")  # noqa: E731

    async def scenario() -> None:
        async with scripted(script) as (url, _):
            transport = LeanTransport()
            await send(transport, "POST", f"{url}/a", json={})
            try:
                await send(transport, "POST", f"{url}/a", json={})
            finally:
                await transport.aclose()

    with pytest.raises(httpx.RemoteProtocolError):
        run(scenario())


def test_silence_is_a_read_timeout_and_the_connection_is_dropped() -> None:
    async def scenario() -> Seen:
        async with scripted(lambda n, m, b: "hang" if n == 1 else answer(b"{}")) as (url, seen):
            transport = LeanTransport()
            with pytest.raises(httpx.ReadTimeout):
                await send(transport, "GET", f"{url}/slow", timeout=0.2)
            await send(transport, "GET", f"{url}/next")
            await transport.aclose()
            return seen

    seen = run(scenario())
    assert isinstance(seen, Seen)
    assert seen.connections == 2


def test_garbage_is_a_protocol_error_and_nobody_listening_a_connect_error() -> None:
    async def scenario() -> str:
        async with scripted(lambda n, m, b: b"<html>not http</html>\r\n\r\n") as (url, _):
            transport = LeanTransport()
            try:
                with pytest.raises(httpx.RemoteProtocolError):
                    await send(transport, "GET", f"{url}/a")
            finally:
                await transport.aclose()
            return url

    url = run(scenario())
    assert isinstance(url, str)

    async def refused() -> None:
        transport = LeanTransport()
        await send(transport, "GET", f"{url}/a")  # the server is gone

    with pytest.raises(httpx.ConnectError):
        run(refused())


def test_concurrent_requests_open_connections_then_reuse_them() -> None:
    async def scenario() -> Seen:
        async with scripted(lambda n, m, b: answer(b'{"n": %d}' % n)) as (url, seen):
            transport = LeanTransport(max_idle=4)
            for _ in range(3):
                answers = await asyncio.gather(*(send(transport, "GET", f"{url}/c")
                                                 for _ in range(4)))
                assert all(a.status_code == 200 for a in answers)
            await transport.aclose()
            return seen

    seen = run(scenario())
    assert isinstance(seen, Seen)
    assert len(seen.requests) == 12
    assert seen.connections == 4  # the first round opens them, the next ones reuse them


def test_https_verifies_the_server_certificate(tmp_path: Path) -> None:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost"],
                   check=True, capture_output=True)
    server_side = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_side.load_cert_chain(cert, key)
    trusting = ssl.create_default_context(cafile=str(cert))

    async def scenario(verify: ssl.SSLContext | bool) -> object:
        async with scripted(lambda n, m, b: answer(b'{"tls": true}'), server_side) as (url, _):
            transport = LeanTransport(verify=verify)
            try:
                return (await send(transport, "GET", f"{url}/a")).json()
            finally:
                await transport.aclose()

    assert run(scenario(trusting)) == {"tls": True}
    with pytest.raises(httpx.ConnectError, match="certificate"):
        run(scenario(True))  # the default trust store does not know this certificate
