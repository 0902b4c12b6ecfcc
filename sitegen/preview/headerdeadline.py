"""The preview's deadline for each request's line and headers: a listener and an ASGI middleware.

Role: close a connection that has no request under way `timeout` seconds after it opened (or
after its last answer ended), so silent or trickling clients hold nothing for long (uvicorn has
no such deadline: its keep-alive timeout starts only after a first answer, and any byte cancels
it). It sees connections open through the listening socket it wraps (`watch`: asyncio accepts
every connection through that socket object's `accept`) and requests begin and end through its
ASGI middleware (a request reaches the application once its headers have all arrived); the two
meet on the client's address. A connection past its deadline is shut down on the event loop, so
the server's transport sees an end of stream and closes it. Public APIs only: the socket
module, asyncio's loop and ASGI; never an HTTP server's internals. It must never read or write a
request's bytes, and never decide what a request is answered.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from dataclasses import dataclass

from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger("sitegen.preview")

_Address = tuple[str, int]


@dataclass
class _Connection:
    sock: socket.socket
    answering: int = 0
    """Requests of this connection being answered now."""
    armed: int = 0
    """Which deadline counts: an older timer that fires finds a newer number and does nothing."""


class _Listener(socket.socket):
    """A listening socket that tells *deadline* of every connection it accepts."""

    deadline: HeaderDeadline

    def accept(self) -> tuple[socket.socket, object]:
        conn, address = super().accept()
        self.deadline.opened(conn, address)
        return conn, address


def _address(raw: object) -> _Address | None:
    """(host, port) of an accepted address or of an ASGI scope's `client` (None: unknown)."""
    if isinstance(raw, (tuple, list)) and len(raw) >= 2:
        return str(raw[0]), int(raw[1])
    return None


class HeaderDeadline:
    """*app*, with connections closed when no request began *timeout* seconds after they
    opened or after their last answer."""

    def __init__(self, app: ASGIApp, timeout: float) -> None:
        self.app = app
        self.timeout = timeout
        self._open: dict[_Address, _Connection] = {}
        """Connections accepted and not yet found closed (the event loop's thread alone)."""

    def watch(self, sock: socket.socket) -> socket.socket:
        """*sock* (listening) as a socket whose accepted connections get a deadline; *sock*
        itself is detached, the returned socket owns the descriptor."""
        inheritable = sock.get_inheritable()
        listener = _Listener(sock.family, sock.type, sock.proto, fileno=sock.detach())
        listener.set_inheritable(inheritable)
        listener.deadline = self
        return listener

    def opened(self, conn: socket.socket, raw: object) -> None:
        """A connection was accepted (on the event loop's thread): its deadline starts."""
        address = _address(raw)
        if address is None:
            return
        entry = _Connection(conn)
        self._open[address] = entry
        self._arm(address, entry)

    def _arm(self, address: _Address, entry: _Connection) -> None:
        entry.armed += 1
        asyncio.get_running_loop().call_later(self.timeout, self._expire, address, entry,
                                              entry.armed)

    def _expire(self, address: _Address, entry: _Connection, armed: int) -> None:
        if self._open.get(address) is not entry:
            return
        if entry.sock.fileno() == -1:  # closed by the server already: forget it
            del self._open[address]
            return
        if entry.answering or entry.armed != armed:
            return
        del self._open[address]
        log.debug("preview: %s:%d sent no complete request in time", *address)
        try:
            entry.sock.shutdown(socket.SHUT_RDWR)
        except OSError:  # the client went away meanwhile
            pass

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        address = _address(scope.get("client")) if scope["type"] == "http" else None
        entry = self._open.get(address) if address is not None else None
        if address is None or entry is None:
            await self.app(scope, receive, send)
            return
        entry.answering += 1
        entry.armed += 1  # a request began: the deadline armed before it no longer counts
        try:
            await self.app(scope, receive, send)
        finally:
            entry.answering -= 1
            if not entry.answering and self._open.get(address) is entry:
                self._arm(address, entry)
