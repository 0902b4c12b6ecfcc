"""The preview's HTTP server: serves the last good build, the live-reload script and its events.

Role: answer GET/HEAD over HTTP/1.1 from the served folder through `routing.resolve_target`
(pretty URLs, redirects, the site's 404 page, exact content types, `Cache-Control: no-store`),
inject the live-reload `<script src>` into HTML responses as they are sent, and stream
`ReloadChannel` events at `/__sitegen/events`. A request's line and headers must arrive within
`HEADER_TIMEOUT` (a trickle cannot extend it), a send ends after `SEND_TIMEOUT`, and a client
that disconnects is logged at debug level only. Only requests whose `Host` names the preview
(`routing.host_allowed`) are answered, the event stream too; any other gets a short 403, so a
web page cannot read the preview through a DNS name rebound to loopback. At most
`MAX_CONNECTIONS` connections have a thread (`MAX_STREAMS` of them event streams); one more is
answered 503 at once and closed, so the thread count stays bounded. It must never write a file,
never list a directory, never serve outside the served folder, and never build HTML from error
text (problems travel as JSON; the page script shows them with `textContent`).
"""

from __future__ import annotations

import errno
import html
import io
import logging
import queue
import socket
import socketserver
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from sitegen.errors import ConfigError
from sitegen.preview.fresh import FreshPages
from sitegen.preview.reload import KEEPALIVE_SECONDS, ReloadChannel
from sitegen.preview.routing import (
    RESERVED_PREFIX,
    NotFound,
    Redirect,
    ServeFile,
    content_type,
    host_allowed,
    is_html,
    resolve_target,
    split_target,
)

log = logging.getLogger("sitegen.preview")

EVENTS_PATH = RESERVED_PREFIX + "events"
_ASSETS = {
    RESERVED_PREFIX + "livereload.js": ("livereload.js", "application/javascript; charset=utf-8"),
    RESERVED_PREFIX + "waiting.html": ("waiting.html", "text/html; charset=utf-8"),
}
HEADER_TIMEOUT = 10.0  # seconds for a request's line and headers to arrive
SEND_TIMEOUT = 30.0  # seconds a blocked send may wait for the client to read
#: Connections served at once (each has a thread; an idle one ends after HEADER_TIMEOUT), and
#: how many of them may be event streams (one per open page; they last as long as the page).
MAX_CONNECTIONS = 64
MAX_STREAMS = 32
_DISCONNECTS = (ConnectionError, TimeoutError)  # BrokenPipe, ConnectionReset, ...
_BUSY_TEXT = b"503 The preview is busy: too many connections; retry in a moment\n"
_BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
         b"Retry-After: 1\r\nCache-Control: no-store\r\nConnection: close\r\n"
         b"Content-Length: %d\r\n\r\n%s" % (len(_BUSY_TEXT), _BUSY_TEXT))
_SCRIPT_TAG = '<script src="/__sitegen/livereload.js" data-sitegen-build="{build}" defer></script>'


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


class PreviewHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server that knows the served folder and closes every connection on stop."""

    daemon_threads = False  # server_close() joins every handler thread
    block_on_close = True
    request_queue_size = 256  # a burst of connections waits in the kernel, not dropped

    def __init__(self, host: str, port: int, root: Path, channel: ReloadChannel,
                 fresh: FreshPages | None = None) -> None:
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.given_host = host
        self.root = root
        self.channel = channel
        self.fresh = fresh
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self.streams = threading.BoundedSemaphore(MAX_STREAMS)
        try:
            super().__init__((host, port), _Handler)
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise ConfigError(
                    f"port {port} on {host} is already in use: stop the other server or pass "
                    "--port 0 to pick a free port"
                ) from None
            raise ConfigError(f"cannot listen on {host}:{port} ({error.strerror}): "
                              "check --host and --port") from None

    def server_bind(self) -> None:  # without HTTPServer's reverse DNS lookup (getfqdn)
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)

    @property
    def url(self) -> str:
        """The address to open in a browser."""
        host = f"[{self.server_name}]" if ":" in self.server_name else self.server_name
        return f"http://{host}:{self.server_port}/"

    def allows_host(self, header: str | None) -> bool:
        """Whether a request's `Host` names this server (see `routing.host_allowed`)."""
        return host_allowed(header, self.server_name, self.given_host, self.server_port)

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread for the connection while one of `MAX_CONNECTIONS` is free; else a 503."""
        if not self._slots.acquire(blocking=False):
            log.debug("preview: %s turned away: %d connections open", client_address,
                      MAX_CONNECTIONS)
            try:
                request.settimeout(1.0)  # (a few bytes into a new socket's empty buffer)
                request.sendall(_BUSY)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        with self._connections_lock:
            self._connections.add(request)
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.shutdown_request(request)
            raise

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            held = request in self._connections
            self._connections.discard(request)
        try:
            super().shutdown_request(request)
        finally:
            if held:
                self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (or was too slow) is not an error worth a traceback."""
        error = sys.exc_info()[1]
        if isinstance(error, _DISCONNECTS):
            log.debug("preview: %s went away: %s", client_address, type(error).__name__)
            return
        super().handle_error(request, client_address)

    def close_connections(self) -> None:
        """Wake every handler blocked on an idle keep-alive connection so it can end."""
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _Deadline(io.RawIOBase):
    """The connection's reading side, each read bounded by the time left to a deadline."""

    def __init__(self, connection: socket.socket) -> None:
        self._connection = connection
        self.deadline: float | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the request's headers did not arrive in time")
            self._connection.settimeout(left)
        return self._connection.recv_into(buffer)


