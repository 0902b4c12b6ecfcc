"""URL → file mapping of the preview server: pretty URLs, redirects, misses, content types.

Role: decide, for one request target, which file of the served folder answers it (or that a
redirect or a 404 does), the way the static host will: `/x/` → `/x/index.html`, `/x` → redirect
to `/x/`, no directory listings. It is pure apart from looking at the served folder (stat, no
writes) and must never return a path outside that folder, whatever the target contains (encoded
`../`, backslashes, NUL bytes, absolute paths, symlinks pointing out). `host_allowed` says
whether a request's `Host` names the preview itself (a web page the user visits must not
read the preview through a DNS name rebound to loopback).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from sitegen.emit.mediatypes import content_type as media_type

# Preview-only resources (the live-reload script, the event stream) live under this prefix;
# a site page at that path would be shadowed in preview only.
RESERVED_PREFIX = "/__sitegen/"


@dataclass(frozen=True)
class ServeFile:
    """Answer with this file (status 200)."""

    path: Path


@dataclass(frozen=True)
class Redirect:
    """Answer with a permanent redirect to this same-origin location."""

    location: str


@dataclass(frozen=True)
class NotFound:
    """Answer with the site's 404 page (or a plain 404 when it has none)."""


Resolution = ServeFile | Redirect | NotFound


def split_target(target: str) -> tuple[str, str]:
    """The (still percent-encoded) path and query of a request target: one starting with
    `/` is a path even as `//x` (never a network-path reference); `http://host/x` keeps its path.
    """
    if target.startswith("/"):
        path, _, query = target.partition("?")
        return path.partition("#")[0], query.partition("#")[0]
    parts = urlsplit(target)
    return parts.path or "/", parts.query


def path_segments(raw_path: str) -> list[str] | None:
    """The decoded segments of a URL path (`.` and empty ones dropped), or None when `..`, a
    backslash or a control character (raw or percent-encoded) makes it unsafe to serve."""
    try:
        decoded = unquote(raw_path, errors="strict")
    except UnicodeDecodeError:
        return None
    segments: list[str] = []
    for segment in decoded.split("/"):
        if segment in ("", "."):
            continue
        if segment == ".." or "\\" in segment or any(ord(ch) < 32 for ch in segment):
            return None
        segments.append(segment)
    return segments


def _inside(root: Path, candidate: Path) -> bool:
    try:
        return candidate.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return False


def resolve_target(root: Path, target: str) -> Resolution:
    """Map a request target to a file under *root*, a redirect, or a miss."""
    raw_path, query = split_target(target)
    segments = path_segments(raw_path)
    if segments is None:
        return NotFound()
    candidate = root.joinpath(*segments)
    if not _inside(root, candidate):
        return NotFound()
    wants_dir = raw_path.endswith("/") or not segments
    try:
        if candidate.is_dir():
            index = candidate / "index.html"
            if not index.is_file() or not _inside(root, index):
                return NotFound()
            if wants_dir:
                return ServeFile(index)
            # Built from the decoded segments, so `//evil.test/x` can never become an
            # off-site (protocol-relative) location.
            location = "/" + "/".join(quote(s, safe="") for s in segments) + "/"
            return Redirect(location + (f"?{query}" if query else ""))
        if candidate.is_file() and not wants_dir:
            return ServeFile(candidate)
    except OSError:
        return NotFound()
    return NotFound()


def content_type(path: Path, head: bytes = b"") -> str:
    """The Content-Type for a served file: the deploy's rule (`emit.mediatypes`), so a
    feed is Atom in the preview and in the bucket alike."""
    return media_type(path.name, head)


def is_html(content_type_value: str) -> bool:
    """Whether a response of this type gets the live-reload script injected."""
    return content_type_value.startswith("text/html")


def _ip(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


def host_allowed(header: str | None, bound: str, given: str, port: int) -> bool:
    """Whether a `Host` header names the preview listening on *bound* (as given: *given*)
    at *port*: that address or `localhost` (with the port, or without), `127.0.0.1` and
    `[::1]` when it listens on loopback, any IP address when it listens on every interface
    (an address cannot be rebound; a DNS name can). Anything else, and no Host, is False."""
    text = (header or "").strip()
    if not text or any(c in text for c in "@/\\?# \t"):
        return False
    try:
        parts = urlsplit("//" + text)
        name, asked_port = parts.hostname, parts.port
    except ValueError:
        return False
    if not name or asked_port not in (None, port):
        return False
    name = name.rstrip(".")
    if name in ("localhost", given.strip("[]").lower()):
        return True
    address, listening = _ip(name), _ip(bound.strip("[]"))
    if address is None or listening is None:
        return False
    if listening.is_unspecified:
        return True
    return address == listening or (listening.is_loopback and address.is_loopback)
