"""Atom feeds: valid for feedparser, escaped, dated from content only, deterministic."""

from __future__ import annotations

from datetime import UTC, datetime

import feedparser
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.emit.feed import FeedEntry, FeedInfo, build_date, escape_xml_text, render_atom

SITE = "https://notes.acme.test/"


def entry(n: int, **changes: object) -> FeedEntry:
    values: dict[str, object] = {
        "article_id": f"65f0c0ffee0123456789ab{n:02d}",
        "url": f"{SITE}post-{n}/",
        "title": f"Post {n}",
        "updated": datetime(2024, 3, n, 12, 0, tzinfo=UTC),
        "published": datetime(2024, 2, n, 9, 30, tzinfo=UTC),
        "author": "Ada",
        "summary": f"About {n}",
        "content_html": f'<p>Body {n} <img src="/media/{n}.svg" alt=""></p>',
        "categories": ("python", "web & more"),
    }
    values.update(changes)
    return FeedEntry(**values)  # type: ignore[arg-type]


def feed(*entries: FeedEntry) -> FeedInfo:
    return FeedInfo(title="Acme <Notes>", page_url=SITE, feed_url=SITE + "feed.xml",
                    site_url=SITE, subtitle="What & why", entries=entries)


def test_feedparser_reads_it_without_complaint() -> None:
    parsed = feedparser.parse(render_atom(feed(entry(3), entry(2), entry(1))))
    assert parsed.bozo == 0, parsed.get("bozo_exception")
    assert parsed.version == "atom10"
    assert parsed.feed.title == "Acme <Notes>"
    assert [e.title for e in parsed.entries] == ["Post 3", "Post 2", "Post 1"]
    first = parsed.entries[0]
    assert first.link == SITE + "post-3/"
    assert first.content[0].type == "text/html"
    assert 'src="https://notes.acme.test/media/3.svg"' in first.content[0].value
    assert [t.term for t in first.tags] == ["python", "web & more"]
    assert first.id == "tag:notes.acme.test,2024:article:65f0c0ffee0123456789ab03"


def test_updated_is_the_newest_content_date_not_the_clock() -> None:
    parsed = feedparser.parse(render_atom(feed(entry(1), entry(9), entry(4))))
    assert parsed.feed.updated == "2024-03-09T12:00:00Z"


def test_an_empty_feed_uses_source_date_epoch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    parsed = feedparser.parse(render_atom(feed()))
    assert parsed.bozo == 0
    assert parsed.feed.updated == "2023-11-14T22:13:20Z"
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    assert build_date() == datetime(1970, 1, 1, tzinfo=UTC)


def test_html_is_escaped_text_never_markup() -> None:
    hostile = entry(1, title="<script>alert(1)</script>", content_html="<p>x</p>]]><evil/>")
    data = render_atom(feed(hostile))
    assert b"<script>" not in data and b"<evil/>" not in data
    parsed = feedparser.parse(data)
    assert parsed.bozo == 0
    assert parsed.entries[0].title == "<script>alert(1)</script>"


def test_the_same_input_gives_the_same_bytes() -> None:
    assert render_atom(feed(entry(2), entry(1))) == render_atom(feed(entry(2), entry(1)))


@settings(max_examples=60, deadline=None)
@given(title=st.text(), body=st.text(), tag=st.text(min_size=1))
def test_any_text_still_gives_a_valid_feed(title: str, body: str, tag: str) -> None:
    data = render_atom(feed(entry(1, title=title, content_html=body, categories=(tag,))))
    parsed = feedparser.parse(data)
    assert parsed.bozo == 0, parsed.get("bozo_exception")
    assert len(parsed.entries) == 1


def test_atom_date_memo_keeps_naive_and_zoned_values_apart() -> None:
    from datetime import UTC, datetime, timedelta, timezone

    from sitegen.emit.feed import atom_date

    east = datetime(2024, 3, 8, 1, 30, tzinfo=timezone(timedelta(hours=2)))
    naive = datetime(2024, 3, 8, 1, 30)
    for _ in range(2):  # the second round comes from the memo
        assert atom_date(east) == "2024-03-07T23:30:00Z"
        assert atom_date(naive) == "2024-03-08T01:30:00Z"
        assert atom_date(east.astimezone(UTC)) == "2024-03-07T23:30:00Z"
    # seconds precision (fractions dropped, as RFC 3339 allows), four-digit years
    assert atom_date(datetime(2024, 3, 8, 1, 30, 5, 999_999, tzinfo=UTC)) == "2024-03-08T01:30:05Z"
    assert atom_date(datetime(999, 1, 2, 3, 4, 5, tzinfo=UTC)) == "0999-01-02T03:04:05Z"


