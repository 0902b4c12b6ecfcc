"""Atom feeds: the site's newest articles (and per agent, cluster, tag) as `feed.xml`.

Role: turn small, already-decided inputs (`FeedInfo`, `FeedEntry`) into Atom
1.0 bytes. The XML is written as text, byte for byte what ElementTree writes
for the same tree (a test holds the two equal), with ElementTree's escaping of
every title, name, attribute and body; full article HTML goes in
`<content type="html">` as escaped text, and
`xml:base` lets readers resolve the site-relative links inside it. Dates come
from the content only (`updated` is the newest entry's update time), never the
wall clock; an empty feed uses SOURCE_DATE_EPOCH, or the Unix epoch. Output is
deterministic. An entry carries at most `MAX_CATEGORIES` categories: an article is in
each of its tags' feeds, so an entry repeating all its tags in every one of them grows
with the square of the tag count. This module must never do I/O and never trust entry
text to be valid XML (characters XML 1.0 forbids are dropped).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from sitegen import __version__

ATOM_NS = "http://www.w3.org/2005/Atom"
XML_NS = "http://www.w3.org/XML/1998/namespace"
MAX_CATEGORIES = 50  # the model keeps as many tags per article (sitegen.model.site.MAX_TAGS)
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class FeedEntry:
    """One article as a feed entry; URLs absolute, HTML already rendered and sanitised."""

    article_id: str
    url: str
    title: str
    updated: datetime | None
    published: datetime | None = None
    author: str | None = None
    summary: str | None = None
    content_html: str | None = None
    categories: tuple[str, ...] = ()
    language: str | None = None


@dataclass(frozen=True, slots=True)
class FeedInfo:
    """The feed itself: what it is about and where it and its page live (absolute URLs)."""

    title: str
    page_url: str
    feed_url: str
    site_url: str
    subtitle: str = ""
    language: str = "en"
    author: str = ""
    entries: tuple[FeedEntry, ...] = field(default_factory=tuple)


def build_date() -> datetime:
    """The one build date sitegen ever uses: SOURCE_DATE_EPOCH when set, else the epoch."""
    raw = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    try:
        return datetime.fromtimestamp(int(raw), UTC)
    except (ValueError, OverflowError, OSError):
        return datetime.fromtimestamp(0, UTC)


#: atom_date's results per process (equal aware datetimes are the same instant, and a naive
#: one never equals an aware one, so the datetime alone is the key). Bounded.
_ATOM_DATES: dict[datetime, str] = {}
_NO_OFFSET = timedelta(0)


def atom_date(value: datetime) -> str:
    """RFC 3339 in UTC with a Z, seconds precision (stable across platforms)."""
    text = _ATOM_DATES.get(value)
    if text is None:
        moment = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        if moment.utcoffset() != _NO_OFFSET:
            moment = moment.astimezone(UTC)
        # (isoformat, not strftime: a quarter faster, and the year always has four digits)
        text = moment.isoformat(timespec="seconds")[:19] + "Z"
        if len(_ATOM_DATES) < 65536:
            _ATOM_DATES[value] = text
    return text


def clean_text(text: str) -> str:
    """Drop characters XML 1.0 cannot carry (control characters, lone surrogates)."""
    return _INVALID_XML.sub("", text)


def entry_id(entry: FeedEntry, site_url: str) -> str:
    """A permanent id that survives slug changes: a tag URI on the site's host and article id."""
    host = urlsplit(site_url).hostname or "localhost"
    year = (entry.published or entry.updated or build_date()).astimezone(UTC).year
    return f"tag:{host},{year}:article:{clean_text(entry.article_id)}"


#: Escaped article bodies per process: an article is in the site's feed, its agent's, its
#: topic's and each of its tags' (newest 20 of each), so a body is escaped once, not 4-10
#: times. Keyed by the body text itself; bounded to _ESCAPED_CHARS characters in all.
_ESCAPED: dict[str, str] = {}
_ESCAPED_CHARS = 8_000_000
_LONG = 512


