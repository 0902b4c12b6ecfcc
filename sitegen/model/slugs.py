"""Slugs and permalinks: turning untrusted names into safe, unique URL segments.

Role: every URL segment the site uses goes through `slugify` (python-slugify:
ASCII, lower case, hyphens), so no path can leave the output folder whatever a
slug, title or tag contains, and no segment is a Windows device name (`con`, `nul`,
`lpt1`…, which a Windows checkout of the output cannot hold as a folder).
`SlugAllocator` hands out unique slugs in the order it is asked (callers ask in a
deterministic order), remembering the next free suffix of each base so thousands of
equal slugs cost linear time, and reports each repair as a sentence for the caller
to log. This module must never do I/O or log.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from datetime import datetime
from functools import lru_cache

from slugify import slugify as _slugify

from sitegen.errors import ConfigError
from sitegen.model.registry import reserved_segments

MAX_SLUG_LENGTH = 80

#: Names Windows reserves for devices, in any case and with any extension (`CON.txt`):
#: never a path segment of the output, in any namespace.
DEVICE_NAMES = frozenset({"con", "prn", "aux", "nul",
                          *(f"com{n}" for n in range(1, 10)), *(f"lpt{n}" for n in range(1, 10))})

#: First URL segments the site uses beside its page kinds' (pagination, assets, images,
#: the search bundle); `reserved` adds each kind's (`sitegen.model.registry`).
RESERVED = frozenset({
    "page", "static", "media", "index.html", "index", "pagefind",
}) | DEVICE_NAMES


def reserved() -> frozenset[str]:
    """Every first URL segment the site itself uses: an article slug may never be one."""
    return RESERVED | reserved_segments()


def is_device_name(segment: str) -> bool:
    """True when Windows cannot hold *segment* as a file or folder name (`con`, `Nul.txt`)."""
    return segment.split(".", 1)[0].rstrip(" ").lower() in DEVICE_NAMES


def device_safe(segment: str, suffix: str) -> str:
    """*segment*, or `segment-suffix` when it is a Windows device name."""
    return f"{segment}-{suffix}" if is_device_name(segment) else segment


_ALREADY_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def slugify(text: str | None) -> str:
    """A URL-safe slug (`[a-z0-9-]`, at most 80 characters), or "" when nothing is left."""
    if not text:
        return ""
    if len(text) <= MAX_SLUG_LENGTH and _ALREADY_SLUG.fullmatch(text):
        return text  # python-slugify gives such text back unchanged
    return _slugify_cached(text)


@lru_cache(maxsize=32_768)
def _slugify_cached(text: str) -> str:
    return str(_slugify(text, max_length=MAX_SLUG_LENGTH, word_boundary=True))


def short_hash(text: str) -> str:
    """Eight hex characters derived from *text* (for slugs of names with no letters)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


class SlugAllocator:
    """Gives out unique slugs within one namespace; duplicates get `-2`, `-3`, ...

    Windows device names are reserved in every namespace. The next suffix to try is
    remembered per base, so the n-th copy of one slug costs O(1), not O(n).
    """

    def __init__(self, reserved: Iterable[str] = ()) -> None:
        self._taken: set[str] = set(reserved) | DEVICE_NAMES
        self._reserved = frozenset(self._taken)
        self._next: dict[str, int] = {}

    def allocate(self, wanted: str) -> str:
        """*wanted* if free, else the first free `wanted-N` (N ≥ 2)."""
        if wanted not in self._taken and not is_device_name(wanted):
            self._taken.add(wanted)
            return wanted
        n = self._next.get(wanted, 2)  # every wanted-k below n is taken already
        while f"{wanted}-{n}" in self._taken:
            n += 1
        slug = f"{wanted}-{n}"
        self._taken.add(slug)
        self._next[wanted] = n + 1
        return slug

    def is_reserved(self, slug: str) -> bool:
        """True when *slug* is one of the namespace's reserved names."""
        return slug in self._reserved or is_device_name(slug)


