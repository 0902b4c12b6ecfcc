"""The page kinds registry: a kind declared by one entry and one template is a page of the
site — its URL, its sitemap entry, its SEO, its beacon type, its reserved slug, its
messages — and a view no kind declares is a clear error, never a KeyError."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from render_factory import article, make_config, make_workspace

from sitegen.build import BuildOptions, run_build
from sitegen.errors import BuildError
from sitegen.model import build_site, kinds
from sitegen.model.slugs import reserved, url_to_path
from sitegen.model.views import ArticleView, Page, Site
from sitegen.render.beacon import BeaconSettings, beacon_attrs
from sitegen.render.pages import Renderer
from sitegen.render.themes import ThemeSet

SITE = "https://site.example.test"


@dataclass(eq=False, slots=True)
class Year:
    """The fixture kind's view: the articles of one year."""

    id: str
    articles: list[ArticleView] = field(default_factory=list, repr=False)


def _years(kind: kinds.Kind, site: Site, laid: Sequence[Page]) -> list[Page]:
    years: dict[str, Year] = {}
    for item in site.articles:
        key = f"{item.published:%Y}"
        years.setdefault(key, Year(key)).articles.append(item)
    return [Page(kind=kind.name, path=url_to_path(kind.url_for(year=y.id)),
                 url=kind.url_for(year=y.id), template=kind.template, title="Year",
                 obj=y, articles=y.articles, language=site.language,
                 updated=max(a.updated for a in y.articles))
            for y in years.values()]


YEARLY = kinds.Kind(
    "yearly", "/years/{year}/", "yearly.html", _years, view=Year, key="year",
    seo="CollectionPage", beacon="yearly", interface_title=True,
    messages={"fr": {"Year": "Année"}})
TEMPLATE = """{% extends "base.html" %}
{% block content %}<h1>{{ t(page.title) }} {{ section.id }}</h1>
{% for item in page.articles %}{{ card(item) }}{% endfor %}{% endblock %}
"""


@pytest.fixture
def yearly() -> Iterator[kinds.Kind]:
    kinds.register(YEARLY)
    try:
        yield YEARLY
    finally:
        kinds.unregister(YEARLY.name)


def test_a_kind_declared_once_is_a_page_with_url_sitemap_entry_and_seo(
        tmp_path: Path, yearly: kinds.Kind) -> None:
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "yearly.html").write_text(TEMPLATE)
    config = make_config(tmp_path, language="fr")
    workspace = make_workspace([article(1), article(2), article(3, slug="years")])
    out = tmp_path / "out"
    run_build(config, BuildOptions(output=out, workspace=workspace))

    html = (out / "years" / "2024" / "index.html").read_text()
    assert "<h1>Année 2024</h1>" in html  # its template, its message in French
    assert f'<link rel="canonical" href="{SITE}/years/2024/">' in html
    assert "<title>Année – Test Site</title>" in html
    found = re.search(r'<script type="application/ld\+json">(.*?)</script>', html, re.S)
    assert found is not None
    jsonld = json.loads(found[1])
    assert jsonld["@type"] == "CollectionPage" and jsonld["url"] == f"{SITE}/years/2024/"
    assert '<meta name="robots" content="index,follow">' in html
    sitemap = (out / "sitemap.xml").read_text()
    assert f"<loc>{SITE}/years/2024/</loc>" in sitemap
    # its first URL segment is kept from articles, and its beacon says what it is
    assert "years" in reserved()
    assert not (out / "years" / "index.html").exists()
    assert (out / "years-2" / "index.html").is_file()
    site = build_site(config, workspace)
    page = next(p for p in site.pages if p.kind == "yearly")
    beacon = BeaconSettings(endpoint="https://api.example.test/a", key="k", site_slug="s",
                            script_url="/b.js")
    assert beacon_attrs(beacon, page)["data-page-type"] == "yearly"


def test_a_build_after_an_article_changes_renders_its_years_page_again(
        tmp_path: Path, yearly: kinds.Kind) -> None:
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "yearly.html").write_text(TEMPLATE)
    config = make_config(tmp_path)
    out = tmp_path / "out"
    run_build(config, BuildOptions(output=out, workspace=make_workspace(
        [article(1), article(2)])))
    before = (out / "years" / "2024" / "index.html").read_text()
    report = run_build(config, BuildOptions(output=out, workspace=make_workspace(
        [article(1), article(2, title="Retitled")])))
    assert "years/2024/index.html" in report.written
    assert "Retitled" in (out / "years" / "2024" / "index.html").read_text() != before


@dataclass(eq=False, slots=True)
class Stray:
    """A view no page kind declares."""

    id: str


def test_a_view_no_kind_declares_is_a_clear_error(tmp_path: Path) -> None:
    def strays(kind: kinds.Kind, site: Site, laid: Sequence[Page]) -> list[Page]:
        return [Page(kind=kind.name, path="stray/index.html", url="/stray/",
                     template="home.html", title="Stray", obj=Stray("x"))]

    kinds.register(kinds.Kind("stray", "/stray/", "home.html", strays))
    try:
        config = make_config(tmp_path)
        site = build_site(config, make_workspace([article(1)]))
        with pytest.raises(BuildError) as caught:
            Renderer(config, site, ThemeSet(config))
    finally:
        kinds.unregister("stray")
    message = str(caught.value)
    assert "stray/index.html" in message and "Stray" in message
    assert "page kinds registry" in message and "\n" not in message


def test_an_undeclared_kind_is_a_clear_error() -> None:
    with pytest.raises(BuildError, match="'nope' is not declared"):
        kinds.kind_of("nope")


def test_the_registry_derives_what_was_spread_over_modules() -> None:
    assert reserved() >= {"agents", "topics", "authors", "tags", "lang", "social", "search",
                          "feed.xml", "feed", "sitemap.xml", "robots.txt", "404.html", "404"}
    assert [k.name for k in kinds.indexed_kinds()] == ["agent", "cluster", "author", "tag"]
    assert {k.name for k in kinds.feed_kinds()} == {
        "agent", "cluster", "author", "tag", "language"}
    assert kinds.kind_of("article").seo == "BlogPosting"
    assert kinds.kind_of("home").beacon == "workspace"
