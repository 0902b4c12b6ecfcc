"""Renderer: page contexts, SEO, beacon tag, recorded reads, parallel rendering, hostile content."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from render_factory import (
    XSS,
    article,
    hostile_workspace,
    make_config,
    make_workspace,
    page_kinds,
)
from render_safety import problems

from sitegen.config import Config, parse_config
from sitegen.model import build_site
from sitegen.render.pages import BeaconSettings, Renderer
from sitegen.render.pool import render_all
from sitegen.render.themes import ThemeSet

AGENT = "a" * 24


def rich_site(config: Config):  # type: ignore[no-untyped-def]
    arts = [article(n, agentId=AGENT, clusterId="c" * 24, authorIdentityId="b" * 24,
                    language="de" if n == 3 else "en", tags=["Alpha"],
                    meta={"keywords": "one, two"},
                    blocks=[{"type": "header", "content": "Part", "level": 1},
                            {"type": "image", "url": "/media/x.png", "caption": "Cap"},
                            {"type": "text", "content": "Words"}] if n % 2 else None)
            for n in range(1, 6)]
    ws = make_workspace(arts, agents=[{"id": AGENT, "name": "Bot"}],
                        clusters=[{"id": "c" * 24, "name": "Topic", "color": "#123456"}],
                        authors=[{"id": "b" * 24, "name": "Ann", "bio": "Writes."}],
                        social_posts=[{"id": "d" * 24, "title": "Post", "content": "Hi"}])
    return build_site(config, ws)


def page_html(renderer: Renderer, kind: str, number: int = 1) -> str:
    page = next(p for p in renderer.site.pages if p.kind == kind and p.number == number)
    return renderer.render(page).decode()


def test_every_kind_renders_with_seo(tmp_path: Path) -> None:
    config = make_config(tmp_path, per_page=2)
    site = rich_site(config)
    renderer = Renderer(config, site, ThemeSet(config))
    kinds = {p.kind for p in site.pages}
    assert kinds == page_kinds()
    for page in site.pages:
        html = renderer.render(page).decode()
        assert html.startswith("<!doctype html>")
        canonical = f'<link rel="canonical" href="https://site.example.test{page.url}">'
        assert (canonical in html) == (page.kind != "404"), page.path
        assert ("rel=\"canonical\"" in html) == (page.kind != "404"), page.path
        assert html.count("<h1") == 1
        assert problems(html, allow_scripts=True) == []
    art = next(p for p in site.pages if p.kind == "article" and p.article
               and p.article.body_kind == "blocks")
    html = renderer.render(art).decode()
    assert '<html lang="en">' in html
    assert '<meta name="keywords" content="one, two">' in html
    assert '<meta property="og:image" content="https://site.example.test/media/x.png">' in html
    data = json.loads(re.search(r'ld\+json">(.*?)</script>', html).group(1))  # type: ignore
    assert data["@type"] == "BlogPosting" and data["author"]["name"] == "Ann"
    assert '<h2 id="part">Part</h2>' in html
    german = next(p for p in site.pages if p.article and p.article.language == "de")
    assert '<html lang="de">' in renderer.render(german).decode()
    home2 = page_html(renderer, "home", 2)
    assert '<link rel="prev" href="/">' in home2 and '<link rel="next" href="/page/3/">' in home2
    assert 'type="application/atom+xml"' in home2 and 'href="/feed.xml"' in home2
    tag = page_html(renderer, "tag")
    assert 'href="/tags/alpha/feed.xml"' in tag
    assert "noindex" in page_html(renderer, "404")


def test_beacon_tag(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    site = rich_site(config)
    beacon = BeaconSettings("https://api.test/api/v2/workspaces/w/analytics", "pub-key",
                            "my-site", "/static/beacon.js")
    renderer = Renderer(config, site, ThemeSet(config), beacon=beacon)
    art = next(p for p in site.pages if p.kind == "article")
    tag = re.search(r"<script src=\"/static/beacon[^>]*></script>", renderer.render(art).decode())
    assert tag is not None
    text = tag.group(0)
    assert text.startswith('<script src="/static/beacon.js" defer ')
    for expected in ['data-endpoint="https://api.test/api/v2/workspaces/w/analytics"',
                     'data-key="pub-key"', 'data-site-slug="my-site"',
                     'data-page-type="article"', f'data-article-id="{art.article.id}"',
                     f'data-agent-id="{AGENT}"', f'data-article-slug="{art.article.slug}"']:
        assert expected in text
    assert 'data-page-type="workspace"' in page_html(renderer, "home")
    agent = page_html(renderer, "agent")
    assert 'data-page-type="agent"' in agent and f'data-agent-id="{AGENT}"' in agent
    tag_page = page_html(renderer, "tag")
    assert 'data-page-type="unknown"' in tag_page and "data-article-id" not in tag_page
    assert "pub-key" not in repr(beacon)
    plain = Renderer(config, site, ThemeSet(config))
    assert "beacon" not in plain.render(art).decode()  # (scheme.js is every page's)
    assert "data-visitor" not in text  # the default: a visitor id per browser session
    persistent = Renderer(config, site, ThemeSet(config), beacon=BeaconSettings(
        beacon.endpoint, "pub-key", "my-site", "/static/beacon.js", visitor="persistent"))
    assert 'data-visitor="persistent"' in persistent.render(art).decode()
    assert persistent.context_fingerprint(art) != renderer.context_fingerprint(art)


def test_asset_url_and_subpath(tmp_path: Path) -> None:
    config = make_config(tmp_path, url="https://x.test/blog/")
    site = rich_site(config)
    renderer = Renderer(config, site, ThemeSet(config),
                        asset_url=lambda name: f"/static/{name}?v=1")
    html = page_html(renderer, "home")
    assert 'href="/blog/static/site.css?v=1"' in html
    assert 'href="/blog/"' in html
    assert '<link rel="canonical" href="https://x.test/blog/">' in html


def test_an_article_page_records_its_article_and_the_templates_it_used(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    site = build_site(config, make_workspace([
        article(1, tags=["alone"]), article(2, tags=["other"], clusterId=None)]))
    renderer = Renderer(config, site, ThemeSet(config))
    page = next(p for p in site.pages if p.article is not None and p.article.id.endswith("1"))
    other = next(a for a in site.articles if a is not page.article)
    data, reads = renderer.render_recorded(page)
    assert data == renderer.render(page)
    assert f"article:{page.article.id}" in reads  # type: ignore[union-attr]
    assert {"T\x00article.html", "T\x00base.html"} <= reads
    assert "tag:other" not in reads and f"article:{other.id}" in reads  # what it shows
    assert not any(read.startswith("T\x00home.html") for read in reads)
    tag = next(p for p in site.pages if p.kind == "tag" and p.obj is not None
               and getattr(p.obj, "name", "") == "alone")
    _, listed = renderer.render_recorded(tag)
    assert f"article:{page.article.id}" in listed  # type: ignore[union-attr]
    assert "T\x00article.html" not in listed


def test_a_reads_fingerprint_follows_what_it_gives(tmp_path: Path) -> None:
    config = make_config(tmp_path)

    def renderer(title: str) -> Renderer:
        site = build_site(config, make_workspace([article(1, title=title), article(2)]))
        return Renderer(config, site, ThemeSet(config))

    one, same, retitled = renderer("First"), renderer("First"), renderer("Second")
    page = next(p for p in one.site.pages if p.article is not None and p.article.title == "First")
    _, reads = one.render_recorded(page)
    title = f"article:{page.article.id}"  # type: ignore[union-attr]
    assert title in reads
    assert all(one.fingerprints.of(r) == same.fingerprints.of(r) for r in reads)
    changed = {r for r in reads if one.fingerprints.of(r) != retitled.fingerprints.of(r)}
    assert title in changed
    assert "T\x00article.html" not in changed
    gone = Renderer(config, build_site(config, make_workspace([article(2)])), ThemeSet(config))
    assert gone.fingerprints.of(title) == b""  # a read of an article that is no more


def test_a_site_template_override_records_what_it_reads(tmp_path: Path) -> None:
    """Whatever a site's own templates read is recorded, not only the built-in themes."""
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "base.html").write_text(
        '{% extends "default/base.html" %}{% block head %}{{ super() }}'
        "<!-- newest: {% for a in site.articles[:1] %}{{ a.slug }}{% endfor %} -->"
        "{% endblock %}")
    config = make_config(tmp_path)
    site = build_site(config, make_workspace([article(n) for n in range(1, 4)]))
    renderer = Renderer(config, site, ThemeSet(config))
    newest = site.articles[0]
    for page in site.pages:
        data, reads = renderer.render_recorded(page)
        assert f"<!-- newest: {newest.slug} -->".encode() in data, page.path
        assert {"site", "site.articles", "T\x00default/base.html"} <= reads
        assert f"article:{newest.id}" in reads, page.path