def choose_slug(
    raw: str | None, title: str | None, record_id: str, allocator: SlugAllocator, what: str
) -> tuple[str, list[str]]:
    """The record's slug and the repairs made (one sentence each, for warnings).

    A bad or missing slug is derived from the title, then from the id; reserved
    names and duplicates get a numeric suffix.
    """
    wanted, repairs = wanted_slug(raw, title, record_id, what)
    final, more = allocate_slug(wanted, allocator, what)
    return final, repairs + more


def wanted_slug(raw: str | None, title: str | None, record_id: str,
                what: str) -> tuple[str, list[str]]:
    """The slug a record asks for before allocation, and the repairs that made it."""
    repairs: list[str] = []
    slug = slugify(raw)
    if raw is not None and raw.strip() and slug != raw.strip():
        if slug:
            repairs.append(f"{what} has an unsafe slug {raw[:60]!r}; it was cleaned to {slug!r}")
    if not slug:
        slug = slugify(title)
        source = "title"
        if not slug:
            slug = slugify(record_id) or short_hash(record_id)
            source = "id"
        reason = "no slug" if raw is None or not raw.strip() else f"an unusable slug {raw[:60]!r}"
        repairs.append(f"{what} has {reason}; using {slug!r} derived from its {source}")
    return slug, repairs


def allocate_slug(wanted: str, allocator: SlugAllocator, what: str) -> tuple[str, list[str]]:
    """*wanted*, or the free variant the allocator gives, and the repair that made it."""
    final = allocator.allocate(wanted)
    return final, allocation_repairs(wanted, final, allocator.is_reserved(wanted), what)


def allocation_repairs(wanted: str, final: str, reserved: bool, what: str) -> list[str]:
    """The repair sentence of an allocation that gave *final* for *wanted* (none if equal)."""
    if final == wanted:
        return []
    kind = "a reserved name" if reserved else "already used"
    return [f"{what} slug {wanted!r} is {kind}; using {final!r} instead"]


def expand_permalink(
    pattern: str, slug: str, published: datetime, language: str, record_id: str
) -> str:
    """The article URL for `[site] permalink` (placeholders: slug, year, month, day, lang, id)."""
    if pattern.count("{") == 1 and pattern.count("}") == 1 and "{slug}" in pattern:
        return _permalink_path(pattern, pattern.replace("{slug}", slug))  # as format() would
    values = {
        "slug": slug,
        "year": f"{published.year:04d}",
        "month": f"{published.month:02d}",
        "day": f"{published.day:02d}",
        "lang": device_safe(slugify(language) or "und", "lang"),
        "id": device_safe(slugify(record_id) or short_hash(record_id), "id"),
    }
    try:
        url = pattern.format(**values)
    except (KeyError, IndexError, ValueError) as error:
        raise ConfigError(
            f"[site] permalink {pattern!r} uses an unknown placeholder ({error}): use only "
            "{slug}, {year}, {month}, {day}, {lang} and {id}"
        ) from None
    return _permalink_path(pattern, url)


def _permalink_path(pattern: str, url: str) -> str:
    segments = [s for s in url.split("/") if s]
    if any(s in {".", ".."} for s in segments):
        raise ConfigError(f"[site] permalink {pattern!r} must not contain '.' or '..' segments")
    device = next((s for s in segments if is_device_name(s)), None)
    if device is not None:  # the slug and placeholders never are: the pattern's own text
        raise ConfigError(f"[site] permalink {pattern!r} has the segment {device!r}, a name "
                          "Windows reserves for a device: choose another word")
    return "/" + "/".join(segments) + "/"


def url_to_path(url: str) -> str:
    """Output file for a root-relative pretty URL: "/a/b/" → "a/b/index.html"."""
    inner = url.strip("/")
    return f"{inner}/index.html" if inner else "index.html"
