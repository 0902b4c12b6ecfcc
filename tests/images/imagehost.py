"""Test helper: a fake image host on 127.0.0.1 (a real HTTP server in a thread).

It serves real images made with Pillow and every kind of trouble the images stage must
survive, and counts the requests each path gets.
"""

from __future__ import annotations

import io
import struct
import threading
import time
import zlib
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from PIL import Image

#: Twice the images timeout of `sites.config`: a slow host stays slow, even on a busy machine.
SLOW_SECONDS = 4.0


def png(width: int = 64, height: int = 48, colour: tuple[int, int, int] = (20, 120, 200)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(out, "PNG")
    return out.getvalue()


def rotated_jpeg() -> bytes:
    """A 60×20 JPEG whose EXIF says "rotate 90° clockwise" (orientation 6): shown 20×60."""
    image = Image.new("RGB", (60, 20), (200, 40, 40))
    image.paste((40, 200, 40), (0, 0, 10, 20))  # a green band at the stored left edge
    exif = Image.Exif()
    exif[0x0112] = 6
    exif[0x010F] = "Camera Maker"  # Make: must not survive
    out = io.BytesIO()
    image.save(out, "JPEG", exif=exif.tobytes(), quality=95)
    return out.getvalue()


def webp() -> bytes:
    out = io.BytesIO()
    Image.new("RGBA", (40, 40), (10, 200, 90, 128)).save(out, "WEBP")
    return out.getvalue()


def bomb_png(size: int = 20_000) -> bytes:
    """A tiny PNG whose header declares size×size pixels (its data is cut short)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(b"\x00" * 1024)) + chunk(b"IEND", b""))


SVG = (b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">'
       b'<script>alert(1)</script><rect width="10" height="10"/></svg>')


@dataclass
class ImageHost:
    """Paths → (status, headers, body); `hits` counts requests by path."""

    port: int = 0
    hits: Counter[str] = field(default_factory=Counter)
    credentials: int = 0  #: requests that carried a key, an auth header or a cookie
    routes: dict[str, tuple[int, dict[str, str], bytes]] = field(default_factory=dict)
    #: Set when the host stops: a path served with `x-hang` answers nothing until then.
    released: threading.Event = field(default_factory=threading.Event)

    @property
    def origin(self) -> str:
        """The host's origin (`[api] url` of a site whose images it serves)."""
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        return f"{self.origin}{path}"


def default_routes() -> dict[str, tuple[int, dict[str, str], bytes]]:
    return {
        "/a.png": (200, {"content-type": "image/png", "etag": '"a1"'}, png()),
        "/wide.png": (200, {"content-type": "image/png"}, png(2000, 1000)),
        "/rot.jpg": (200, {"content-type": "image/jpeg"}, rotated_jpeg()),
        "/c.webp": (200, {"content-type": "image/webp"}, webp()),
        "/evil.svg": (200, {"content-type": "image/svg+xml"}, SVG),
        "/bomb.png": (200, {"content-type": "image/png"}, bomb_png()),
        "/text.jpg": (200, {"content-type": "image/jpeg"}, b"hello, I am text\n" * 10),
        "/slow.png": (200, {"content-type": "image/png", "x-slow": "1"}, png()),
        "/to-file.png": (302, {"location": "file:///etc/passwd"}, b""),
        "/to-metadata.png": (302, {"location": "http://169.254.169.254/latest/meta-data"}, b""),
    }


@contextmanager
def image_host(routes: dict[str, tuple[int, dict[str, str], bytes]] | None = None
               ) -> Iterator[ImageHost]:
    host = ImageHost(routes=routes if routes is not None else default_routes())

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            host.hits[self.path] += 1
            sent = {k.lower() for k in self.headers}
            if sent & {"x-api-key", "authorization", "cookie"}:
                host.credentials += 1
            status, headers, body = host.routes.get(self.path, (404, {}, b"not found"))
            if headers.get("x-slow"):
                time.sleep(SLOW_SECONDS)
            if headers.get("x-delay"):  # (seconds before the answer starts)
                time.sleep(float(headers["x-delay"]))
            if headers.get("x-hang"):  # (a host that never answers)
                host.released.wait(600)
                return
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: object) -> None:
            pass

    class Server(ThreadingHTTPServer):
        request_queue_size = 64  # (the default 5 drops concurrent connections' SYNs)

    server = Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    host.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield host
    finally:
        host.released.set()
        server.shutdown()
        server.server_close()
