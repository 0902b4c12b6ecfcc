"""Metadata: no canonical on 404, og:locale, image alt texts, publisher logo, build warnings."""

from __future__ import annotations

import dataclasses
import json
import logging
import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from render_factory import article, demo_workspace, make_config, make_workspace

from sitegen.model import build_site
from sitegen.model.views import Page, Site
from sitegen.render.fingerprints import Registry
from sitegen.render.i18n import english
from sitegen.render.pages import Renderer
from sitegen.render.seo import PageMeta, is_svg, meta_sources, page_meta, site_warnings
from sitegen.render.themes import ThemeSet


def test_404_has_no_canonical_and_articles_have_image_alts_and_a_publisher_logo(
        tmp_path: Path) -> None:
    config = make_config(tmp_path, description="A site.")
    renderer = Renderer(config, build_site(config, demo_workspace()), ThemeSet(config),
                        asset_url=lambda name: "/static/x." + name)
    pages = {p.kind: p for p in renderer.site.pages if p.kind in {"404", "home"}}
    missing = renderer.render(pages["404"]).decode()
    assert 'rel="canonical"' not in missing and 'og:url' not in missing
    assert '<meta property="og:locale" content="en_US">' in missing
    with_image = next(p for p in renderer.site.pages if p.article and p.article.image)
    html = renderer.render(with_image).decode()
    assert with_image.article is not None
    alt = with_image.article.image_alt.replace("'", "&#39;")  # the image's, not the title
    assert alt and alt != with_image.article.title
    assert f'<meta property="og:image:alt" content="{alt}">' in html
    assert f'<meta name="twitter:image:alt" content="{alt}">' in html
    data = json.loads(re.search(r'ld\+json">(.*?)</script>', html).group(1))  # type: ignore[union-attr]
    assert data["publisher"]["logo"] == {  # a raster: search engines read no SVG logo
        "@type": "ImageObject", "url": "https://site.example.test/static/x.logo.png"}


def test_an_image_with_no_alt_gives_no_share_alt_and_a_body_image_none(
        tmp_path: Path) -> None:
    arts = [article(1, title="Jars", content="Intro.\n\n## Salt\n\n![](https://img.test/a.png)"),
            article(2, title="Bread", content="![A loaf, *sliced*](https://img.test/b.png)")]
    config = make_config(tmp_path, description="A site.")
    site = build_site(config, make_workspace(arts))
    renderer = Renderer(config, site, ThemeSet(config))
    html = {p.article.title: renderer.render(p).decode() for p in site.pages if p.article}
    assert 'property="og:image" content="https://img.test/a.png"' in html["Jars"]
    assert "og:image:alt" not in html["Jars"] and "twitter:image:alt" not in html["Jars"]
    assert 'src="https://img.test/a.png" alt=""' in html["Jars"]  # no guess (issue 53, 10)
    assert '<meta property="og:image:alt" content="A loaf, sliced">' in html["Bread"]
    # the title an image may take its alt from keys the body: a new title, a new body key
    renamed = build_site(config, make_workspace([{**arts[0], "title": "Jars, again"}]))
    assert renamed.articles[0].body_hash != site.articles[1].body_hash
    blocks = [{"type": "image", "url": "https://img.test/c.png", "caption": "A crumb"}]
    captioned = [build_site(config, make_workspace([article(3, title=title, blocks=blocks)]))
                 for title in ("Crumb", "Crumbs")]  # (its caption names it: no title needed)
    assert captioned[0].articles[0].body_hash == captioned[1].articles[0].body_hash


