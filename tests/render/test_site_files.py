"""Feeds, sitemaps and robots.txt: theme templates rendered like pages — valid Atom for
feedparser, escaped, dated from content only, deterministic; the sitemap sorted, dated,
split behind an index past the URL limit."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import feedparser
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from render_factory import XSS, article, make_config, make_workspace

from sitegen.model import build_site, layout
from sitegen.model.views import Page, Site
from sitegen.render.filters import atom_date
from sitegen.render.pages import Renderer
from sitegen.render.themes import ThemeSet

SITE = "https://site.example.test"
SITEMAP = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}


def _site(root: Path, articles: list[dict[str, Any]], **extra: Any) -> tuple[Site, Renderer]:
    config = make_config(root, description="What & why")
    site = build_site(config, make_workspace(articles, **extra))
    return site, Renderer(config, site, ThemeSet(config))


def _file(site: Site, renderer: Renderer, path: str) -> bytes:
    page = next(p for p in site.files if p.path == path)
    return renderer.render(page)


def test_feedparser_reads_the_feed_without_complaint(tmp_path: Path) -> None:
    body = "Body with ![an image](/media/3.png) and [a part](#part)."
    site, renderer = _site(tmp_path, [
        article(n, content=body, tags=["python", "web & more"], authorIdentityId="b" * 24)
        for n in (1, 2, 3)], authors=[{"id": "b" * 24, "name": "Ada"}])
    parsed = feedparser.parse(_file(site, renderer, "feed.xml"))
    assert parsed.bozo == 0, parsed.get("bozo_exception")
    assert parsed.version == "atom10"
    assert parsed.feed.title == "Test Site" and parsed.feed.subtitle == "What & why"
    assert parsed.feed.id == f"{SITE}/feed.xml"
    newest = sorted(site.articles, key=lambda a: a.published, reverse=True)
    assert [e.title for e in parsed.entries] == [a.title for a in newest]
    first, view = parsed.entries[0], newest[0]
    assert first.link == f"{SITE}{view.url}"
    assert first.id == f"tag:site.example.test,{view.published.year}:article:{view.id}"
    assert first.author == "Ada"
    assert [t.term for t in first.tags] == ["python", "web & more"]
    assert first.content[0].type == "text/html"
    content = first.content[0].value  # relative links resolved against xml:base
    assert f'src="{SITE}/media/3.png"' in content
    assert f'href="{SITE}{view.url}#part"' in content


def test_updated_is_the_newest_content_date_and_an_empty_feed_uses_source_date_epoch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site, renderer = _site(tmp_path, [article(1), article(9), article(4)])
    parsed = feedparser.parse(_file(site, renderer, "feed.xml"))
    assert parsed.feed.updated == "2024-02-10T10:00:00Z"  # article 9's updatedAt
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    site, renderer = _site(tmp_path, [])
    parsed = feedparser.parse(_file(site, renderer, "feed.xml"))
    assert parsed.bozo == 0 and parsed.entries == []
    assert parsed.feed.updated == "2023-11-14T22:13:20Z"


def test_html_is_escaped_text_never_markup(tmp_path: Path) -> None:
    site, renderer = _site(tmp_path, [article(1, title=XSS, description=XSS,
                                              content=f"{XSS}\n\n<evil/>]]>", tags=[XSS])])
    data = _file(site, renderer, "feed.xml")
    assert b"<script" not in data and b"<evil/>" not in data and b"<img" not in data
    parsed = feedparser.parse(data)
    assert parsed.bozo == 0, parsed.get("bozo_exception")
    assert parsed.entries[0].title == XSS
    assert "<script" not in parsed.entries[0].content[0].value  # sanitized, then escaped


def test_the_same_site_gives_the_same_bytes(tmp_path: Path) -> None:
    first = _file(*_site(tmp_path, [article(1), article(2)]), "feed.xml")
    assert first == _file(*_site(tmp_path, [article(1), article(2)]), "feed.xml")


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(title=st.text(min_size=1), body=st.text(), tag=st.text(min_size=1))
def test_any_text_still_gives_a_valid_feed(tmp_path: Path, title: str, body: str,
                                           tag: str) -> None:
    site, renderer = _site(tmp_path, [article(1, title=title, content=body, tags=[tag])])
    for page in site.files:
        if page.kind == "feed":
            parsed = feedparser.parse(renderer.render(page))
            assert parsed.bozo == 0, (page.path, parsed.get("bozo_exception"))
            assert len(parsed.entries) == len(page.articles)


def test_control_characters_are_dropped_from_xml_files(tmp_path: Path) -> None:
    site, renderer = _site(tmp_path, [article(1, title="A\x00\x01\x0bB", tags=["t\x1f"])])
    data = _file(site, renderer, "feed.xml")
    ET.fromstring(data)  # well-formed
    parsed = feedparser.parse(data)
    assert parsed.bozo == 0 and parsed.entries[0].title.replace(" ", "") == "AB"


def test_section_feeds_carry_their_sections_articles(tmp_path: Path) -> None:
    site, renderer = _site(tmp_path, [article(1, tags=["news"]), article(2, tags=["other"])])
    parsed = feedparser.parse(_file(site, renderer, "tags/other/feed.xml"))
    assert parsed.feed.title == "Test Site: other"
    assert parsed.feed.subtitle == "Articles of the tag other"
    assert [e.title for e in parsed.entries] == ["Article 2"]
    assert parsed.feed.link == f"{SITE}/tags/other/"


def test_atom_dates_are_utc_seconds_with_four_digit_years() -> None:
    east = datetime(2024, 3, 8, 1, 30, tzinfo=timezone(timedelta(hours=2)))
    assert atom_date(east) == "2024-03-07T23:30:00Z"
    assert atom_date(datetime(2024, 3, 8, 1, 30)) == "2024-03-08T01:30:00Z"  # naive: UTC
    assert atom_date(datetime(2024, 3, 8, 1, 30, 5, 999_999, tzinfo=UTC)) == "2024-03-08T01:30:05Z"
    assert atom_date(datetime(999, 1, 2, 3, 4, 5, tzinfo=UTC)) == "0999-01-02T03:04:05Z"


def test_a_feed_entry_carries_a_bounded_number_of_categories(tmp_path: Path) -> None:
    site, renderer = _site(tmp_path, [article(1, tags=[f"t{n}" for n in range(500)])])
    assert _file(site, renderer, "feed.xml").count(b"<category ") == 50


def _sitemap(data: bytes) -> list[tuple[str | None, str | None]]:
    root = ET.fromstring(data)
    return [(u.findtext("s:loc", namespaces=SITEMAP), u.findtext("s:lastmod", namespaces=SITEMAP))
            for u in root.findall("s:url", SITEMAP)]


def test_the_sitemap_lists_every_html_page_but_404_and_search_sorted_and_dated(
        tmp_path: Path) -> None:
    site, renderer = _site(tmp_path, [article(1, tags=["b"]), article(2, tags=["a"])])
    entries = _sitemap(_file(site, renderer, "sitemap.xml"))
    pages = [p for p in site.pages if p.kind not in ("404", "search")]
    assert [loc for loc, _ in entries] == sorted(SITE + p.url for p in pages)
    dated = dict(entries)
    assert dated[f"{SITE}/"] == "2024-02-03T10:00:00Z"  # the newest article it lists
    assert dated[f"{SITE}/tags/a/"] == "2024-02-03T10:00:00Z"
    # an index is dated by the newest article of its sections (issue 53: it had no lastmod)
    assert dated[f"{SITE}/tags/"] == "2024-02-03T10:00:00Z"


def test_past_the_limit_an_index_points_to_numbered_sitemaps(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(layout, "MAX_URLS", 3)
    site, renderer = _site(tmp_path, [article(n) for n in range(1, 4)])
    names = [p.path for p in site.files if p.kind.startswith("sitemap")]
    count = len([p for p in site.pages if p.kind not in ("404", "search")])
    parts = -(-count // 3)
    assert names == ["sitemap.xml", *(f"sitemap-{n}.xml" for n in range(1, parts + 1))]
    index = ET.fromstring(_file(site, renderer, "sitemap.xml"))
    assert index.tag == "{http://www.sitemaps.org/schemas/sitemap/0.9}sitemapindex"
    assert [e.text for e in index.findall("s:sitemap/s:loc", SITEMAP)] == [
        f"{SITE}/sitemap-{n}.xml" for n in range(1, parts + 1)]
    counts = [len(_sitemap(_file(site, renderer, f"sitemap-{n}.xml")))
              for n in range(1, parts + 1)]
    assert sum(counts) == count and max(counts) == 3


def test_robots_names_the_absolute_sitemap(tmp_path: Path) -> None:
    text = _file(*_site(tmp_path, [article(1)]), "robots.txt").decode()
    assert text == f"User-agent: *\nAllow: /\n\nSitemap: {SITE}/sitemap.xml\n"


def test_site_files_are_pages_of_file_kinds(tmp_path: Path) -> None:
    site, _ = _site(tmp_path, [article(1)])
    assert all(isinstance(p, Page) and not p.path.endswith(".html") for p in site.files)
    assert {p.template for p in site.files} == {"feed.xml", "sitemap.xml", "robots.txt"}
