"""Atom feeds: valid for feedparser, escaped, dated from content only, deterministic."""

from __future__ import annotations

from datetime import UTC, datetime

import feedparser
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.emit.feed import FeedEntry, FeedInfo, build_date, render_atom

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