def test_svg_share_images_and_an_empty_description_warn_once(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    assert is_svg("https://x.test/a.SVG?v=1") and not is_svg("https://x.test/svg.png")
    arts = [article(n, content=f"![Chart](https://img.test/{n}.svg)\n\nText.") for n in (1, 2)]
    config = make_config(tmp_path)  # what `sitegen init` writes: description = ""
    site = build_site(config, make_workspace(arts))
    found = site_warnings(site)
    assert len(found) == 2
    assert "2 article(s) have an SVG share image" in found[0]
    assert "[site] description is empty" in found[1]
    with caplog.at_level(logging.WARNING):
        Renderer(config, site, ThemeSet(config)).warn_metadata()
    assert caplog.text.count("description is empty") == 1
    described = make_config(tmp_path, description="Notes.")
    assert site_warnings(build_site(described, make_workspace([article(3)]))) == []


def test_the_home_and_each_language_list_name_one_another_as_hreflang_alternates(
        tmp_path: Path) -> None:
    config = make_config(tmp_path)
    renderer = Renderer(config, build_site(config, demo_workspace()), ThemeSet(config))
    expected = sorted(
        f'<link rel="alternate" hreflang="{code}" href="https://site.example.test{url}">'
        for code, url in (("en", "/lang/en/"), ("fr", "/lang/fr/"), ("de", "/lang/de/"),
                          ("x-default", "/")))
    found = {}
    for page in renderer.site.pages:
        html = renderer.render(page).decode()
        found[(page.kind, page.number)] = sorted(
            re.findall(r'<link rel="alternate" hreflang="[^"]*" href="[^"]*">', html))
    for key, links in found.items():  # the same set, naming every page of it, on each one
        listed = key in {("home", 1), ("language", 1)}
        assert links == (expected if listed else []), key


def test_a_site_in_one_language_names_no_alternates(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    site = build_site(config, make_workspace([article(1), article(2)]))
    home = next(p for p in site.pages if p.kind == "home")
    assert "hreflang" not in Renderer(config, site, ThemeSet(config)).render(home).decode()


def _changed(value: object) -> object:
    """Another value of *value*'s type (None when this test leaves such a field alone)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, str):
        return value + "·"
    if isinstance(value, int):
        return value + 1
    if isinstance(value, datetime):
        return value + timedelta(days=1)
    if isinstance(value, list):
        return [*reversed(value), *value[:1]] if value else None
    return None


def test_the_seo_values_read_no_entity_but_those_meta_sources_names(tmp_path: Path) -> None:
    """`meta_sources` names every entity `page_meta` looks into (the render fingerprints a
    page's context by them): change any other entity of a site, every field at once, and
    no page's SEO values change; change one it names and some page's do."""
    config = make_config(tmp_path, description="A site.")
    workspace = demo_workspace()
    workspace = workspace.model_copy(update={"articles": [
        a.model_copy(update={"language": "fr"}) if i % 3 == 0 else a
        for i, a in enumerate(workspace.articles)]})  # (two languages: the alternates)
    site = build_site(config, workspace)
    assert len(site.languages) > 1
    registry = Registry(site)
    body_images = {a.body_hash: [f"https://img.test/{a.id}.png"] for a in site.articles}

    def meta(page: Page) -> PageMeta:
        return page_meta(site, page, "https://logo.test/x.png", lambda url: url + "?shown",
                         english, body_images)

    pages = [*site.pages]
    before = [meta(page) for page in pages]
    sources = [{id(page), id(site), id(page.obj),
                *map(id, meta_sources(site, page, body_images)[0])} for page in pages]
    outside = seen = 0
    for entity in registry.objects.values():
        if isinstance(entity, (Site, Page)):
            continue
        fields = {f.name: getattr(entity, f.name) for f in dataclasses.fields(entity)
                  if f.name != "kind"}  # (a view's page kind: a registry name, not content)
        for name, value in fields.items():
            if (other := _changed(value)) is not None:
                object.__setattr__(entity, name, other)
        try:
            for page, old, named in zip(pages, before, sources, strict=True):
                if id(entity) not in named:
                    outside += 1
                    assert meta(page) == old, (type(entity).__name__, page.path)
                elif meta(page) != old:
                    seen += 1
        finally:
            for name, value in fields.items():
                object.__setattr__(entity, name, value)
    assert outside > 10_000 and seen > 100, (outside, seen)
    assert [meta(page) for page in pages] == before