class _Handler(BaseHTTPRequestHandler):
    server: PreviewHTTPServer
    protocol_version = "HTTP/1.1"
    server_version = "sitegen-preview"
    sys_version = ""

    def setup(self) -> None:
        super().setup()
        self._reading = _Deadline(self.connection)
        self.rfile = io.BufferedReader(self._reading)

    def handle_one_request(self) -> None:
        # the request line and headers share one deadline (a trickle cannot extend it)
        self._reading.deadline = time.monotonic() + HEADER_TIMEOUT
        super().handle_one_request()

    def parse_request(self) -> bool:
        parsed = super().parse_request()  # reads the headers
        self._reading.deadline = None
        self.connection.settimeout(SEND_TIMEOUT)
        if parsed and not self.server.allows_host(self.headers.get("Host")):
            self.close_connection = True
            self._send(403, b"403 Forbidden: this preview answers only requests addressed to "
                       + self.server.url.encode() + b"\n", "text/plain; charset=utf-8",
                       self.command != "HEAD", {"Connection": "close"})
            return False
        return parsed

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def _refuse(self) -> None:
        self._send(405, b"405 Method Not Allowed\n", "text/plain; charset=utf-8", True,
                   {"Allow": "GET, HEAD"})

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse

    def _answer(self, body: bool) -> None:
        path, query = split_target(self.path)
        if path == EVENTS_PATH:
            self._stream(_reported_path(query))
            return
        if path in _ASSETS:
            name, kind = _ASSETS[path]
            self._send(200, preview_asset(name), kind, body)
            return
        root = self.server.root
        resolution = resolve_target(root, self.path)
        if isinstance(resolution, Redirect):
            self._send(301, b"", "text/plain; charset=utf-8", body,
                       {"Location": resolution.location})
        elif isinstance(resolution, ServeFile):
            if not self._send_fresh(resolution.path, body):
                self._send_file(200, resolution.path, body)
        elif (root / "404.html").is_file():
            self._send_file(404, root / "404.html", body)
        elif not (root / "index.html").is_file() and isinstance(resolution, NotFound):
            # No good build yet: a waiting page whose script shows the problem and reloads.
            page = inject_script(preview_asset("waiting.html"), self.server.channel.build_id)
            self._send(503, page, "text/html; charset=utf-8", body)
        else:
            self._send(404, b"404 Not Found\n", "text/plain; charset=utf-8", body)

    def _send_fresh(self, path: Path, body: bool) -> bool:
        """Serve a page the rebuild in progress rendered ahead (see `fresh.py`), if it did."""
        fresh = self.server.fresh
        if fresh is None or not len(fresh):
            return False
        try:
            rel = path.relative_to(self.server.root).as_posix()
        except ValueError:
            return False
        found = fresh.get(rel)
        if found is None:
            return False
        data, build_id = found
        self._send(200, inject_script(data, build_id), "text/html; charset=utf-8", body)
        return True

    def _send_file(self, status: int, path: Path, body: bool) -> None:
        try:
            data = path.read_bytes()
        except OSError:  # swapped away by a rebuild between resolve and read
            self._send(404, b"404 Not Found\n", "text/plain; charset=utf-8", body)
            return
        kind = content_type(path, data[:1024])
        if is_html(kind):
            data = inject_script(data, self.server.channel.build_id)
        self._send(status, data, kind, body)

    def _send(self, status: int, data: bytes, kind: str, body: bool,
              extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if body and data:
            self.wfile.write(data)

    def _stream(self, page_path: str | None) -> None:
        self.close_connection = True
        if not self.server.streams.acquire(blocking=False):
            self._send(503, b"503 Too many live-reload streams: close some preview tabs\n",
                       "text/plain; charset=utf-8", True, {"Retry-After": "5"})
            return
        try:
            self._events(page_path)
        finally:
            self.server.streams.release()

    def _events(self, page_path: str | None) -> None:
        channel = self.server.channel
        subscription = channel.subscribe(page_path)
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Connection", "close")
            self.send_header("X-Accel-Buffering", "no")
            self.end_headers()
            self.wfile.write(b"retry: 500\n\n")
            self.wfile.flush()
            while True:
                try:
                    event = subscription.get(timeout=KEEPALIVE_SECONDS)
                except queue.Empty:
                    self.wfile.write(b": keep-alive\n\n")
                    self.wfile.flush()
                    continue
                if event is None:
                    return
                self.wfile.write(event.encode())
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, TimeoutError, OSError):
            return
        finally:
            channel.unsubscribe(subscription)


def _reported_path(query: str) -> str | None:
    """The page path a live-reload script reported (`?path=/a/`), if it is a plain URL path."""
    try:
        values = parse_qs(query, max_num_fields=4).get("path")
    except ValueError:
        return None
    if not values or not values[0].startswith("/") or len(values[0]) > 2048:
        return None
    return values[0]
