"""Search in a real browser: Pagefind's UI on `/search/`, with JavaScript and without.

The demo workspace is built (default theme, then magazine) into a folder served on loopback
with its `_headers` rules applied (as `test_themes_a11y` serves it), so the page runs under
the site's own Content-Security-Policy. A word that occurs in one English article only
(found from the built pages' text, not hard-coded) is typed into Pagefind's search box: that
article is the first result, and the console shows no error (a CSP violation is one).
With JavaScript off, the header's search link leads to a page that says search needs it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from sitegen.build import BuildOptions, run_build
from sitegen.config import DEMO_WORKSPACE_ID, demo_config, parse_config
from sitegen.emit import search
from tests.browser.served import THEMES, chromium, serve_output
from tests.content import synced

pytestmark = pytest.mark.browser

_TAG = re.compile(r"<[^>]+>")
_ARTICLE = re.compile(r"<article class=\"article[^>]*>(.*?)</article>", re.S)
_BODY = re.compile(r'id="article-body" data-pagefind-body>(.*?)<footer class="article__footer">',
                   re.S)
_WORD = re.compile(r"[a-z]{9,}")
_STEMMED = re.compile(r"[a-z]{3,}")
#: Pages a search shard holds here: the demo's articles fill several shards of each language.
SHARD_PAGES = 2


def _unique_word(output: Path, shard: str | None = None) -> tuple[str, str]:
    """(word, article URL): a long word of one English article's body (of one whose page is
    in *shard*, if given) whose stem is in no other article's page (Pagefind stems words, as
    far as "additives" to "add": no word of another article may share its first three
    letters)."""
    found: dict[str, tuple[set[str], set[str]]] = {}  # url → (body words, every stem)
    for page in sorted(output.glob("*/index.html")):
        html = page.read_text(encoding="utf-8")
        article, body = _ARTICLE.search(html), _BODY.search(html)
        if article is None or body is None or '<html lang="en"' not in html:
            continue
        found[f"/{page.parent.name}/"] = (
            set(_WORD.findall(_TAG.sub(" ", body.group(1)).lower())),
            {word[:3] for word in _STEMMED.findall(_TAG.sub(" ", article.group(1)).lower())})
    stems = Counter(stem for _, every in found.values() for stem in every)
    for url, (body_words, _) in sorted(found.items()):
        if shard is not None and _shard(output, url) != shard:
            continue
        for word in sorted(body_words):
            if stems[word[:3]] == 1:
                return word, url
    raise AssertionError("no word occurs in one demo article only")


def _shard(output: Path, url: str) -> str:
    english = json.loads((output / "pagefind" / "shards.json").read_text())["languages"]["en"]
    return search.shard_of(url.strip("/") + "/index.html", "en",
                           search.shard_count(english["pages"], SHARD_PAGES))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[str, Path]]]:
    """theme → (base URL, output folder) of the demo, built with search on and served."""
    root = tmp_path_factory.mktemp("search")
    workspace = synced(demo_config(None, root))
    servers: list[ThreadingHTTPServer] = []
    found: dict[str, tuple[str, Path]] = {}
    try:
        for theme in THEMES:
            config = parse_config({
                "site": {"title": "Northwind Field Notes", "url": "http://127.0.0.1/",
                         "description": "Slow travel and quiet tooling", "theme": theme},
                "api": {"url": "http://127.0.0.1:9/", "workspace": DEMO_WORKSPACE_ID},
                "analytics": {"enabled": False},
            }, root / theme)
            output = root / theme / "_site"
            with pytest.MonkeyPatch.context() as patch:  # several shards of each language
                patch.setattr(search, "PAGES_PER_SHARD", SHARD_PAGES)
                run_build(config, BuildOptions(output=output, workspace=workspace, demo=True))
            url, server = serve_output(output)
            servers.append(server)
            found[theme] = (url, output)
        yield found
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("theme", THEMES)
def test_a_word_of_one_article_finds_it_first(
        served: dict[str, tuple[str, Path]], browser: Browser, theme: str, scheme: str) -> None:
    base, output = served[theme]
    word, url = _unique_word(output)
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        response = page.goto(base + "/")
        assert response is not None and response.status == 200
        page.click(".site-header .search-link")
        page.wait_for_url(base + "/search/")
        policy = response.headers.get("content-security-policy", "")
        assert "'wasm-unsafe-eval'" in policy
        box = page.locator("#search-input")
        box.fill(word)
        first = page.locator(".search-result__link").first
        first.wait_for(timeout=15000)
        assert first.get_attribute("href") == url, (word, url)
        text = page.locator(".search-result").first.inner_text()
        assert word in text.lower()
        # The results take the theme's colours: the excerpt its muted text.
        colour = page.evaluate("getComputedStyle(document.querySelector("
                               "'.search-result__excerpt')).color")
        theirs = page.evaluate("(() => { const p = document.createElement('p');"
                               " p.style.color = 'var(--muted)'; document.body.append(p);"
                               " const c = getComputedStyle(p).color; p.remove(); return c; })()")
        assert colour == theirs, (colour, theirs)
        assert errors == [], errors
    finally:
        context.close()


def test_a_query_in_the_address_runs(served: dict[str, tuple[str, Path]],
                                     browser: Browser) -> None:
    base, output = served["default"]
    word, url = _unique_word(output)
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{base}/search/?q={word}")
        first = page.locator(".search-result__link").first
        first.wait_for(timeout=15000)
        assert first.get_attribute("href") == url
    finally:
        context.close()


def test_a_word_of_one_article_is_found_first_whichever_shard_holds_it(
        served: dict[str, tuple[str, Path]], browser: Browser) -> None:
    """The index is in shards (Pagefind bundles merged in one UI): for each English shard,
    a word found in one article of that shard only is searched; that article comes first."""
    base, output = served["default"]
    shards = json.loads((output / "pagefind" / "shards.json").read_text())["languages"]["en"]
    assert len(shards["shards"]) >= 3
    context = browser.new_context()
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        tried = 0
        for shard in shards["shards"]:
            try:
                word, url = _unique_word(output, shard)
            except AssertionError:  # (a shard of one or two short articles)
                continue
            tried += 1
            page.goto(f"{base}/search/?q={word}")
            first = page.locator(".search-result__link").first
            first.wait_for(timeout=15000)
            assert first.get_attribute("href") == url, (shard, word, url)
        assert tried >= 3 and errors == [], (tried, errors)
    finally:
        context.close()


@pytest.mark.parametrize("theme", THEMES)
def test_without_javascript_the_search_link_leads_to_a_working_page(
        served: dict[str, tuple[str, Path]], browser: Browser, theme: str) -> None:
    base, _ = served[theme]
    context = browser.new_context(java_script_enabled=False, viewport={"width": 375,
                                                                       "height": 740})
    try:
        page = context.new_page()
        page.goto(base + "/")
        link = page.locator(".site-header .search-link")
        assert link.is_visible()
        box = link.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 375
        with page.expect_navigation():
            link.click()
        assert page.url == base + "/search/"
        assert page.locator("h1").inner_text() == "Search"
        notice = page.locator("noscript").first.inner_text()
        assert "needs JavaScript" in page.content() or "needs JavaScript" in notice
        topics = page.locator(".search-page__links a").all()
        assert topics, "the page offers no way on"
        for target in topics:
            href = target.get_attribute("href") or ""
            assert page.request.get(base + href).status == 200, href
    finally:
        context.close()
