"""A lean HTTP/1.1 keep-alive transport for httpx: asyncio streams + h11, nothing else.

Role: carry the API client's requests when nothing stands between sitegen and the
service (no proxy), which is the sync's hot path — about one small GET per article.
httpx's default transport (httpcore on AnyIO) spends ~1.9 ms of CPU per such request
on cancel scopes, pool bookkeeping and stream wrappers; this one spends ~0.35 ms, so a
cold sync keeps its request slots busy instead of queueing answers behind the parser.
HTTP parsing is h11's (the parser httpcore itself uses); connections are reused per
origin and a stale keep-alive connection is replaced once, for idempotent methods.

The answer's body is streamed, as httpx's own transports do: the response comes back
once its head is read, and the body is read as the caller iterates it, so the client's
size cap and deadline bound what is buffered (an endless body is never held whole).
A connection goes back to the pool only once its body was read to the end; closed
earlier, it is dropped.

It must never follow redirects, read proxies or cookies, or raise anything but httpx's
own transport errors (the client's retry logic tells them apart); the client bounds
how many requests are in flight, how long an answer may take and how large it may be.
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from collections.abc import AsyncIterator
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
        """Send *request* on *connection* and read the answer's head; the body streams."""
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
            read_timeout = timeouts.get("read")
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    async with asyncio.timeout(read_timeout):
                        received = await connection.reader.read(_READ_SIZE)
                    if not received and connection.reused:
                        raise _StaleConnection
                    conn.receive_data(received)
                elif isinstance(event, h11.Response):
                    answered = True
                    break
                elif isinstance(event, h11.InformationalResponse):
                    continue
                elif isinstance(event, h11.ConnectionClosed):
                    raise httpx.RemoteProtocolError("the server closed the connection mid-answer",
                                                    request=request)
        except BaseException as error:
            raise _failure(connection, request, error, answered) from None
        stream = _Body(self, connection, origin, request, read_timeout)
        return httpx.Response(event.status_code, headers=list(event.headers), stream=stream,
                              request=request, extensions=_extensions(event.reason))

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


class _Body(httpx.AsyncByteStream):
    """The body of one answer, read from its connection as it is iterated."""

    def __init__(self, transport: LeanTransport, connection: _Connection, origin: Origin,
                 request: httpx.Request, read_timeout: float | None) -> None:
        self._transport = transport
        self._connection = connection
        self._origin = origin
        self._request = request
        self._read_timeout = read_timeout
        self._done = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        connection, request = self._connection, self._request
        conn = connection.h11
        try:
            while not self._done:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    async with asyncio.timeout(self._read_timeout):
                        received = await connection.reader.read(_READ_SIZE)
                    conn.receive_data(received)
                elif isinstance(event, h11.Data):
                    yield bytes(event.data)
                elif isinstance(event, h11.EndOfMessage):
                    self._done = True
                    self._transport._put_back(self._origin, connection)
                elif isinstance(event, h11.ConnectionClosed):
                    raise httpx.RemoteProtocolError("the server closed the connection mid-answer",
                                                    request=request)
        except BaseException as error:
            self._done = True
            raise _failure(connection, request, error, answered=True) from None

    async def aclose(self) -> None:
        if not self._done:  # not read to its end: the connection's state is unknown
            self._done = True
            self._connection.close()


def _failure(connection: _Connection, request: httpx.Request, error: BaseException,
             answered: bool) -> BaseException:
    """What a failed exchange raises (the connection is closed): httpx's error, or *error*."""
    connection.close()
    stale = not answered and connection.reused
    if isinstance(error, _StaleConnection | httpx.TransportError):
        return error
    if isinstance(error, TimeoutError):
        return httpx.ReadTimeout("no answer in time", request=request)
    if isinstance(error, h11.RemoteProtocolError):
        if stale:
            return _StaleConnection()
        return httpx.RemoteProtocolError(f"malformed answer: {error}", request=request)
    if isinstance(error, OSError | h11.LocalProtocolError):
        if stale and isinstance(error, ConnectionError):
            return _StaleConnection()
        return httpx.ReadError(f"connection failed: {error}", request=request)
    return error  # cancelled mid-exchange: the connection's state is unknown


def _extensions(reason: bytes) -> dict[str, Any]:
    return {"http_version": b"HTTP/1.1", "reason_phrase": reason}