def _text(text: str) -> str:
    """Element text as ElementTree escapes it (after dropping what XML cannot carry)."""
    global _ESCAPED_CHARS
    if len(text) < _LONG:
        return _escape_text(text)
    escaped = _ESCAPED.get(text)
    if escaped is None:
        escaped = _escape_text(text)
        if _ESCAPED_CHARS >= len(text) + len(escaped):
            _ESCAPED_CHARS -= len(text) + len(escaped)
            _ESCAPED[text] = escaped
    return escaped


def escape_xml_text(text: str) -> str:
    """&, < and > escaped: what ElementTree (and `xml.sax.saxutils.escape`) escape in text.

    Written out because `xml.sax.saxutils` imports `urllib.request`, and so `http.client`
    and `ssl`: ~20 ms of every offline build's start for three `str.replace` calls.
    """
    return text.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;")


def _escape_text(text: str) -> str:
    return escape_xml_text(clean_text(text))


_ATTRIBUTE_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"),
                      ("\r", "&#13;"), ("\n", "&#10;"), ("\t", "&#09;"))


def _attribute(text: str) -> str:
    """An attribute value as ElementTree escapes it."""
    for raw, escaped in _ATTRIBUTE_ESCAPES:
        if raw in text:
            text = text.replace(raw, escaped)
    return text


def _element(indent: str, tag: str, text: str | None = None, **attrs: str) -> str:
    """One childless element on its own line (`<tag ... />` when it has no text)."""
    opened = indent + "<" + tag + "".join(
        f' {name}="{_attribute(value)}"' for name, value in attrs.items())
    body = _text(text) if text else ""
    if not body:
        return opened + " />"
    return f"{opened}>{body}</{tag}>"


def feed_updated(entries: Sequence[FeedEntry]) -> datetime:
    """The newest entry update (or publication) time; the build date when there is none."""
    dates = [d for e in entries for d in (e.updated, e.published) if d is not None]
    return max(dates) if dates else build_date()


def render_atom(feed: FeedInfo) -> bytes:
    """The Atom 1.0 document of *feed*, entries in the order given (newest first)."""
    lines = [
        '<?xml version="1.0" encoding="utf-8"?>',
        f'<feed xmlns="{ATOM_NS}" xml:lang="{_attribute(feed.language or "en")}" '
        f'xml:base="{_attribute(feed.site_url)}">',
        _element("  ", "title", feed.title),
    ]
    if feed.subtitle:
        lines.append(_element("  ", "subtitle", feed.subtitle))
    lines += [
        _element("  ", "link", href=feed.feed_url, rel="self", type="application/atom+xml"),
        _element("  ", "link", href=feed.page_url, rel="alternate", type="text/html"),
        _element("  ", "id", feed.feed_url),
        _element("  ", "updated", atom_date(feed_updated(feed.entries))),
        "  <author>", _element("    ", "name", feed.author or feed.title), "  </author>",
        _element("  ", "generator", "sitegen", version=__version__),
    ]
    for entry in feed.entries:
        _entry(lines, entry, feed.site_url)
    lines.append("</feed>\n")
    return "\n".join(lines).encode("utf-8")


def _entry(lines: list[str], entry: FeedEntry, site_url: str) -> None:
    if entry.language:
        lines.append(f'  <entry xml:lang="{_attribute(entry.language)}">')
    else:
        lines.append("  <entry>")
    pad = "    "
    lines.append(_element(pad, "title", entry.title or entry.url, type="text"))
    lines.append(_element(pad, "link", href=entry.url, rel="alternate", type="text/html"))
    lines.append(_element(pad, "id", entry_id(entry, site_url)))
    updated = entry.updated or entry.published or build_date()
    lines.append(_element(pad, "updated", atom_date(updated)))
    if entry.published is not None:
        lines.append(_element(pad, "published", atom_date(entry.published)))
    if entry.author:
        lines += [pad + "<author>", _element(pad + "  ", "name", entry.author), pad + "</author>"]
    for term in entry.categories[:MAX_CATEGORIES]:
        lines.append(_element(pad, "category", term=clean_text(term)))
    if entry.summary:
        lines.append(_element(pad, "summary", entry.summary, type="text"))
    if entry.content_html is not None:
        lines.append(_element(pad, "content", entry.content_html, type="html"))
    lines.append("  </entry>")
