"""The `_headers` file: HTTP headers for hosts that read it (Netlify, Cloudflare Pages).

Role: say how long each kind of file may be cached and which security headers every
response carries. Theme assets under `static/` and the site's images under `media/` have
content-hashed names (see `render.assets`, `images.stage`), so they are cached for a year and
marked immutable (nothing else is ever written there: `emit.ownfiles` refuses an owner's
file in those folders, as the rule cannot tell it apart); Pagefind's scripts and
stylesheets (its UI files, each bundle's `pagefind.js` and worker) keep fixed names, and a
`pagefind.js` older than the index it reads fails (Pagefind says so: "you likely have a
cached pagefind.js file"), so they are cached ten minutes, then revalidated; pages keep the
hosts' own short default (revalidate on every visit: both hosts send
`max-age=0, must-revalidate`), because a second Cache-Control rule on `/*` would be
merged into the assets' rule on both hosts. The Content-Security-Policy allows
exactly what sitegen's pages load: their own stylesheets, scripts (the beacon) and
icons; images and video files from https (article images may live anywhere);
YouTube's privacy-enhanced and Vimeo's players in frames (the themes' video stand-ins
load one on a click); `style` attributes (topic
colours); connections to the site itself (pages make none, but tools such as
Lighthouse fetch robots.txt from the page) and, with a beacon, to the service's
origin only. With `[search]`, scripts may also compile WebAssembly (`'wasm-unsafe-eval'`:
Pagefind's search runs in a wasm module it fetches from the site; no `eval` of text is
allowed). This module must never write files (the writer does) and never read
content.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from sitegen.outputnames import HASHED_FOLDER, MEDIA_FOLDER, SEARCH_FOLDER

#: The players `render.blocks.classify_video` embeds.
FRAME_ORIGINS = ("https://www.youtube-nocookie.com", "https://player.vimeo.com")
IMMUTABLE = "public, max-age=31536000, immutable"
#: What both hosts send for everything else: revalidate on every visit.
REVALIDATE = "max-age=0, must-revalidate"
SEARCH_HASHED = ("fragment", "index", "filter")
_SEARCH_HASHED = re.compile(r"pagefind/[^/]+/(?:" + "|".join(SEARCH_HASHED) + ")/")
#: Pagefind's scripts and stylesheets, which keep their names from version to version:
#: its UI files at `pagefind/`, and each bundle's (`pagefind/<shard>/`) search script.
SEARCH_UI_FILES = ("pagefind-ui.js", "pagefind-ui.css", "pagefind-modular-ui.js",
                   "pagefind-modular-ui.css", "pagefind-component-ui.js",
                   "pagefind-component-ui.css", "pagefind-highlight.js")
SEARCH_BUNDLE_FILES = ("pagefind.js", "pagefind-worker.js")
#: Their Cache-Control: a short while, then asked again.
SHORT = "public, max-age=600, must-revalidate"
_SEARCH_SHORT = re.compile(
    r"pagefind/(?:" + "|".join(map(re.escape, SEARCH_UI_FILES)) + r"|[^/]+/(?:"
    + "|".join(map(re.escape, SEARCH_BUNDLE_FILES)) + r"))$")


def cache_control(path: str) -> str:
    """The Cache-Control of the output file *path* (the rule `_headers` writes as globs).

    `sitegen deploy` sets it on each object it uploads, so a bucket behind a CDN caches
    exactly as Netlify or Cloudflare Pages would with `_headers`.
    """
    hashed = path.startswith((HASHED_FOLDER, MEDIA_FOLDER)) or _SEARCH_HASHED.match(path)
    if hashed:
        return IMMUTABLE
    return SHORT if _SEARCH_SHORT.match(path) else REVALIDATE


def origin_of(url: str) -> str:
    """scheme://host[:port] of an absolute URL ("" when it has none)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""


def content_security_policy(beacon_endpoint: str | None, *, search: bool = False) -> str:
    """The policy for every page (see the module docstring)."""
    connect = origin_of(beacon_endpoint) if beacon_endpoint else ""
    return "; ".join([
        "default-src 'self'",
        "script-src 'self' 'wasm-unsafe-eval'" if search else "script-src 'self'",
        "style-src 'self'",
        "style-src-attr 'unsafe-inline'",
        "img-src 'self' https:",
        "media-src 'self' https:",
        "frame-src " + " ".join(FRAME_ORIGINS),
        f"connect-src 'self'{' ' + connect if connect else ''}",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'self'",
    ])


def render_headers(base_path: str, beacon_endpoint: str | None, *,
                   search: bool = False) -> bytes:
    """The `_headers` file for a site published at *base_path* ("" or "/blog")."""
    base = base_path.rstrip("/")
    lines = [
        "# Written by sitegen: caching and security headers (Netlify, Cloudflare Pages).",
        f"# Pages keep the host's default caching ({REVALIDATE}).",
        f"{base}/*",
        f"  Content-Security-Policy: {content_security_policy(beacon_endpoint, search=search)}",
        "  X-Content-Type-Options: nosniff",
        "  Referrer-Policy: strict-origin-when-cross-origin",
    ]
    search_folders = [f"{SEARCH_FOLDER}:shard/{name}/" for name in SEARCH_HASHED]
    for folder in [HASHED_FOLDER, MEDIA_FOLDER, *(search_folders if search else [])]:
        lines += [f"{base}/{folder}*", f"  Cache-Control: {IMMUTABLE}"]
    search_files = [*SEARCH_UI_FILES, *(f":shard/{name}" for name in SEARCH_BUNDLE_FILES)]
    for name in search_files if search else []:  # (exact paths: no rule above matches them)
        lines += [f"{base}/{SEARCH_FOLDER}{name}", f"  Cache-Control: {SHORT}"]
    lines.append("")
    return "\n".join(lines).encode("utf-8")


__all__ = ["cache_control", "content_security_policy", "origin_of", "render_headers"]
