"""Bodies kept in the content store: reused bodies give the same pages; what keys them."""

from __future__ import annotations

from pathlib import Path

from render_factory import article, make_config, make_workspace

from sitegen.config import Config
from sitegen.model import build_site
from sitegen.model.views import Site
from sitegen.render.bodies import BodyCache, body_fingerprint
from sitegen.render.markdown import Heading
from sitegen.render.pages import Renderer
from sitegen.render.pool import render_all as render_pool
from sitegen.render.themes import ThemeSet
from sitegen.store import STORE_FILE
from sitegen.storefile import open_store


def small_site(config: Config, extra: str = "") -> Site:
    arts = [article(n, content=f"# Part {n}\n\nSome *words* and [a link](https://x.test/).\n"
                               f"\n```python\nprint({n})\n```\n{extra if n == 1 else ''}")
            for n in range(1, 5)]
    arts.append(article(9, blocks=[{"type": "header", "content": "Blocky", "level": 1},
                                   {"type": "text", "content": "Plain **text**"}]))
    return build_site(config, make_workspace(arts))


def renderer_for(config: Config, site: Site) -> Renderer:
    themes = ThemeSet(config)
    store = BodyCache(open_store(config.cache_path, "test"), body_fingerprint(
        themes.template_dirs(), site.base_url, themes.fingerprint()))
    return Renderer(config, site, themes, bodies=store)


def render_all(renderer: Renderer) -> dict[str, bytes]:
    return {path: data for path, (data, _) in render_pool(renderer, renderer.site.pages, 1)}


def test_stored_bodies_give_byte_identical_pages(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    site = small_site(config)
    first = renderer_for(config, site)
    cold = render_all(first)
    assert len(first.fresh_bodies) == len(site.articles)
    first.save_bodies(site.articles)
    assert (config.cache_path / STORE_FILE).is_file()

    second = renderer_for(config, site)
    second.preload_bodies(site.articles)
    warm = render_all(second)
    assert second.fresh_bodies == {}  # nothing rendered again
    assert warm == cold


def test_a_body_found_in_the_store_is_used_as_stored(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    site = small_site(config)
    renderer = renderer_for(config, site)
    target = site.articles[0]
    assert renderer.store is not None
    renderer.store.save({target.body_hash: ("<p>from the store</p>", [Heading(2, "x", "X")])},
                        [target.body_hash])
    html, toc = renderer.body(target)
    assert str(html) == "<p>from the store</p>" and toc == [Heading(2, "x", "X")]


def test_bodies_of_removed_articles_are_dropped(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    site = small_site(config)
    renderer = renderer_for(config, site)
    render_all(renderer)
    renderer.save_bodies(site.articles[:2])
    assert renderer.store is not None
    kept = renderer.store.get_many(a.body_hash for a in site.articles)
    assert set(kept) == {a.body_hash for a in site.articles[:2]}


def test_the_fingerprint_follows_block_templates_and_base_url(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    themes = ThemeSet(config)
    base = body_fingerprint(themes.template_dirs(), "https://a.test", "chain")
    assert body_fingerprint(themes.template_dirs(), "https://a.test", "other") == base
    assert body_fingerprint(themes.template_dirs(), "https://b.test", "chain") != base
    override = tmp_path / "templates" / "blocks"
    override.mkdir(parents=True)
    (override / "text.html").write_text("<p class=mine>{{ block.html }}</p>\n")
    changed = ThemeSet(config)
    assert body_fingerprint(changed.template_dirs(), "https://a.test", "chain") != base
    (override / "text.html").write_text('{% include "blocks/unknown.html" %}\n')
    nested = body_fingerprint(changed.template_dirs(), "https://a.test", "chain")
    assert body_fingerprint(changed.template_dirs(), "https://a.test", "other") != nested


def test_a_page_template_change_keeps_the_stored_bodies(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    themes = ThemeSet(config)
    before = body_fingerprint(themes.template_dirs(), "https://a.test", themes.fingerprint())
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "404.html").write_text('{% extends "default/404.html" %}\n')
    after_themes = ThemeSet(config)
    assert after_themes.fingerprint() != themes.fingerprint()
    assert body_fingerprint(after_themes.template_dirs(), "https://a.test",
                            after_themes.fingerprint()) == before


def test_a_build_with_no_fresh_body_leaves_the_store_alone(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    site = small_site(config)
    renderer = renderer_for(config, site)
    render_all(renderer)
    renderer.save_bodies(site.articles)
    store = config.cache_path / STORE_FILE
    before = {p.name: p.stat().st_mtime_ns for p in store.parent.glob(STORE_FILE + "*")}
    assert before
    again = renderer_for(config, site)
    again.preload_bodies(site.articles)
    render_all(again)
    assert again.fresh_bodies == {}
    again.save_bodies(site.articles[:1])  # fewer articles, but nothing new: no rewrite
    after = {p.name: p.stat().st_mtime_ns for p in store.parent.glob(STORE_FILE + "*")}
    assert after == before
    assert again.store is not None
    assert len(again.store.get_many(a.body_hash for a in site.articles)) == len(site.articles)


def test_listing_the_stored_keys_reads_an_index_not_the_bodies(tmp_path: Path) -> None:
    """A one-article rebuild lists the stored keys to drop stale bodies: not every body."""
    import sqlite3

    config = make_config(tmp_path)
    site = small_site(config)
    renderer = renderer_for(config, site)
    render_all(renderer)
    renderer.save_bodies(site.articles)
    db = sqlite3.connect(config.cache_path / STORE_FILE)
    plan = str(db.execute("EXPLAIN QUERY PLAN SELECT key FROM derived WHERE kind = ?",
                          ["body"]).fetchall())
    assert "COVERING INDEX" in plan, plan
