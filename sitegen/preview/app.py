"""The preview's web application (Starlette): the last good build, the live-reload script, events.

Role: answer GET/HEAD from the served folder through `routing.resolve_target` (pretty URLs,
301 to the slash form, the site's 404 page, exact content types), inject the live-reload
`<script src>` into HTML responses as they are sent (pages rendered ahead by `fresh.py` in
place of their files), serve the waiting page before the first good build, and stream
`ReloadChannel` events at `/__sitegen/events` (at most `MAX_STREAMS` at once). Every answer
says `Cache-Control: no-store`. Only requests whose `Host` names the preview
(`routing.host_allowed`) are answered, the event stream too; any other gets a short 403, so
a web page cannot read the preview through a DNS name rebound to loopback. Starlette's
`StaticFiles(html=True)` is not used as is: it serves the 404 page and redirects outside its
`file_response` hook (so neither would carry the script), answers 307 with an absolute URL and
types files by extension only (a feed is `application/xml`, not Atom). It must never write a
file, list a directory, serve outside the served folder, or build HTML from error text
(problems travel as JSON; the page script shows them with `textContent`).
"""

from __future__ import annotations

import asyncio
import html
import queue
from collections.abc import AsyncIterator, Awaitable, Callable
from importlib import resources
from pathlib import Path
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sitegen.preview.fresh import FreshPages
from sitegen.preview.reload import KEEPALIVE_SECONDS, ReloadChannel, Subscription
from sitegen.preview.routing import (
    RESERVED_PREFIX,
    NotFound,
    Redirect,
    ServeFile,
    content_type,
    is_html,
    resolve_target,
)

