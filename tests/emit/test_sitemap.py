"""sitemap.xml, the sitemap index past the URL limit, and robots.txt."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime

from sitegen.emit.sitemap import SITEMAP_NS, SitemapEntry, render_robots, render_sitemaps

NS = {"s": SITEMAP_NS}
BASE = "https://notes.acme.test"


def entries(n: int) -> list[SitemapEntry]:
    return [SitemapEntry(f"{BASE}/p{i}/", datetime(2024, 1, 1 + i % 28, tzinfo=UTC))
            for i in range(n)]


def test_one_sitemap_lists_every_url_sorted_with_lastmod() -> None:
    [(name, data)] = render_sitemaps(list(reversed(entries(3))) + [SitemapEntry(f"{BASE}/")],
                                     BASE)
    assert name == "sitemap.xml"
    root = ET.fromstring(data)
    locs = [e.text for e in root.findall("s:url/s:loc", NS)]
    assert locs == [f"{BASE}/", f"{BASE}/p0/", f"{BASE}/p1/", f"{BASE}/p2/"]
    assert [e.text for e in root.findall("s:url/s:lastmod", NS)][0] == "2024-01-01T00:00:00Z"
    assert len(root.findall("s:url/s:lastmod", NS)) == 3  # the one without a date has none


def test_past_the_limit_an_index_points_to_numbered_sitemaps() -> None:
    files = render_sitemaps(entries(7), BASE + "/", max_urls=3)
    assert [name for name, _ in files] == ["sitemap.xml", "sitemap-1.xml", "sitemap-2.xml",
                                           "sitemap-3.xml"]
    index = ET.fromstring(files[0][1])
    assert index.tag == f"{{{SITEMAP_NS}}}sitemapindex"
    assert [e.text for e in index.findall("s:sitemap/s:loc", NS)] == [
        f"{BASE}/sitemap-{n}.xml" for n in (1, 2, 3)]
    counts = [len(ET.fromstring(data).findall("s:url", NS)) for _, data in files[1:]]
    assert counts == [3, 3, 1]


def test_robots_names_the_absolute_sitemap() -> None:
    text = render_robots(BASE + "/").decode()
    assert f"Sitemap: {BASE}/sitemap.xml\n" in text
    assert text.startswith("User-agent: *\n")


def _reference_urlset(entries: list[SitemapEntry]) -> bytes:
    """What ElementTree writes for the same urlset (the sitemap is built as text)."""
    from sitegen.emit.feed import atom_date, clean_text

    root = ET.Element("urlset", {"xmlns": SITEMAP_NS})
    for entry in entries:
        item = ET.SubElement(root, "url")
        ET.SubElement(item, "loc").text = clean_text(entry.url)
        if entry.lastmod is not None:
            ET.SubElement(item, "lastmod").text = atom_date(entry.lastmod)
    ET.indent(root, space="  ")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")
            + "\n").encode("utf-8")


def test_the_text_built_sitemap_is_what_elementtree_would_write() -> None:
    hostile = ["https://x.test/a&b/", "https://x.test/<script>/", "https://x.test/é/ü/",
               "https://x.test/q?a=1&b=\"2\"'", "https://x.test/\x01\x08bad/", "https://x.test/]]>/"]
    with_newline = [*hostile, "https://x.test/new\nline/", "https://x.test/\r\n/"]
    for entries in ([], [SitemapEntry(url) for url in hostile],
                    [SitemapEntry(url, datetime(2026, 1, n + 1, 5, tzinfo=UTC))
                     for n, url in enumerate(hostile)],
                    [SitemapEntry(url) for url in with_newline]):
        ordered = sorted(entries, key=lambda e: e.url)
        [(name, data)] = render_sitemaps(entries, "https://x.test")
        assert name == "sitemap.xml"
        assert data == _reference_urlset(ordered)
        ET.fromstring(data)  # well-formed
