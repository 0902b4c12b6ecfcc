"""The headers each uploaded object carries, and the redirects `_redirects` asks for.

Role: Content-Type from the file's name (Python's built-in table only, so every machine
gives the same answer; text types with `charset=utf-8`), Cache-Control by the very rule
the `_headers` file states (`emit.headers.cache_control`: immutable for hashed assets,
revalidate for the rest), and, from the output's `_redirects` file (`old new 301`), the
object of each old path with the address it redirects to (S3's website-redirect
metadata). This module must never touch the network, the store or the file system.
"""

from __future__ import annotations

import mimetypes
from urllib.parse import urlsplit

from sitegen.emit.headers import cache_control
from sitegen.emit.manifest import path_problem
from sitegen.emit.redirects import output_path

_TYPES = mimetypes.MimeTypes()  # the built-in table, not /etc/mime.types
_EXTRA = {".webmanifest": "application/manifest+json", ".woff2": "font/woff2",
          ".avif": "image/avif", ".webp": "image/webp", ".mjs": "text/javascript"}
_TEXT_APPS = {"application/json", "application/xml", "application/atom+xml",
              "application/rss+xml", "application/manifest+json", "application/javascript",
              "image/svg+xml"}
BINARY = "application/octet-stream"


def content_type(path: str) -> str:
    """The Content-Type of the output file *path*."""
    name = path.rpartition("/")[2]
    suffix = "." + name.rpartition(".")[2].lower() if "." in name else ""
    kind = _EXTRA.get(suffix) or _TYPES.guess_type(name, strict=False)[0]
    if name in ("_headers", "_redirects"):
        kind = "text/plain"
    if kind is None:
        return BINARY
    if kind.startswith("text/") or kind in _TEXT_APPS:
        return f"{kind}; charset=utf-8"
    return kind


def object_headers(path: str) -> dict[str, str]:
    """`ContentType` and `CacheControl` of the object for *path* (boto3's argument names)."""
    return {"ContentType": content_type(path), "CacheControl": cache_control(path)}


def website_redirects(text: str, site_url: str) -> dict[str, str]:
    """Output path of each old URL in `_redirects` → the absolute address it moved to (the
    first line of a source, as Netlify and Cloudflare Pages read it: the owner's lines of a
    merged `static/_redirects` come first).

    *site_url* is `[site] url`: its path is the prefix `_redirects` lines carry, its
    origin makes the new address absolute (S3 accepts `/path` or an http(s) URL).
    """
    parts = urlsplit(site_url)
    base = parts.path.rstrip("/")
    origin = f"{parts.scheme}://{parts.netloc}"
    found: dict[str, str] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 2 or line.lstrip().startswith("#"):
            continue
        old, new = fields[0], fields[1]
        if base and old.startswith(base + "/"):
            old = old[len(base):]
        if not old.startswith("/") or not new.startswith("/"):
            continue
        key = output_path(old)
        if path_problem(key) is None:
            found.setdefault(key, origin + new)  # the first rule wins, as on the hosts
    return found


__all__ = ["content_type", "object_headers", "website_redirects"]