EVENTS_PATH = RESERVED_PREFIX + "events"
#: Event streams open at once (one per open page; they last as long as the page).
MAX_STREAMS = 32
_HTML = "text/html; charset=utf-8"
_TEXT = "text/plain; charset=utf-8"
_SCRIPT_TAG = '<script src="/__sitegen/livereload.js" data-sitegen-build="{build}" defer></script>'
_ALWAYS = [(b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff")]


def preview_asset(name: str) -> bytes:
    """A file of the preview's own static folder (package data)."""
    return resources.files("sitegen.preview").joinpath("static", name).read_bytes()


def inject_script(document: bytes, build_id: str) -> bytes:
    """*document* with the live-reload script tag before its last `</body>` (or at the end)."""
    tag = _SCRIPT_TAG.replace("{build}", html.escape(build_id, quote=True)).encode("utf-8")
    at = document.lower().rfind(b"</body")
    if at < 0:
        return document + tag
    return document[:at] + tag + document[at:]


class _Guard:
    """Refuses a foreign `Host` (403) and methods but GET/HEAD (405); marks every answer
    `no-store`/`nosniff`. The outermost layer: nothing is looked at before it."""

    def __init__(self, app: ASGIApp, allows_host: Callable[[str | None], bool], url: str) -> None:
        self.app = app
        self.allows_host = allows_host
        self.refusal = ("403 Forbidden: this preview answers only requests addressed to "
                        f"{url}\n")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        host = next((value.decode("latin-1") for name, value in scope["headers"]
                     if name == b"host"), None)
        answer: Response | None = None
        if not self.allows_host(host):
            answer = PlainTextResponse(self.refusal, 403, {"Connection": "close"}, _TEXT)
        elif scope["method"] not in ("GET", "HEAD"):
            answer = PlainTextResponse("405 Method Not Allowed\n", 405, {"Allow": "GET, HEAD"},
                                       _TEXT)

        async def marked(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_ALWAYS]
            await send(message)

        await (answer or self.app)(scope, receive, marked)


class _Site:
    """The served folder's answers (a sync endpoint: Starlette runs it in its thread pool)."""

    def __init__(self, root: Path, channel: ReloadChannel, fresh: FreshPages | None) -> None:
        self.root = root
        self.channel = channel
        self.fresh = fresh
        self.waiting = preview_asset("waiting.html")

    def answer(self, request: Request) -> Response:
        """The response to one GET/HEAD of the site (the Host was checked)."""
        target = request.scope["raw_path"].decode("latin-1")
        if request.scope["query_string"]:
            target += "?" + request.scope["query_string"].decode("latin-1")
        resolution = resolve_target(self.root, target)
        if isinstance(resolution, Redirect):
            return Response(b"", 301, {"Location": resolution.location}, _TEXT)
        if isinstance(resolution, ServeFile):
            return self._fresh(resolution.path) or self._file(200, resolution.path)
        if (self.root / "404.html").is_file():
            return self._file(404, self.root / "404.html")
        if not (self.root / "index.html").is_file() and isinstance(resolution, NotFound):
            # No good build yet: a waiting page whose script shows the problem and reloads.
            return Response(inject_script(self.waiting, self.channel.build_id), 503,
                            media_type=_HTML)
        return PlainTextResponse("404 Not Found\n", 404, media_type=_TEXT)

    def _fresh(self, path: Path) -> Response | None:
        """A page the rebuild in progress rendered ahead (see `fresh.py`), if it did."""
        if self.fresh is None or not len(self.fresh):
            return None
        try:
            found = self.fresh.get(path.relative_to(self.root).as_posix())
        except ValueError:
            return None
        if found is None:
            return None
        data, build_id = found
        return Response(inject_script(data, build_id), 200, media_type=_HTML)

    def _file(self, status: int, path: Path) -> Response:
        try:
            with path.open("rb") as file:
                head = file.read(1024)
                kind = content_type(path, head)
                if not is_html(kind):
                    return FileResponse(path, status_code=status, media_type=kind)
                data = head + file.read()
        except OSError:  # swapped away by a rebuild between resolve and read
            return PlainTextResponse("404 Not Found\n", 404, media_type=_TEXT)
        return Response(inject_script(data, self.channel.build_id), status, media_type=kind)


class _Events:
    """`/__sitegen/events`: the channel's events as Server-Sent Events, one stream per page."""

    def __init__(self, channel: ReloadChannel) -> None:
        self.channel = channel
        self.open = 0  # streams open now (counted on the event loop's one thread)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.open >= MAX_STREAMS:
            busy = PlainTextResponse("503 Too many live-reload streams: close some preview tabs\n",
                                     503, {"Retry-After": "5"}, _TEXT)
            await busy(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        ready = asyncio.Event()

        def wake() -> None:  # called from the thread that published
            try:
                loop.call_soon_threadsafe(ready.set)
            except RuntimeError:  # the server's loop is closed: the stream is over
                pass

        subscription = self.channel.subscribe(_reported_path(scope["query_string"]), wake)
        self.open += 1
        try:
            stream = StreamingResponse(_events(subscription, ready), 200,
                                       {"X-Accel-Buffering": "no", "Connection": "close"},
                                       "text/event-stream; charset=utf-8")
            await stream(scope, receive, send)
        finally:
            self.open -= 1
            self.channel.unsubscribe(subscription)


async def _events(subscription: Subscription, ready: asyncio.Event) -> AsyncIterator[bytes]:
    yield b"retry: 500\n\n"
    while True:
        ready.clear()  # before looking: a put after this sets it again
        try:
            event = subscription.get_nowait()
        except queue.Empty:
            try:
                await asyncio.wait_for(ready.wait(), KEEPALIVE_SECONDS)
            except TimeoutError:
                yield b": keep-alive\n\n"
            continue
        if event is None:
            return
        yield event.encode()


def _reported_path(query: bytes) -> str | None:
    """The page path a live-reload script reported (`?path=/a/`), if it is a plain URL path."""
    try:
        values = parse_qs(query.decode("latin-1"), max_num_fields=4).get("path")
    except ValueError:
        return None
    if not values or not values[0].startswith("/") or len(values[0]) > 2048:
        return None
    return values[0]


def _asset(name: str, kind: str) -> Callable[[Request], Awaitable[Response]]:
    data = preview_asset(name)

    async def answer(request: Request) -> Response:
        return Response(data, media_type=kind)

    return answer


def create_app(root: Path, channel: ReloadChannel, fresh: FreshPages | None,
               allows_host: Callable[[str | None], bool], url: str) -> ASGIApp:
    """The preview of *root* for the server at *url* (whose `Host` check is *allows_host*)."""
    routes = [
        Route(EVENTS_PATH, _Events(channel)),
        Route(RESERVED_PREFIX + "livereload.js",
              _asset("livereload.js", "application/javascript; charset=utf-8")),
        Route(RESERVED_PREFIX + "waiting.html", _asset("waiting.html", _HTML)),
        Route("/{path:path}", _Site(root, channel, fresh).answer),
    ]
    return _Guard(Starlette(routes=routes), allows_host, url)
