"""sitemap.xml (split behind a sitemap index past 50,000 URLs) and robots.txt.

Role: turn a list of `SitemapEntry` (absolute page URL, last modification from
the content's updatedAt) into sitemap protocol files, and write the robots.txt
that names the sitemap. The caller decides which pages are listed (every HTML
page but 404.html). Output is deterministic: entries are sorted by URL and
dates come from content only. This module must never do I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from sitegen.emit.feed import atom_date, clean_text, escape_xml_text

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
MAX_URLS = 50_000


class SitemapEntry(NamedTuple):
    """One page: its absolute URL and when its content last changed (None: unknown).

    (A tuple: a build makes one per page, and a frozen dataclass takes ~9x as long to make.)
    """

    url: str
    lastmod: datetime | None = None


def _urlset(entries: Sequence[SitemapEntry]) -> bytes:
    """The urlset, written as text: the same bytes ElementTree would make, ~5x faster.

    A sitemap is one flat list of up to 50,000 <url> elements with two escaped text fields,
    and a rebuild after one article changed writes it again whole. The URLs are cleaned
    and escaped in one piece (newline-separated; neither step adds or drops a newline).
    """
    head = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAP_NS}"'
    if not entries:  # ElementTree writes an empty element in its short form
        return (head + " />\n").encode("utf-8")
    urls = [entry.url for entry in entries]
    locs = escape_xml_text(clean_text("\n".join(urls))).split("\n")
    if len(locs) != len(urls):  # a URL with a newline of its own: one at a time
        locs = [escape_xml_text(clean_text(url)) for url in urls]
    parts = [head + ">"]
    add = parts.append
    for loc, entry in zip(locs, entries, strict=True):
        if entry.lastmod is None:
            add(f"  <url>\n    <loc>{loc}</loc>\n  </url>")
        else:
            add(f"  <url>\n    <loc>{loc}</loc>\n    <lastmod>{atom_date(entry.lastmod)}</lastmod>"
                "\n  </url>")
    add("</urlset>\n")
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
    import xml.etree.ElementTree as ET  # only for an index: most sites need none

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
    ET.indent(index, space="  ")
    body = ET.tostring(index, encoding="unicode")
    document = ('<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n").encode("utf-8")
    return [("sitemap.xml", document), *files]


def render_robots(base_url: str) -> bytes:
    """robots.txt: allow everything and name the sitemap's absolute URL."""
    sitemap = clean_text(f"{base_url.rstrip('/')}/sitemap.xml").replace("\n", "")
    return f"User-agent: *\nAllow: /\n\nSitemap: {sitemap}\n".encode()
