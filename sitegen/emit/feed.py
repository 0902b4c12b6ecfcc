"""Atom feeds: the site's newest articles (and per agent, cluster, tag) as `feed.xml`.

Role: turn small, already-decided inputs (`FeedInfo`, `FeedEntry`) into Atom
1.0 bytes. XML is built with ElementTree, so every title, name and body is
escaped; full article HTML goes in `<content type="html">` as escaped text, and
`xml:base` lets readers resolve the site-relative links inside it. Dates come
from the content only (`updated` is the newest entry's update time), never the
wall clock; an empty feed uses SOURCE_DATE_EPOCH, or the Unix epoch. Output is
deterministic. This module must never do I/O and never trust entry text to be
valid XML (characters XML 1.0 forbids are dropped).
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import urlsplit

from sitegen import __version__

ATOM_NS = "http://www.w3.org/2005/Atom"
XML_NS = "http://www.w3.org/XML/1998/namespace"
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


def atom_date(value: datetime) -> str:
    """RFC 3339 in UTC with a Z, seconds precision (stable across platforms)."""
    text = _ATOM_DATES.get(value)
    if text is None:
        moment = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        text = moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
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


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    element = ET.SubElement(parent, tag, attrs)
    if text is not None:
        element.text = clean_text(text)
    return element


def feed_updated(entries: Sequence[FeedEntry]) -> datetime:
    """The newest entry update (or publication) time; the build date when there is none."""
    dates = [d for e in entries for d in (e.updated, e.published) if d is not None]
    return max(dates) if dates else build_date()


def render_atom(feed: FeedInfo) -> bytes:
    """The Atom 1.0 document of *feed*, entries in the order given (newest first)."""
    root = ET.Element("feed", {"xmlns": ATOM_NS,
                               f"{{{XML_NS}}}lang": feed.language or "en",
                               f"{{{XML_NS}}}base": feed.site_url})
    _sub(root, "title", feed.title)
    if feed.subtitle:
        _sub(root, "subtitle", feed.subtitle)
    _sub(root, "link", href=feed.feed_url, rel="self", type="application/atom+xml")
    _sub(root, "link", href=feed.page_url, rel="alternate", type="text/html")
    _sub(root, "id", feed.feed_url)
    _sub(root, "updated", atom_date(feed_updated(feed.entries)))
    author = _sub(root, "author")
    _sub(author, "name", feed.author or feed.title)
    _sub(root, "generator", "sitegen", version=__version__)
    for entry in feed.entries:
        _entry(root, entry, feed.site_url)
    ET.indent(root, space="  ")
    body = ET.tostring(root, encoding="unicode", short_empty_elements=True)
    return ('<?xml version="1.0" encoding="utf-8"?>\n' + body + "\n").encode("utf-8")


def _entry(root: ET.Element, entry: FeedEntry, site_url: str) -> None:
    item = _sub(root, "entry")
    if entry.language:
        item.set(f"{{{XML_NS}}}lang", entry.language)
    _sub(item, "title", entry.title or entry.url, type="text")
    _sub(item, "link", href=entry.url, rel="alternate", type="text/html")
    _sub(item, "id", entry_id(entry, site_url))
    updated = entry.updated or entry.published or build_date()
    _sub(item, "updated", atom_date(updated))
    if entry.published is not None:
        _sub(item, "published", atom_date(entry.published))
    if entry.author:
        _sub(_sub(item, "author"), "name", entry.author)
    for term in entry.categories:
        _sub(item, "category", term=clean_text(term))
    if entry.summary:
        _sub(item, "summary", entry.summary, type="text")
    if entry.content_html is not None:
        _sub(item, "content", entry.content_html, type="html")
