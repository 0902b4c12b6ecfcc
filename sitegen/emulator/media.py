"""Media of the emulated workspaces, served where their records point.

Role: serve `/media/demo/<name>` from the packaged `sitegen/emulator/data/media/` folder
(`importlib.resources`, so it works from a wheel), and `/media/generated/<name>.jpg`, the
images the generator names, drawn by `drawn.py`; no key, no quota, no faults. Only plain file
names are served, so a request can never reach outside that folder. It must never write
anything.
"""

from __future__ import annotations

import asyncio
import mimetypes
import re
from importlib import resources

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from sitegen.emulator.drawn import drawn_jpeg
from sitegen.emulator.state import EmulatorState

MEDIA_PATH = "/media/demo/{name}"
GENERATED_PATH = "/media/generated/{name}"
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_GENERATED_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,120}\.jpg$")
_TYPES = {".svg": "image/svg+xml", ".webp": "image/webp", ".avif": "image/avif"}


def _read(name: str) -> bytes | None:
    resource = resources.files("sitegen.emulator").joinpath("data", "media", name)
    try:
        return resource.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _not_found() -> Response:
    return JSONResponse({"error": "Not Found", "details": "No such media file."},
                        status_code=404)


def _cacheable(content: bytes, media_type: str) -> Response:
    return Response(content, media_type=media_type, headers={
        "Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"})


async def generated_image(request: Request) -> Response:
    """GET /media/generated/{name}.jpg: the image a generated workspace names, drawn."""
    state: EmulatorState = request.app.state.emulator
    state.calls[f"GET {GENERATED_PATH}"] += 1
    name = request.path_params["name"]
    if not _GENERATED_NAME.match(name):
        return _not_found()
    return _cacheable(await asyncio.to_thread(drawn_jpeg, name), "image/jpeg")


async def media_file(request: Request) -> Response:
    """GET /media/demo/{name}: the file, cacheable, or a 404 in the service's error shape."""
    state: EmulatorState = request.app.state.emulator
    state.calls[f"GET {MEDIA_PATH}"] += 1
    name = request.path_params["name"]
    content = _read(name) if _SAFE_NAME.match(name) and ".." not in name else None
    if content is None:
        return _not_found()
    suffix = name[name.rfind("."):].lower() if "." in name else ""
    media_type = _TYPES.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"
    return _cacheable(content, media_type)
