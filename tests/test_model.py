"""The site model: published only, slugs, order, sections, pagination, related."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "render"))

from render_factory import article, hostile_workspace, make_config, make_workspace  # noqa: E402

from sitegen.model import build_site, reserved  # noqa: E402
from sitegen.model.layout import page_url  # noqa: E402
from sitegen.model.views import Site  # noqa: E402


def test_only_published_articles_appear_anywhere(tmp_path: Path) -> None:
    ws = make_workspace([
        article(1), article(2, status="draft"), article(3, status="archived"),
        article(4, status=None), article(5, status=" Published "),
    ])
    site = build_site(make_config(tmp_path), ws)
    assert [a.id for a in site.articles] == [f"{5:024x}", f"{1:024x}"]
    listed = {a.id for p in site.pages for a in p.articles} | {
        p.article.id for p in site.pages if p.article is not None}
    assert listed == {f"{1:024x}", f"{5:024x}"}
    assert all(t.articles for t in site.tags)


def test_newest_first_with_id_tie_break(tmp_path: Path) -> None:
    same = "2024-03-01T00:00:00.000Z"
    ws = make_workspace([article(1, createdAt=same), article(2, createdAt=same),
                         article(3, createdAt="2024-04-01T00:00:00.000Z")])
    site = build_site(make_config(tmp_path), ws)
    assert [a.id[-1] for a in site.articles] == ["3", "2", "1"]
    assert site.articles[0].newer is None and site.articles[0].older is site.articles[1]
    assert site.articles[2].older is None and site.articles[2].newer is site.articles[1]


def test_every_list_of_articles_is_newest_first(tmp_path: Path) -> None:
    """Listing pages and feeds take the first articles of each list as the newest."""
    import random

    rng = random.Random(3)
    dates = [None, "2024-03-01T00:00:00.000Z", "2024-03-02T00:00:00.000Z",
             "2023-12-31T23:59:59.999Z"]
    for _ in range(20):
        records = [article(n, createdAt=rng.choice(dates), updatedAt=rng.choice(dates[1:]),
                           tags=rng.sample(["a", "b", "c"], rng.randrange(3)),
                           agentId=rng.choice(["ag1", "ag2"]),
                           clusterId=rng.choice(["c1", "c2", None]),
                           language=rng.choice(["en", "fr"]))
                   for n in rng.sample(range(1, 200), 30)]
        ws = make_workspace(records, agents=[{"id": "ag1", "name": "One"},
                                             {"id": "ag2", "name": "Two"}],
                            clusters=[{"id": "c1", "name": "C1"}, {"id": "c2", "name": "C2"}])
        site = build_site(make_config(tmp_path), ws)
        lists = [site.articles] + [section.articles for section in (
            *site.agents, *site.clusters, *site.tags, *site.languages)]
        assert len(lists) > 6
        for articles in lists:  # (ids: an ArticleView's repr walks the whole site)
            assert [a.id for a in articles] == [a.id for a in sorted(
                articles, key=lambda a: (a.published, a.id), reverse=True)]


@pytest.mark.parametrize("raw, expected", [
    ("Hello World", "hello-world"),
    ("Ünïcode Straße", "unicode-strasse"),
    ("..", "article-1"),
    ("/", "article-1"),
    ("../../etc/passwd", "etc-passwd"),
    ("🔥🔥", "article-1"),
    ("", "article-1"),
    (None, "article-1"),
    ("agents", "agents-2"),
    ("404", "404-2"),
])
def test_bad_slugs_are_repaired_with_a_warning(
    tmp_path: Path, raw: str | None, expected: str, caplog: pytest.LogCaptureFixture
) -> None:
    ws = make_workspace([article(1, slug=raw)])
    with caplog.at_level(logging.WARNING, logger="sitegen.model"):
        site = build_site(make_config(tmp_path), ws)
    assert site.articles[0].slug == expected
    assert site.articles[0].url == f"/{expected}/"
    if raw != expected:
        assert any("slug" in r.getMessage() for r in caplog.records)


def test_slug_falls_back_to_id_when_title_has_no_letters(tmp_path: Path) -> None:
    ws = make_workspace([article(7, slug="🔥", title="🔥🔥")])
    site = build_site(make_config(tmp_path), ws)
    assert site.articles[0].slug == f"{7:024x}"


def test_duplicate_slugs_keep_the_oldest_and_number_the_rest(tmp_path: Path) -> None:
    ws = make_workspace([article(3, slug="same"), article(1, slug="same"),
                         article(2, slug="same")])
    site = build_site(make_config(tmp_path), ws)
    by_id = {a.id[-1]: a.slug for a in site.articles}
    assert by_id == {"1": "same", "2": "same-2", "3": "same-3"}


def test_no_path_leaves_the_output_and_no_article_takes_a_reserved_name(tmp_path: Path) -> None:
    site = build_site(make_config(tmp_path), hostile_workspace())
    paths = [p.path for p in site.pages]
    assert len(paths) == len(set(paths))
    for path in paths:
        assert not path.startswith("/") and ".." not in path.split("/") and "\\" not in path
        assert all(part and part == part.strip() for part in path.split("/"))
    for a in site.articles:
        assert a.slug not in reserved()
        assert a.url.split("/")[1] not in reserved()


def test_sections_pagination_and_feeds(tmp_path: Path) -> None:
    arts = [article(n, agentId="a" * 24, clusterId="c" * 24 if n % 2 else None,
                    authorIdentityId="b" * 24, tags=["Alpha", "beta"]) for n in range(1, 8)]
    ws = make_workspace(arts, agents=[{"id": "a" * 24, "name": "Writer Bot"}],
                        clusters=[{"id": "c" * 24, "name": "Topic", "color": "#A1B2C3"},
                                  {"id": "e" * 24, "name": "Empty"}],
                        authors=[{"id": "b" * 24, "name": "Ann", "bio": "Hi",
                                  "imageUrl": "https://img.test/a.png"}])
    site = build_site(make_config(tmp_path, per_page=3), ws)
    home = [p for p in site.pages if p.kind == "home"]
    assert [p.url for p in home] == ["/", "/page/2/", "/page/3/"]
    assert [p.path for p in home] == ["index.html", "page/2/index.html", "page/3/index.html"]
    assert home[0].prev_url is None and home[0].next_url == "/page/2/"
    assert home[2].prev_url == "/page/2/" and home[2].next_url is None
    assert [len(p.articles) for p in home] == [3, 3, 1]
    assert [c.name for c in site.clusters] == ["Topic"]  # empty clusters have no page
    assert site.clusters[0].colour == "#a1b2c3"
    cluster_pages = [p for p in site.pages if p.kind == "cluster"]
    assert [p.url for p in cluster_pages] == ["/topics/topic/", "/topics/topic/page/2/"]
    assert cluster_pages[0].feed_url == "/topics/topic/feed.xml"
    agent_pages = [p for p in site.pages if p.kind == "agent"]
    assert agent_pages[0].url == "/agents/writer-bot/"
    assert agent_pages[0].feed_url == "/agents/writer-bot/feed.xml"
    assert [t.url for t in site.tags] == ["/tags/alpha/", "/tags/beta/"]
    assert [p.kind for p in site.pages][-1] == "404" and site.pages[-1].path == "404.html"
    assert not site.languages and not any(p.kind == "language" for p in site.pages)
    assert not any(p.kind == "social" for p in site.pages)
    assert site.authors[0].image == "https://img.test/a.png"
    assert page_url("/x/", 1) == "/x/" and page_url("/x/", 4) == "/x/page/4/"


def test_section_indexes_list_each_kind_that_has_sections(tmp_path: Path) -> None:
    arts = [article(n, agentId="a" * 24, clusterId="c" * 24 if n % 2 else None,
                    tags=["Alpha", "beta"] if n > 1 else []) for n in range(1, 5)]
    ws = make_workspace(arts, agents=[{"id": "a" * 24, "name": "Writer Bot"}],
                        clusters=[{"id": "c" * 24, "name": "Topic", "color": "#A1B2C3"}])
    site = build_site(make_config(tmp_path, per_page=3), ws)
    indexes = {p.url: p for p in site.pages if p.kind == "terms"}
    assert list(indexes) == ["/agents/", "/topics/", "/tags/"]  # no authors: no /authors/
    tags = indexes["/tags/"]
    assert tags.path == "tags/index.html" and tags.template == "terms.html"
    assert tags.obj.kind == "tag" and tags.title == "Tags"  # type: ignore[union-attr]
    assert [(t.name, len(t.articles)) for t in tags.obj.sections] == [  # type: ignore[union-attr]
        ("Alpha", 3), ("beta", 3)]
    assert [s.name for s in indexes["/topics/"].obj.sections] == ["Topic"]  # type: ignore[union-attr]
    # the index's sections follow the content (a new article in a tag counts there)
    more = make_workspace([*arts, article(9, tags=["beta"])],
                          agents=[{"id": "a" * 24, "name": "Writer Bot"}],
                          clusters=[{"id": "c" * 24, "name": "Topic", "color": "#A1B2C3"}])
    again = {p.url: p for p in build_site(make_config(tmp_path, per_page=3), more).pages}
    assert [(t.name, len(t.articles)) for t in again["/tags/"].obj.sections] == [  # type: ignore[union-attr]
        ("Alpha", 3), ("beta", 4)]


def test_language_pages_only_with_several_languages(tmp_path: Path) -> None:
    ws = make_workspace([article(1, language="en"), article(2, language="de"),
                         article(3, language="not a language!")])
    site = build_site(make_config(tmp_path), ws)
    assert [lang.url for lang in site.languages] == ["/lang/de/", "/lang/en/"]
    assert {a.id[-1]: a.language for a in site.articles} == {"1": "en", "2": "de", "3": "en"}
    assert {p.language for p in site.pages if p.kind == "language"} == {"de", "en"}


def test_related_prefers_same_cluster_then_shared_tags(tmp_path: Path) -> None:
    c = "c" * 24
    ws = make_workspace([
        article(1, clusterId=c, tags=["x"]),
        article(2, clusterId=None, tags=["a", "b", "c"]),
        article(3, clusterId=None, tags=["a"]),
        article(4, clusterId=c, tags=["z"]),
        article(5, clusterId=None, tags=["a", "b"]),
        article(6, clusterId=None, tags=["q"]),
        article(9, clusterId=c, tags=["a", "b", "c"]),
    ], clusters=[{"id": c, "name": "T"}])
    site = build_site(make_config(tmp_path), ws)
    target = next(a for a in site.articles if a.id.endswith("9"))
    assert [r.id[-1] for r in target.related] == ["4", "1", "2"]
    lonely = next(a for a in site.articles if a.id.endswith("6"))
    assert lonely.related == []


def test_reading_time_dates_and_body_rule(tmp_path: Path) -> None:
    words = " ".join(["word"] * 660)
    ws = make_workspace([
        article(1, content=words, blocks=None),
        article(2, content="ignored", blocks=[{"type": "text", "content": "short one"},
                                              {"type": "mystery"}]),
        article(3, content="markdown wins", blocks=[{"type": "mystery"}]),
        article(4, createdAt=None, updatedAt="2024-05-05T00:00:00Z"),
    ])
    site = build_site(make_config(tmp_path), ws)
    by = {a.id[-1]: a for a in site.articles}
    assert by["1"].reading_minutes == 3 and by["1"].body_kind == "markdown"
    # the unknown block beside a known one is kept: drawn by blocks/unknown.html
    assert by["2"].body_kind == "blocks" and [b.type for b in by["2"].blocks] == [
        "text", "mystery"]
    assert by["3"].body_kind == "markdown" and by["3"].content == "markdown wins"
    assert by["4"].published.isoformat() == "2024-05-05T00:00:00+00:00"
    assert by["1"].updated >= by["1"].published


def test_invalid_colour_becomes_neutral_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ws = make_workspace([article(1, clusterId="c" * 24)],
                        clusters=[{"id": "c" * 24, "name": "T", "color": "red;x:url(a)"}])
    with caplog.at_level(logging.WARNING, logger="sitegen.model"):
        site = build_site(make_config(tmp_path), ws)
    assert site.clusters[0].colour == "#6b7280"
    assert any("colour" in r.getMessage() for r in caplog.records)


def test_records_without_title_and_body_are_skipped(tmp_path: Path) -> None:
    ws = make_workspace([article(1, title=None, content=None), article(2)])
    site = build_site(make_config(tmp_path), ws)
    assert [a.id[-1] for a in site.articles] == ["2"]


def test_build_is_deterministic_whatever_the_record_order(tmp_path: Path) -> None:
    arts = [article(n, tags=["t"]) for n in range(1, 6)]
    one = build_site(make_config(tmp_path), make_workspace(arts))
    two = build_site(make_config(tmp_path), make_workspace(list(reversed(arts))))

    def shape(site: Site) -> list[tuple[object, ...]]:
        return [(p.path, p.kind, p.template, p.title, p.number, p.total, p.prev_url,
                 p.next_url, p.feed_url, [a.id for a in p.articles]) for p in site.pages]

    assert shape(one) == shape(two)
    assert [(a.id, [r.id for r in a.related]) for a in one.articles] == [
        (a.id, [r.id for r in a.related]) for a in two.articles]


def test_permalink_pattern(tmp_path: Path) -> None:
    site = build_site(make_config(tmp_path, permalink="/{year}/{month}/{slug}/"),
                      make_workspace([article(1)]))
    assert site.articles[0].url == "/2024/01/article-1/"
    assert site.articles[0].path == "2024/01/article-1/index.html"


def _permalink_by_format(pattern: str, slug: str) -> str:
    """The permalink as `str.format` makes it (the reference for the one-placeholder path)."""
    segments = [s for s in pattern.format(slug=slug).split("/") if s]
    if any(s in {".", ".."} for s in segments):
        raise ValueError(pattern)
    return "/" + "/".join(segments) + "/"


@pytest.mark.parametrize("pattern", ["/{slug}/", "{slug}", "/blog/{slug}", "//a//{slug}//",
                                     "/x/{slug}/index", "/../{slug}/", "/./{slug}/"])
@pytest.mark.parametrize("slug", ["post", "a-b", ".", "..", "x.y", "é", "{year}", "}{"])
def test_a_slug_only_permalink_expands_as_format_does(pattern: str, slug: str) -> None:
    from datetime import UTC, datetime

    from sitegen.errors import ConfigError
    from sitegen.model.slugs import expand_permalink

    when = datetime(2024, 1, 2, tzinfo=UTC)
    try:
        expected: str | None = _permalink_by_format(pattern, slug)
    except ValueError:
        expected = None
    if expected is None:
        with pytest.raises(ConfigError, match="segments"):
            expand_permalink(pattern, slug, when, "en", "a" * 24)
    else:
        assert expand_permalink(pattern, slug, when, "en", "a" * 24) == expected

