"""The preview's bound on the requests it answers at once: an ASGI middleware.

Role: count the HTTP requests being answered (from the moment their headers arrived until
their answer ends; an event stream counts as long as it lasts) and answer one beyond
`limit` with a short 503 and `Retry-After`, so a flood of requests cannot pile up work.
Only whole requests count: a connection that has sent nothing, or part of a request, never
reaches the application and takes no place (uvicorn's own `limit_concurrency` counted open
connections, so 80 clients each sending one byte kept every real request at 503). It must
never read a request body, and never decide anything but "busy".
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

_BUSY = b"503 The preview is answering too many requests at once: retry in a moment\n"


class RequestCap:
    """*app*, answering at most *limit* HTTP requests at once (503 beyond)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit
        self.answering = 0
        """HTTP requests being answered now (the event loop's thread alone changes it)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.answering >= self.limit:
            await send({"type": "http.response.start", "status": 503, "headers": [
                (b"content-type", b"text/plain; charset=utf-8"), (b"retry-after", b"1"),
                (b"cache-control", b"no-store"),
                (b"content-length", str(len(_BUSY)).encode())]})
            await send({"type": "http.response.body", "body": _BUSY})
            return
        self.answering += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.answering -= 1
