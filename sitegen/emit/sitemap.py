"""sitemap.xml (split behind a sitemap index past 50,000 URLs) and robots.txt.

Role: turn a list of `SitemapEntry` (absolute page URL, last modification from
the content's updatedAt) into sitemap protocol files, and write the robots.txt
that names the sitemap. The caller decides which pages are listed (every HTML
page but 404.html). Output is deterministic: entries are sorted by URL and
dates come from content only. This module must never do I/O.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sitegen.emit.feed import atom_date, clean_text, escape_xml_text

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
MAX_URLS = 50_000


@dataclass(frozen=True, slots=True)
class SitemapEntry:
    """One page: its absolute URL and when its content last changed (None: unknown)."""

    url: str
    lastmod: datetime | None = None


def _document(root: ET.Element) -> bytes:
    ET.indent(root, space="  ")
    body = ET.tostring(root, encoding="unicode")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n").encode("utf-8")


def _urlset(entries: Sequence[SitemapEntry]) -> bytes:
    """The urlset, written as text: the same bytes ElementTree would make, ~5x faster.

    A sitemap is one flat list of up to 50,000 <url> elements with two escaped text fields,
    and a rebuild after one article changed writes it again whole.
    """
    head = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAP_NS}"'
    if not entries:  # ElementTree writes an empty element in its short form
        return (head + " />\n").encode("utf-8")
    parts = [head + ">"]
    for entry in entries:
        loc = escape_xml_text(clean_text(entry.url))
        if entry.lastmod is None:
            parts.append(f"  <url>\n    <loc>{loc}</loc>\n  </url>")
        else:
            parts.append(f"  <url>\n    <loc>{loc}</loc>\n    <lastmod>"
                         f"{atom_date(entry.lastmod)}</lastmod>\n  </url>")
    parts.append("</urlset>\n")
    return "\n".join(parts).encode("utf-8")


def _newest(entries: Sequence[SitemapEntry]) -> datetime | None:
    dates = [entry.lastmod for entry in entries if entry.lastmod is not None]
    return max(dates) if dates else None


def render_sitemaps(
    entries: Sequence[SitemapEntry], base_url: str, *, max_urls: int = MAX_URLS
) -> list[tuple[str, bytes]]:
    """`[("sitemap.xml", bytes)]`, or an index at sitemap.xml plus sitemap-1.xml, ...

    *base_url* is the site's public URL (no trailing slash needed).
    """
    unique = {entry.url: entry for entry in entries}
    ordered = [unique[url] for url in sorted(unique)]
    if len(ordered) <= max_urls:
        return [("sitemap.xml", _urlset(ordered))]
    base = base_url.rstrip("/")
    files: list[tuple[str, bytes]] = []
    index = ET.Element("sitemapindex", {"xmlns": SITEMAP_NS})
    for number, start in enumerate(range(0, len(ordered), max_urls), start=1):
        chunk = ordered[start:start + max_urls]
        name = f"sitemap-{number}.xml"
        files.append((name, _urlset(chunk)))
        item = ET.SubElement(index, "sitemap")
        ET.SubElement(item, "loc").text = clean_text(f"{base}/{name}")
        newest = _newest(chunk)
        if newest is not None:
            ET.SubElement(item, "lastmod").text = atom_date(newest)
    return [("sitemap.xml", _document(index)), *files]


def render_robots(base_url: str) -> bytes:
    """robots.txt: allow everything and name the sitemap's absolute URL."""
    sitemap = clean_text(f"{base_url.rstrip('/')}/sitemap.xml").replace("\n", "")
    return f"User-agent: *\nAllow: /\n\nSitemap: {sitemap}\n".encode()
