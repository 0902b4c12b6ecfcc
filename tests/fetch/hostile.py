"""A small misbehaving HTTP/1.1 server on loopback, in a thread, for the trust tests.

`Hostile(reply)` listens on 127.0.0.1 (a real socket, no mocks); `reply(request)` gives
what to send for each request: bytes written at once, or an iterable of bytes written
and flushed one by one (it may sleep between them: a trickle, an endless body). Every
request's method, target and headers are kept in `requests`, so a test can check what
reached the server (the key, or nothing at all). `good_v2` answers a tiny valid v2
workspace, the base the misbehaving answers replace a part of.
"""

from __future__ import annotations

import json
import socketserver
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

WS = "65f0c0ffee0123456789abcd"
AGENT = "65f0a0000000000000000001"


@dataclass
class Request:
    method: str
    target: str
    headers: dict[str, str]

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def query(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(urlsplit(self.target).query).items()}


Reply = bytes | Iterable[bytes]


def answer(status: int, body: bytes, headers: dict[str, str] | None = None,
           kind: str = "application/json") -> bytes:
    head = [f"HTTP/1.1 {status} X", f"content-type: {kind}", f"content-length: {len(body)}",
            *(f"{name}: {value}" for name, value in (headers or {}).items())]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def json_answer(data: Any, status: int = 200) -> bytes:
    return answer(status, json.dumps(data).encode())


def redirect(location: str, status: int = 307) -> bytes:
    return answer(status, b"", {"location": location})


def trickle(every: float) -> Iterator[bytes]:
    """A head at once, then a small JSON body, one byte every *every* seconds."""
    body = b'{"articles":[]}'
    yield (f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
           f"content-length: {len(body)}\r\n\r\n").encode()
    for byte in body:
        time.sleep(every)
        yield bytes([byte])


def endless_chunks(chunk: int = 65536, limit: int = 96 * 1024 * 1024) -> Iterator[bytes]:
    """A chunked body that goes on (up to *limit* bytes, so a broken client ends too)."""
    yield b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
    piece = f"{chunk:x}\r\n".encode() + b"[" * chunk + b"\r\n"
    for _ in range(limit // chunk):
        yield piece
    yield b"0\r\n\r\n"


def _page(key: str, records: list[dict[str, Any]], query: dict[str, str]) -> dict[str, Any]:
    skip, limit = int(query.get("skip", 0)), int(query.get("limit", 20))
    chunk = records[skip:skip + limit]
    total = len(records)
    return {key: chunk, "pagination": {
        "skip": skip, "limit": limit, "totalCount": total,
        "totalPages": max(1, -(-total // limit)), "currentPage": skip // limit + 1,
        "hasNextPage": skip + limit < total, "hasPrevPage": skip > 0}}


def article(number: int) -> dict[str, Any]:
    return {
        "id": f"65f0b0000000000000{number:06d}", "workspaceId": WS, "agentId": AGENT,
        "clusterId": None, "authorIdentityId": None, "title": f"Article {number}",
        "slug": f"article-{number}", "description": f"About {number}",
        "content": f"# Article {number}\n\nBody {number}.", "status": "published",
        "language": "en", "tags": ["t"], "blocks": [],
        "createdAt": f"2024-03-01T10:{number // 60 % 60:02d}:{number % 60:02d}.000Z",
        "updatedAt": "2024-04-01T10:00:00.000Z",
    }


def good_v2(request: Request, articles: list[dict[str, Any]]) -> bytes:
    """A valid answer of a tiny v2 workspace (404 for anything else)."""
    base = f"/api/v2/workspaces/{WS}"
    path, query = request.path, request.query
    if path == base:
        return json_answer({"workspace": {"id": WS, "name": "Hostile"}})
    if path == base + "/agents":
        return json_answer(_page("agents", [{"id": AGENT, "name": "Writer"}], query))
    if path == base + "/articles":
        return json_answer(_page("articles", articles, query))
    for key, route in (("clusters", "clusters"), ("authorIdentities", "author-identities"),
                       ("socialPosts", "social-posts")):
        if path == f"{base}/{route}":
            return json_answer(_page(key, [], query))
    if path == base + "/digest":
        return json_answer({"digest": {"workspaceId": WS, "enabled": False,
                                       "frequency": "weekly", "subject": "News",
                                       "senderName": "Hostile"}})
    if path.startswith(base + "/articles/"):
        wanted = path.rsplit("/", 1)[1]
        for record in articles:
            if record["id"] == wanted:
                return json_answer({"article": record})
    return json_answer({"error": "Not Found", "details": path}, 404)


@dataclass
class Hostile:
    """The server: `url`, the `requests` it received, `close()` (also a context manager)."""

    reply: Callable[[Request], Reply]
    requests: list[Request] = field(default_factory=list)

    def __post_init__(self) -> None:
        owner = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                try:
                    while self._one():
                        pass
                except OSError:
                    pass

            def _one(self) -> bool:
                line = self.rfile.readline(65537)
                if not line.strip():
                    return False
                method, target, _ = line.decode("latin-1").split(" ", 2)
                headers: dict[str, str] = {}
                while (header := self.rfile.readline(65537)) not in (b"\r\n", b"\n", b""):
                    name, _, value = header.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length", "0") or 0)
                if length:
                    self.rfile.read(length)
                request = Request(method, target, headers)
                owner.requests.append(request)
                reply = owner.reply(request)
                if isinstance(reply, bytes):
                    self.wfile.write(reply)
                    self.wfile.flush()
                    return True
                for part in reply:
                    self.wfile.write(part)
                    self.wfile.flush()
                return True

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Hostile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
