"""The Content-Type of each file of the output: one answer for the preview and `sitegen deploy`.

Role: name a file's media type from its name, through sitegen's own table of the types a
site holds, then Python's built-in table (never the machine's `/etc/mime.types`, so every
machine gives the same answer); an `.xml` file by its first bytes when they are given (an
Atom feed is `application/atom+xml`, an RSS one `application/rss+xml`, anything else, the
sitemap too, `application/xml`). Text types carry `charset=utf-8`, as sitegen writes
them. The preview serves and the deploy uploads by this one rule, so a feed is Atom in
both. This module must never read a file, touch the network or know where a file goes.
"""

from __future__ import annotations

import mimetypes

__all__ = ["BINARY", "content_type"]

BINARY = "application/octet-stream"
_BUILT_IN = mimetypes.MimeTypes()  # the built-in table only, not /etc/mime.types
#: The types a site holds, where the built-in table says nothing or something older.
_TYPES = {
    ".html": "text/html", ".htm": "text/html", ".css": "text/css", ".txt": "text/plain",
    ".js": "text/javascript", ".mjs": "text/javascript", ".json": "application/json",
    ".map": "application/json", ".webmanifest": "application/manifest+json",
    ".svg": "image/svg+xml", ".png": "image/png", ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp", ".avif": "image/avif",
    ".ico": "image/x-icon", ".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf",
    ".otf": "font/otf", ".atom": "application/atom+xml", ".rss": "application/rss+xml",
    ".xml": "application/xml", ".xsl": "application/xslt+xml", ".pdf": "application/pdf",
    ".mp4": "video/mp4", ".webm": "video/webm", ".wasm": "application/wasm",
}
#: Host files read by Netlify and Cloudflare Pages: plain text wherever they are served.
_PLAIN = ("_headers", "_redirects")
#: Types that are text though not `text/*`: they get the charset too.
_TEXT_APPS = frozenset({
    "application/json", "application/xml", "application/atom+xml", "application/rss+xml",
    "application/xslt+xml", "application/manifest+json", "image/svg+xml"})
_ATOM = b"http://www.w3.org/2005/Atom"


def _xml_kind(head: bytes) -> str:
    """An XML file's type by its first bytes: Atom, RSS or plain XML."""
    sample = head[:1024].lstrip(b"\xef\xbb\xbf \t\r\n")
    if b"<feed" in sample and _ATOM in sample:
        return "application/atom+xml"
    if b"<rss" in sample:
        return "application/rss+xml"
    return "application/xml"


def content_type(name: str, head: bytes = b"") -> str:
    """The Content-Type of the output file *name* (a path or its last part); *head*, its
    first bytes, tells an `.xml` feed from other XML."""
    name = name.replace("\\", "/").rpartition("/")[2]
    suffix = "." + name.rpartition(".")[2].lower() if "." in name else ""
    if name in _PLAIN:
        kind: str | None = "text/plain"
    elif suffix == ".xml":
        kind = _xml_kind(head)
    else:
        kind = _TYPES.get(suffix) or _BUILT_IN.guess_type(name, strict=False)[0]
    if kind is None:
        return BINARY
    if kind.startswith("text/") or kind in _TEXT_APPS:
        return f"{kind}; charset=utf-8"
    return kind