def test_the_context_fingerprint_is_stable_and_sensitive(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    site = rich_site(config)
    a = Renderer(config, site, ThemeSet(config))
    b = Renderer(config, rich_site(config), ThemeSet(config))
    assert [a.context_fingerprint(p) for p in a.site.pages] == [
        b.context_fingerprint(p) for p in b.site.pages]
    assert len({a.context_fingerprint(p) for p in site.pages}) == len(
        {p.template for p in site.pages})  # (what else the context holds is among its reads)
    article = next(p for p in site.pages if p.article is not None and p.article.author)
    assert article.article is not None and article.article.author is not None
    reads = a.context_reads(article)
    assert {f"page:{article.path}", "site", "site.languages", f"article:{article.article.id}",
            a.registry.keys[id(article.article.author)]} <= set(reads)
    assert set(reads) <= a.render_recorded(article)[1]
    beacon = Renderer(config, site, ThemeSet(config),
                      beacon=BeaconSettings("https://e.test/x", "k", "s", "/b.js"))
    assets = Renderer(config, site, ThemeSet(config), assets_fingerprint="other")
    page = site.pages[0]
    assert len({a.context_fingerprint(page), beacon.context_fingerprint(page),
                assets.context_fingerprint(page)}) == 3


def test_parallel_rendering_matches_serial(tmp_path: Path) -> None:
    config = make_config(tmp_path, per_page=1)
    ws = make_workspace([article(n, tags=[f"t{n % 7}"]) for n in range(1, 120)])
    site = build_site(config, ws)
    assert len(site.pages) > 200
    serial, parallel = ([(path, data, reads) for path, (data, reads) in render_all(
        Renderer(config, site, ThemeSet(config)), site.pages, workers=workers)]
        for workers in (1, 2))
    assert [path for path, _, _ in serial] == [p.path for p in site.pages]
    assert all(reads for _, _, reads in serial)
    assert [(path, data) for path, data, _ in serial] == [
        (path, data) for path, data, _ in parallel]
    # A cached partial records the context of the page that rendered it first, which is
    # another page in each worker: apart from those, both record the same reads.
    assert [own_reads(path, reads) for path, _, reads in serial] == [
        own_reads(path, reads) for path, _, reads in parallel]


def frozen_objects(page: object, reads: object, data: bytes) -> int:
    """A pack that answers how many objects the worker's collector leaves alone."""
    import gc

    return gc.get_freeze_count()


def test_the_workers_collector_leaves_what_they_inherit_alone(tmp_path: Path) -> None:
    """The pool's workers never walk (so never copy) the site they inherit when they
    collect garbage: it is frozen before the fork, and thawed in the building process after
    (a preview lives on)."""
    import gc

    config = make_config(tmp_path, per_page=1)
    site = build_site(config, make_workspace([article(n) for n in range(1, 120)]))
    assert len(site.pages) > 200
    frozen = [count for _, count in render_all(Renderer(config, site, ThemeSet(config)),
                                                site.pages, workers=2, pack=frozen_objects)]
    assert min(frozen) > 10_000
    assert gc.get_freeze_count() == 0


def own_reads(path: str, reads: frozenset[str]) -> frozenset[str]:
    """*reads* without the contexts of cached partials and other pages' fields."""
    return frozenset(read for read in reads if not read.startswith("C\x00") and (
        not read.startswith("page:") or read == "page:" + path))


def count_markdown_renders(renderer: Renderer) -> Any:
    """A counter of *renderer*'s Markdown renders, shared with the workers it forks."""
    import multiprocessing

    renders = multiprocessing.Value("i", 0)
    markdown_render = renderer.markdown.render

    def counted(*args: object, **kwargs: object) -> object:
        with renders.get_lock():
            renders.value += 1
        return markdown_render(*args, **kwargs)  # type: ignore[arg-type]

    renderer.markdown.render = counted  # type: ignore[method-assign]
    return renders


def test_bodies_workers_rendered_come_back_to_the_parent(tmp_path: Path) -> None:
    """Feeds are rendered in the parent after the pages: they reuse the workers' bodies."""
    config = make_config(tmp_path, per_page=1)
    site = build_site(config, make_workspace([article(n) for n in range(1, 120)]))
    assert len(site.pages) > 200
    renderer = Renderer(config, site, ThemeSet(config))
    renders = count_markdown_renders(renderer)
    assert len(list(render_all(renderer, site.pages, workers=2))) == len(site.pages)
    assert set(renderer.fresh_bodies) == {a.body_hash for a in site.articles}
    feed = "".join(renderer.article_html(a) for a in site.articles)
    assert renders.value == len(site.articles)  # once each: the parent rendered none again
    assert feed == "".join(Renderer(config, site, ThemeSet(config)).article_html(a)
                           for a in site.articles)


def test_each_body_is_rendered_once_when_pages_and_feeds_share_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A feed shows the bodies of articles whose pages another worker renders: the bodies
    come first (`render_bodies`, over workers of their own), so the page workers forked
    after inherit them all and render none again. Without that step, the feeds' workers
    rendered again the bodies the other worker had."""
    from sitegen.render import pool

    monkeypatch.setattr(pool, "PARALLEL_THRESHOLD", 20)  # (a pool for a small site)
    config = make_config(tmp_path, per_page=1)
    site = build_site(config, make_workspace([article(n, tags=[f"t{n % 5}"])
                                              for n in range(1, 60)]))
    pages = [*site.pages, *site.files]
    renderer = Renderer(config, site, ThemeSet(config))
    shown = renderer.shown_articles(pages)
    assert len(shown) > len(site.articles)  # the feeds show bodies the pages show too
    renders = count_markdown_renders(renderer)
    assert pool.render_bodies(renderer, shown, workers=2) == len(site.articles)
    assert renders.value == len(site.articles)
    assert set(renderer.fresh_bodies) == {a.body_hash for a in site.articles}
    assert len(list(render_all(renderer, pages, workers=2))) == len(pages)
    assert renders.value == len(site.articles)  # the page workers rendered none again
    assert pool.render_bodies(renderer, shown, workers=2) == 0  # all in memory now


def test_article_html_is_the_sanitized_body(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    site = build_site(config, make_workspace([article(1, content="# T\n\n[x](javascript:y)")]))
    html = Renderer(config, site, ThemeSet(config)).article_html(site.articles[0])
    assert html.startswith('<h2 id="t">T</h2>') and "<a" not in html


def test_hostile_workspace_renders_nothing_executable(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    site = build_site(config, hostile_workspace())
    renderer = Renderer(config, site, ThemeSet(config))
    assert site.clusters[0].colour == "#6b7280"
    for page in site.pages:
        html = renderer.render(page).decode()
        assert problems(html, allow_scripts=True) == [], page.path
        assert XSS not in html
        assert "<script>" not in html
    for art in site.articles:
        assert problems(renderer.article_html(art)) == []


def test_section_indexes_link_every_section_with_its_count_and_are_linked(
        tmp_path: Path) -> None:
    config = make_config(tmp_path, per_page=2)
    site = rich_site(config)
    renderer = Renderer(config, site, ThemeSet(config))
    pages = {p.url: p for p in site.pages if p.kind == "terms"}
    assert set(pages) == {"/agents/", "/topics/", "/authors/", "/tags/"}
    html = renderer.render(pages["/tags/"]).decode()
    assert "<h1>Tags</h1>" in html
    assert re.search(r'<a href="/tags/alpha/">#Alpha</a>\s*<span class="terms__count">'
                     r'<span aria-hidden="true">5</span><span class="visually-hidden">5 articles<',
                     html)
    topics = renderer.render(pages["/topics/"]).decode()
    assert 'style="--accent: #123456"' in topics and '<a href="/topics/topic/">' in topics
    home = page_html(renderer, "home")
    for url in pages:  # the footer of every page links each index
        assert f'href="{url}"' in home


def test_section_indexes_escape_hostile_names(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    site = build_site(config, hostile_workspace())
    renderer = Renderer(config, site, ThemeSet(config))
    indexes = [p for p in site.pages if p.kind == "terms"]
    assert {p.url for p in indexes} >= {"/tags/", "/topics/"}
    for page in indexes:
        html = renderer.render(page).decode()
        assert XSS not in html and problems(html, allow_scripts=True) == [], page.url


def test_template_helpers_call_through_and_want_no_context(tmp_path: Path) -> None:
    from sitegen.render.pages import TemplateHelper

    config = make_config(tmp_path)
    site = build_site(config, make_workspace([article(1)]))
    renderer = Renderer(config, site, ThemeSet(config))
    context = renderer.context(site.pages[0])
    for name in ("link", "asset", "card", "absolute"):
        helper = context[name]
        assert isinstance(helper, TemplateHelper)
        assert helper.jinja_pass_arg is None
        assert getattr(helper.__call__, "jinja_pass_arg", "missing") is None
    assert context["link"]("/a/") == renderer.link("/a/")  # type: ignore[operator]
    assert context["asset"]("x.css") == renderer.asset("x.css")  # type: ignore[operator]


@pytest.mark.parametrize("fault", ["stuck", "killed"])
def test_a_stuck_or_killed_render_worker_fails_the_build_instead_of_hanging(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str) -> None:
    import os
    import signal
    import time

    from sitegen.errors import BuildError
    from sitegen.render import pool

    monkeypatch.setattr(pool, "WORKER_TIMEOUT", 1.0)
    config = make_config(tmp_path, per_page=1)
    site = build_site(config, make_workspace([article(n) for n in range(1, 120)]))
    renderer = Renderer(config, site, ThemeSet(config))
    parent, victim = os.getpid(), site.pages[100].path
    render = renderer.render_recorded

    def faulty(page: object) -> tuple[bytes, frozenset[str]]:
        if os.getpid() != parent and getattr(page, "path", None) == victim:
            if fault == "killed":
                os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(60)
        return render(page)  # type: ignore[arg-type]

    renderer.render_recorded = faulty  # type: ignore[method-assign]
    rendered: list[str] = []
    with pytest.raises(BuildError, match="render worker gave no answer"):
        for path, _ in render_all(renderer, site.pages, workers=2):
            rendered.append(path)
    assert victim not in rendered
    assert rendered == [p.path for p in site.pages[:len(rendered)]]


@pytest.mark.parametrize("theme", ["default", "magazine"])
def test_cached_partials_give_the_bytes_a_plain_include_gives(tmp_path: Path, theme: str) -> None:
    """base.html renders nav and footer once per variant: every page must be unchanged."""
    import httpx

    from sitegen.emulator.app import create_app
    from sitegen.emulator.generator import generate_workspace
    from sitegen.render.themes import builtin_themes_root
    from tests.content import synced

    data = generate_workspace(160, seed=5)  # 40 clusters ("All topics"), social posts, tags

    def configured(root: Path) -> Config:
        return parse_config({
            "site": {"title": "T", "url": "https://site.example.test/", "theme": theme,
                     "per_page": 3},
            "api": {"url": "http://emulator.test", "workspace": data["workspace"]["id"]},
        }, root)

    config = configured(tmp_path / "cached")
    workspace = synced(config, key="k", transport=httpx.ASGITransport(app=create_app(data)))
    site = build_site(config, workspace)
    kinds = {page.kind for page in site.pages}
    assert {"home", "article", "cluster", "tag", "agent", "author", "terms", "social"} <= kinds
    cached = Renderer(config, site, ThemeSet(config))

    base = (builtin_themes_root() / "default" / "templates" / "base.html").read_text()
    assert base.count("cached_partial(") == 2
    plain = re.sub(r'\{\{ cached_partial\("([^"]+)".*\}\}\{#[^#]*#\}', r'{% include "\1" %}', base)
    (tmp_path / "plain" / "templates").mkdir(parents=True)
    (tmp_path / "plain" / "templates" / "base.html").write_text(plain)
    other = configured(tmp_path / "plain")
    included = Renderer(other, site, ThemeSet(other))
    for page in site.pages:
        same = cached.render(page) == included.render(page)
        assert same, f"{page.path} differs"



def test_a_render_pool_ends_whatever_sigterm_handler_its_workers_inherit(tmp_path: Path) -> None:
    """`Pool.terminate` ends workers with SIGTERM; a Python-level handler must not keep them.

    The preview installs one (it stops like Ctrl-C), and so may a program embedding sitegen.
    A worker that inherited one and took the signal just before it blocked on the pool's
    task-queue lock slept on, and the pool waited for it forever (seen: a preview build hung
    in `Pool.terminate`). Here the inherited handler ignores SIGTERM, the worst case: before
    the fix a run of pools hung within 17-44 of them, so 150 small pools in a row all but
    always did (the test failed both times it was run without the fix).
    """
    import os
    import signal
    import subprocess
    import sys

    script = f"""
import signal, sys
from pathlib import Path
sys.path.insert(0, {str(Path(__file__).parent)!r})
from render_factory import article, make_config, make_workspace
from sitegen.model import build_site
from sitegen.render import pool
from sitegen.render.pages import Renderer
from sitegen.render.themes import ThemeSet

signal.signal(signal.SIGTERM, lambda number, frame: None)  # a handler that ends nothing
pool.PARALLEL_THRESHOLD = 2  # a pool for a few pages: many pools, quickly
config = make_config(Path({str(tmp_path)!r}), per_page=1)
site = build_site(config, make_workspace([article(n) for n in range(1, 4)]))
renderer = Renderer(config, site, ThemeSet(config))
for _ in range(150):
    assert len(list(pool.render_all(renderer, site.pages, workers=2))) == len(site.pages)
print("rendered")
"""
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the process and its stuck workers
        process.communicate()
        pytest.fail("a render pool waited forever for a worker that inherited a SIGTERM handler")
    assert process.returncode == 0, err
    assert out.strip() == "rendered"


@pytest.mark.parametrize("source", ["{{ x|replace('a', 'b') }}", "{{ x|upper }}", "{{ x|string }}",
                                    "{{ x|wordcount }}", "{{ x|e }}"])
def test_a_filter_that_prints_an_entity_counts_as_reading_all_of_it(source: str) -> None:
    """Filters that turn their input into text read every field: a deep read is noted."""
    from sitegen.render.reads import RecordingEnvironment

    env = RecordingEnvironment()
    env.observe_filters()
    entity = object()
    with env.recording({id(entity): "article:1"}) as recorder:
        env.from_string(source).render(x=entity)
    assert recorder.reads == {"article:1"}
