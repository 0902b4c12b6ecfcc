"""A lean HTTP/1.1 keep-alive transport for httpx: asyncio streams + h11, nothing else.

Role: carry the API client's requests when nothing stands between sitegen and the
service (no proxy), which is the sync's hot path — about one small GET per article.
httpx's default transport (httpcore on AnyIO) spends ~1.9 ms of CPU per such request
on cancel scopes, pool bookkeeping and stream wrappers; this one spends ~0.35 ms, so a
cold sync keeps its request slots busy instead of queueing answers behind the parser.
HTTP parsing is h11's (the parser httpcore itself uses); connections are reused per
origin and a stale keep-alive connection is replaced once, for idempotent methods.

It must never follow redirects, read proxies or cookies, or raise anything but httpx's
own transport errors (the client's retry logic tells them apart); the client bounds
how many requests are in flight.
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from typing import Any

import h11

from sitegen.fetch.lean_httpx import httpx

_IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
_READ_SIZE = 65536
Origin = tuple[str, str, int]


class _Connection:
    """One TCP (or TLS) connection and its h11 state machine."""

    __slots__ = ("reader", "writer", "h11", "reused")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.h11 = h11.Connection(h11.CLIENT)
        self.reused = False

    def reusable(self) -> bool:
        return (self.h11.our_state is h11.IDLE and self.h11.their_state is h11.IDLE
                and not self.writer.is_closing() and not self.reader.at_eof())

    def close(self) -> None:
        self.writer.close()


class _StaleConnection(Exception):
    """A reused connection the server had already closed: nothing was answered on it."""


class LeanTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 over asyncio streams with per-origin keep-alive (see the module docstring)."""

    def __init__(self, *, verify: ssl.SSLContext | bool = True, max_idle: int = 8) -> None:
        self._verify = verify
        self._ssl: ssl.SSLContext | None = verify if isinstance(verify, ssl.SSLContext) else None
        self._max_idle = max(1, max_idle)
        self._idle: dict[Origin, deque[_Connection]] = {}
        self._closed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme not in ("http", "https"):
            raise httpx.UnsupportedProtocol(f"unsupported URL scheme {url.scheme!r}",
                                            request=request)
        origin: Origin = (url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80))
        timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        body = await request.aread()
        while True:
            connection = self._idle_connection(origin)
            if connection is None:
                connection = await self._connect(origin, timeouts.get("connect"), request)
            try:
                return await self._exchange(connection, origin, request, body, timeouts)
            except _StaleConnection:
                if request.method not in _IDEMPOTENT:
                    raise httpx.RemoteProtocolError(
                        "the server closed the connection without answering",
                        request=request) from None
                # else: once more on a fresh or other idle connection (this one is closed)

    def _idle_connection(self, origin: Origin) -> _Connection | None:
        idle = self._idle.get(origin)
        while idle:
            connection = idle.pop()
            if connection.reusable():
                connection.reused = True
                return connection
            connection.close()
        return None

    async def _connect(self, origin: Origin, timeout: float | None,
                       request: httpx.Request) -> _Connection:
        scheme, host, port = origin
        context = self._context() if scheme == "https" else None
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(
                    host, port, ssl=context, server_hostname=host if context else None,
                    limit=_READ_SIZE)
        except TimeoutError:
            raise httpx.ConnectTimeout(f"no connection to {host}:{port} within {timeout} s",
                                       request=request) from None
        except (OSError, ssl.SSLError) as error:
            raise httpx.ConnectError(f"cannot connect to {host}:{port}: {error}",
                                     request=request) from None
        return _Connection(reader, writer)

    def _context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = httpx.create_ssl_context(verify=self._verify)
        return self._ssl

    async def _exchange(self, connection: _Connection, origin: Origin, request: httpx.Request,
                        body: bytes, timeouts: dict[str, float | None]) -> httpx.Response:
        """Send *request* on *connection*, read the whole answer, keep the connection if it can."""
        conn = connection.h11
        headers = [(b"host", request.url.netloc), *(
            (name, value) for name, value in request.headers.raw if name.lower() != b"host")]
        if body and not any(name.lower() == b"content-length" for name, _ in headers):
            headers.append((b"content-length", str(len(body)).encode()))
        answered = False
        try:
            data = conn.send(h11.Request(method=request.method, target=request.url.raw_path,
                                         headers=headers))
            if body:
                data += conn.send(h11.Data(data=body))
            data += conn.send(h11.EndOfMessage())
            connection.writer.write(data)
            try:
                async with asyncio.timeout(timeouts.get("write")):
                    await connection.writer.drain()
            except TimeoutError:
                connection.close()
                raise httpx.WriteTimeout("the request could not be sent in time",
                                         request=request) from None
            status, reason, response_headers, chunks = 0, b"", [], []
            read_timeout = timeouts.get("read")
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    async with asyncio.timeout(read_timeout):
                        received = await connection.reader.read(_READ_SIZE)
                    if not received and not answered and connection.reused:
                        raise _StaleConnection
                    conn.receive_data(received)
                elif isinstance(event, h11.Response):
                    answered = True
                    status, reason, response_headers = (event.status_code, event.reason,
                                                        list(event.headers))
                elif isinstance(event, h11.InformationalResponse):
                    continue
                elif isinstance(event, h11.Data):
                    chunks.append(bytes(event.data))
                elif isinstance(event, h11.EndOfMessage):
                    break
                elif isinstance(event, h11.ConnectionClosed):
                    raise httpx.RemoteProtocolError("the server closed the connection mid-answer",
                                                    request=request)
        except _StaleConnection:
            connection.close()
            raise
        except TimeoutError:
            connection.close()
            raise httpx.ReadTimeout("no answer in time", request=request) from None
        except h11.RemoteProtocolError as error:
            connection.close()
            if not answered and connection.reused:
                raise _StaleConnection from None
            raise httpx.RemoteProtocolError(f"malformed answer: {error}",
                                            request=request) from None
        except (OSError, h11.LocalProtocolError) as error:
            connection.close()
            if not answered and connection.reused and isinstance(error, ConnectionError):
                raise _StaleConnection from None
            raise httpx.ReadError(f"connection failed: {error}", request=request) from None
        except BaseException:  # cancelled mid-exchange: the connection's state is unknown
            connection.close()
            raise
        self._put_back(origin, connection)
        return httpx.Response(status, headers=response_headers, stream=httpx.ByteStream(
            b"".join(chunks)), request=request, extensions=_extensions(reason))

    def _put_back(self, origin: Origin, connection: _Connection) -> None:
        conn = connection.h11
        if conn.our_state is h11.DONE and conn.their_state is h11.DONE:
            conn.start_next_cycle()
        idle = self._idle.setdefault(origin, deque())
        if self._closed or not connection.reusable() or len(idle) >= self._max_idle:
            connection.close()
            return
        idle.append(connection)

    async def aclose(self) -> None:
        self._closed = True
        for idle in self._idle.values():
            while idle:
                idle.pop().close()
        self._idle.clear()


def _extensions(reason: bytes) -> dict[str, Any]:
    return {"http_version": b"HTTP/1.1", "reason_phrase": reason}