# --- the text writer against ElementTree -------------------------------------------------

def _reference_atom(info: FeedInfo) -> bytes:
    """What ElementTree writes for the same feed (sitegen's writer before it wrote text)."""
    import xml.etree.ElementTree as ET

    from sitegen import __version__
    from sitegen.emit.feed import (
        ATOM_NS,
        XML_NS,
        atom_date,
        clean_text,
        entry_id,
        feed_updated,
    )

    def sub(parent: ET.Element, tag: str, text: str | None = None,
            **attrs: str) -> ET.Element:
        element = ET.SubElement(parent, tag, attrs)
        if text is not None:
            element.text = clean_text(text)
        return element

    root = ET.Element("feed", {"xmlns": ATOM_NS, f"{{{XML_NS}}}lang": info.language or "en",
                               f"{{{XML_NS}}}base": info.site_url})
    sub(root, "title", info.title)
    if info.subtitle:
        sub(root, "subtitle", info.subtitle)
    sub(root, "link", href=info.feed_url, rel="self", type="application/atom+xml")
    sub(root, "link", href=info.page_url, rel="alternate", type="text/html")
    sub(root, "id", info.feed_url)
    sub(root, "updated", atom_date(feed_updated(info.entries)))
    sub(sub(root, "author"), "name", info.author or info.title)
    sub(root, "generator", "sitegen", version=__version__)
    for item in info.entries:
        element = sub(root, "entry")
        if item.language:
            element.set(f"{{{XML_NS}}}lang", item.language)
        sub(element, "title", item.title or item.url, type="text")
        sub(element, "link", href=item.url, rel="alternate", type="text/html")
        sub(element, "id", entry_id(item, info.site_url))
        sub(element, "updated", atom_date(item.updated or item.published or build_date()))
        if item.published is not None:
            sub(element, "published", atom_date(item.published))
        if item.author:
            sub(sub(element, "author"), "name", item.author)
        for term in item.categories:
            sub(element, "category", term=clean_text(term))
        if item.summary:
            sub(element, "summary", item.summary, type="text")
        if item.content_html is not None:
            sub(element, "content", item.content_html, type="html")
    ET.indent(root, space="  ")
    body = ET.tostring(root, encoding="unicode", short_empty_elements=True)
    return ('<?xml version="1.0" encoding="utf-8"?>\n' + body + "\n").encode("utf-8")


NASTY = st.text(alphabet=st.sampled_from(list('a &<>"\'\r\n\t\x00\x0b\ufffe\u00e9\U0001f600')),
                max_size=12)


@pytest.mark.parametrize("info", [
    feed(),
    feed(entry(1), entry(2, language="de", author="", summary="", content_html="")),
    feed(entry(3, title="", author=None, summary=None, content_html=None, categories=(),
               published=None, updated=None)),
    FeedInfo(title="", page_url=SITE, feed_url=SITE, site_url=SITE, language="",
             author="", entries=(entry(4, title="\x00\x01"),)),
])
def test_the_text_writer_writes_what_elementtree_writes(info: FeedInfo) -> None:
    assert render_atom(info) == _reference_atom(info)


@settings(max_examples=200, deadline=None)
@given(title=NASTY, subtitle=NASTY, url=NASTY, author=NASTY, language=NASTY, body=NASTY,
       term=NASTY, summary=NASTY)
def test_any_text_is_written_as_elementtree_writes_it(
        title: str, subtitle: str, url: str, author: str, language: str, body: str, term: str,
        summary: str) -> None:
    info = FeedInfo(title=title, subtitle=subtitle, page_url=url, feed_url=SITE + url,
                    site_url=SITE, language=language, author=author,
                    entries=(entry(1, title=title, url=url, author=author, language=language,
                                   summary=summary, content_html=body, categories=(term,)),))
    assert render_atom(info) == _reference_atom(info)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("&<>\"'a;#x é\n"), max_size=30))
def test_xml_text_escaping_is_the_standard_librarys(text: str) -> None:
    from xml.sax.saxutils import escape

    assert escape_xml_text(text) == escape(text)
