"""URL and colour checks: the trust boundary's smallest pieces.

Role: decide whether an untrusted URL (from a block, a markdown link, an author
image) may go into an `href`/`src` attribute, whether it points off-site, where an
image URL of the content is (`service_url`: a relative one at the service), and
whether a cluster colour is a plain hex colour. Allowed: http(s), mailto, and
relative URLs. Everything else (javascript:, data:, vbscript:, file:, anything
with control characters) is refused. This module must never do I/O, log, or
build markup; callers escape what they put in attributes.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urljoin, urlsplit

SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
DEFAULT_COLOUR = "#6b7280"

_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*):")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_HEX_COLOUR = re.compile(r"^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
MAX_URL_LENGTH = 4096
_URL_SAFE = "/:?#[]@!$&'()*+,;=%~-._"


def safe_url(value: str | None) -> str | None:
    """The URL stripped of surrounding spaces when it is safe to link to, else None.

    Browsers drop tabs and newlines inside a scheme ("java\\tscript:"), so any
    control character makes a URL unsafe outright; so do backslashes before the
    first slash-free segment (some browsers read "\\\\host" as "//host", which
    is still http(s), but "java\\script:" tricks are refused by the scheme test).
    """
    if value is None:
        return None
    url = value.strip()
    if not url or len(url) > MAX_URL_LENGTH or _CONTROL.search(url):
        return None
    # Characters a URL may not hold literally (quotes, spaces, <>, non-ASCII...) are
    # percent-encoded, so what goes into an attribute is always a valid URL.
    url = quote(url, safe=_URL_SAFE)
    match = _SCHEME.match(url)
    if match is not None:
        return url if match.group(1).lower() in SAFE_SCHEMES else None
    # No scheme before the first ':' ... but a ':' before any '/', '?' or '#'
    # would make browsers read a scheme we did not see (e.g. "&#106;avascript:").
    head = re.split(r"[/?#]", url, maxsplit=1)[0]
    if ":" in head:
        return None
    return url


def safe_http_url(value: str | None) -> str | None:
    """Like `safe_url`, but only absolute http(s) or root-relative URLs (media sources)."""
    url = safe_url(value)
    if url is None or url.lower().startswith("mailto:"):
        return None
    return url


def is_external(url: str, base_url: str = "") -> bool:
    """True for absolute http(s) URLs (or protocol-relative ones) that leave the site."""
    lowered = url.lower()
    if lowered.startswith("//"):
        lowered = "https:" + lowered
    if not lowered.startswith(("http://", "https://")):
        return False
    if base_url and lowered.startswith(base_url.lower().rstrip("/") + "/"):
        return False
    if base_url and lowered == base_url.lower().rstrip("/"):
        return False
    return True


def host_of(url: str) -> str:
    """The lower-case host of an absolute URL, or "" (never raises)."""
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def safe_colour(value: str | None, default: str = DEFAULT_COLOUR) -> str:
    """A `#rgb` or `#rrggbb` colour (lower-cased), else *default*."""
    if value is None:
        return default
    text = value.strip()
    if not text.startswith("#") and re.fullmatch(r"[0-9a-fA-F]{3}|[0-9a-fA-F]{6}", text):
        text = "#" + text
    return text.lower() if _HEX_COLOUR.match(text) else default


def is_safe_colour(value: str | None) -> bool:
    """True when *value* is already a valid hex colour (used to decide whether to warn)."""
    return value is not None and safe_colour(value, "") != ""


def service_url(url: str, service: str) -> str | None:
    """The absolute http(s) URL an image URL as written stands for: a root-relative one
    (`/media/x.png`) at the service's base URL *service*, a protocol-relative one over
    https, an absolute one as it is; None when it is not http(s) (or names no host)."""
    absolute = urljoin(service.rstrip("/") + "/", url) if url.startswith("/") and not \
        url.startswith("//") else ("https:" + url if url.startswith("//") else url)
    try:
        parts = urlsplit(absolute)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return absolute
