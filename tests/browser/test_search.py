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
from typing import Any

import pytest
from playwright.sync_api import Browser

from sitegen.build import BuildOptions, run_build
from sitegen.config import DEMO_WORKSPACE_ID, demo_config, parse_config
from sitegen.emit import search
from tests.browser.served import THEMES, serve_output
from tests.content import synced

pytestmark = pytest.mark.browser

_TAG = re.compile(r"<[^>]+>")
_ARTICLE = re.compile(r"<article class=\"article[^>]*>(.*?)</article>", re.S)
_BODY = re.compile(r'id="article-body" data-pagefind-body>(.*?)<footer class="article__footer">',
                   re.S)
_WORD = re.compile(r"[a-z]{9,}")
_CODE = re.compile(r"<pre\b.*?</pre>", re.S)  # (never indexed: `search.EXCLUDED`)
_STEMMED = re.compile(r"[a-z]{3,}")
#: Pages a search shard holds here: the demo's articles fill several shards of each language.
SHARD_PAGES = 2


def _unique_word(output: Path, shard: str | None = None) -> tuple[str, str]:
    """(word, article URL): a long word of one English article's prose (of one whose page is
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
            set(_WORD.findall(_TAG.sub(" ", _CODE.sub(" ", body.group(1))).lower())),
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


def _until(page: Any, script: str) -> None:
    """Wait (15 s at most) until *script* is true in *page* (polled with `evaluate`: the
    site's CSP forbids the eval that `wait_for_function` uses)."""
    for _ in range(150):
        if page.evaluate(script):
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"never true: {script}")


def _results(page: Any, url: str) -> list[tuple[str, str, str]]:
    """(href, lang, excerpt) of every result of the search page *url* (all batches)."""
    page.goto(url)
    _until(page, "document.getElementById('search-status').textContent.trim() !== ''"
                 " && !document.getElementById('search-results').hasAttribute('aria-busy')")
    while page.locator("#search-more").is_visible():
        count = page.locator(".search-result").count()
        page.click("#search-more")
        _until(page, f"document.querySelectorAll('.search-result').length > {count}")
    return [tuple(row) for row in page.evaluate(
        "() => [...document.querySelectorAll('.search-result')].map(r => ["
        "r.querySelector('a').getAttribute('href'), r.lang || document.documentElement.lang,"
        " (r.querySelector('.search-result__excerpt') || {}).textContent || ''])")]


@pytest.mark.parametrize("theme", THEMES)
def test_every_language_is_searched_the_pages_own_first(
        served: dict[str, tuple[str, Path]], browser: Browser, theme: str) -> None:
    """Issue 53, 1: the English search page finds a word of a French article (`traboules`)
    and the German article about sauerkraut, after the English ones; the German search page
    lists its German article first; the search page links the other languages' ones."""
    base, _ = served[theme]
    context = browser.new_context()
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        found = _results(page, f"{base}/search/?q=traboules")
        assert ("/lyon-a-pied/", "fr") in [(href, lang) for href, lang, _ in found], found
        found = _results(page, f"{base}/search/?q=sauerkraut")
        languages = [lang for _, lang, _ in found]
        assert "/sauerkraut-mit-waage/" in [href for href, _, _ in found], found
        assert languages[0] == "en" and languages == sorted(languages, key=lambda c: c != "en")
        found = _results(page, f"{base}/lang/de/search/?q=sauerkraut")
        assert found[0][:2] == ("/sauerkraut-mit-waage/", "de"), found
        assert "en" in [lang for _, lang, _ in found]
        page.goto(f"{base}/search/")
        links = {a.get_attribute("hreflang"): a.get_attribute("href")
                 for a in page.locator(".search-languages a").all()}
        assert links == {"de": "/lang/de/search/", "fr": "/lang/fr/search/"}, links
        assert errors == [], errors
    finally:
        context.close()


def test_excerpts_show_prose_never_code(served: dict[str, tuple[str, Path]],
                                        browser: Browser) -> None:
    """Issue 53, 6: code listings are not indexed, so no excerpt shows raw code."""
    base, output = served["default"]
    listed = (output / "salt-by-weight" / "index.html").read_text(encoding="utf-8")
    assert "<pre" in listed and "vegetables_g" in listed  # (the demo has the listing)
    context = browser.new_context()
    try:
        page = context.new_page()
        excerpts = [text for word in ("salt", "jar", "vegetables")
                    for _, _, text in _results(page, f"{base}/search/?q={word}")]
        assert excerpts
        assert not [text for text in excerpts if '"""' in text or "vegetables_g" in text
                    or "return " in text], excerpts
    finally:
        context.close()
