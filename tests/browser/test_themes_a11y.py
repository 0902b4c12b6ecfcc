"""Both built-in themes in a real browser: axe-core finds no violation of any impact.

The demo workspace is built once per theme (`default`, `magazine`) and served over
loopback with its `_headers` rules applied; every page kind a reader lands on — home,
articles with every block type and in French and German, a second list page, topic, tag,
author, social, 404, search (showing results), the archive by month (an index, a month,
in German and French too), an article with a quote — is checked with
axe-core (every rule, at 375 and 1280 px, in the light and the dark colour scheme),
whose `axe.min.js` comes from the `axe-playwright-python` test dependency, and the
whole output with the current Nu HTML checker (`tests/vnu.py`). A second
test loads each page at 360 px and checks nothing makes the page scroll sideways;
a third, at 375 px, checks the header (the site name clear of the top edge, every
navigation link in view once its row is scrolled to it: the page never scrolls sideways) and
that no page skips a heading level; a fourth, at 1280 px, that every body of text (articles,
own pages, social posts) keeps a reading measure and every title clears the header.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser

from tests.browser.served import THEMES, demo_sites

pytestmark = pytest.mark.browser

PAGES = {
    "home": "/",
    "article-code-image": "/makefile-readme-that-runs/",
    "article-video": "/video-embeds-that-respect-readers/",
    "article-fr": "/le-levain-sans-dogme/",
    "article-de": "/sauerkraut-mit-waage/",
    "page-2": "/page/2/",
    "topic": "/topics/the-fermenting-kitchen/",
    "tag": "/tags/shell/",
    "author": "/authors/mara-lindqvist/",
    "lang-fr": "/lang/fr/",
    "404": "/404.html",
    "social": "/social/",
    "topics-index": "/topics/",
    "tags-index": "/tags/",
    "own-page": "/about/",
    "social-post": "/social/night-trains-are-back/",
    "search": "/search/",
    "article-quote": "/night-train-to-vienna/",
    "archive-index": "/archive/",
    "archive-month": "/archive/2026/06/",
    "archive-month-de": "/lang/de/archive/2026/06/",
    "archive-index-fr": "/lang/fr/archive/",
}
#: Where each theme's build was written (filled by the `sites` fixture).
OUTPUTS: dict[str, Path] = {}


def _axe_source() -> str:
    """axe.min.js from the test extras; a missing copy fails under CI and skips elsewhere."""
    try:
        path = resources.files("axe_playwright_python") / "axe.min.js"
        return path.read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError) as error:
        message = ("axe-core is missing: install the test extras "
                   f"(pip install -e '.[test]' brings axe-playwright-python): {error}")
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Base URLs of the demo site built in each theme, served from loopback."""
    with demo_sites(tmp_path_factory.mktemp("themes")) as built:
        OUTPUTS.update((theme, output) for theme, (_, output) in built.items())
        yield {theme: base for theme, (base, _) in built.items()}


def _describe(violations: list[dict[str, Any]]) -> str:
    lines = []
    for violation in violations:
        targets = [", ".join(node["target"]) for node in violation["nodes"][:5]]
        lines.append(f"{violation['impact']} {violation['id']}: {violation['help']} "
                     f"at {targets}")
    return "\n".join(lines)


@pytest.mark.parametrize("width", [375, 1280])
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("theme", THEMES)
def test_axe_finds_no_violation(
    sites: dict[str, str], browser: Browser, theme: str, scheme: str, width: int
) -> None:
    axe = _axe_source()
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme,
                                  bypass_csp=True)  # axe is injected inline
    try:
        page = context.new_page()
        failures: dict[str, str] = {}
        checked = 0
        for name, path in PAGES.items():
            response = page.goto(sites[theme] + path)
            assert response is not None and response.status == 200, f"{theme} {path}"
            if name == "search":  # with results shown
                page.locator("#search-input").fill("sauerkraut")
                page.locator(".search-result__link").first.wait_for(timeout=15000)
            page.add_script_tag(content=axe)
            options: dict[str, Any] = {"resultTypes": ["violations"]}
            results = page.evaluate("options => axe.run(document, options)", options)
            checked += len(results["passes"]) + len(results["violations"])
            if results["violations"]:
                failures[name] = _describe(results["violations"])
        assert checked > 0, "axe ran no rule at all"
        assert not failures, "\n".join(f"[{theme}/{scheme}/{width}] {name}:\n{text}"
                                       for name, text in failures.items())
    finally:
        context.close()


@pytest.mark.parametrize("theme", THEMES)
def test_pages_fit_a_360px_screen(sites: dict[str, str], browser: Browser, theme: str) -> None:
    context = browser.new_context(viewport={"width": 360, "height": 740})
    try:
        page = context.new_page()
        overflowing: dict[str, int] = {}
        for name, path in PAGES.items():
            page.goto(sites[theme] + path)
            width = page.evaluate("document.documentElement.scrollWidth")
            if width > 360:
                overflowing[name] = width
        assert not overflowing, f"{theme}: pages wider than 360 px: {overflowing}"
    finally:
        context.close()


#: Heading levels in document order (the skip link and hidden elements aside).
_HEADINGS = "[...document.querySelectorAll('h1,h2,h3,h4,h5,h6')].map(h => +h.tagName[1])"
#: Every body heading level (drawn for the test, then removed) at least as large as the text.
_SMALL_HEADINGS = """(() => { const body = document.querySelector('.prose');
  if (!body) return []; const size = parseFloat(getComputedStyle(body).fontSize);
  const probes = ['h2','h3','h4','h5','h6'].map(t => body.appendChild(document.createElement(t)));
  const small = probes.filter(h => parseFloat(getComputedStyle(h).fontSize) < size)
    .map(h => h.tagName);
  probes.forEach(h => h.remove()); return small; })()"""
_NAV_LINKS = """[...document.querySelectorAll('.site-header nav a, .site-header .search-link')]
  .map(a => { a.scrollIntoView({block: 'nearest', inline: 'nearest'});  // a row that scrolls
  const r = a.getBoundingClientRect(); return [a.textContent.trim(), r.left, r.right]; })"""


@pytest.mark.parametrize("theme", THEMES)
def test_mobile_header_and_heading_levels(
    sites: dict[str, str], browser: Browser, theme: str
) -> None:
    context = browser.new_context(viewport={"width": 375, "height": 740})
    try:
        page = context.new_page()
        problems: list[str] = []
        for name, path in PAGES.items():
            page.goto(sites[theme] + path)
            levels = page.evaluate(_HEADINGS)
            if levels[:1] != [1] or levels.count(1) != 1:
                problems.append(f"{name}: not one h1 first: {levels}")
            skips = [(a, b) for a, b in zip(levels, levels[1:], strict=False) if b > a + 1]
            if skips:
                problems.append(f"{name}: heading levels skip: {skips} in {levels}")
            top = page.evaluate("document.querySelector('.site-header a').getBoundingClientRect()"
                                ".top")
            if top < 8:
                problems.append(f"{name}: the site name is {top:.0f} px from the top edge")
            small = page.evaluate(_SMALL_HEADINGS)
            if small:
                problems.append(f"{name}: headings smaller than the body text: {small}")
            for text, left, right in page.evaluate(_NAV_LINKS):
                if left < 0 or right > 375:
                    problems.append(f"{name}: nav link {text!r} out of view ({left:.0f}–"
                                    f"{right:.0f} px)")
        assert not problems, f"{theme}:\n" + "\n".join(problems)
    finally:
        context.close()


#: The width of the page's body of text (null without one) and the room above its title.
_READING = """(() => { const body = document.querySelector('.prose');
  const title = [...document.querySelectorAll('main h1')]
    .find(h => h.getBoundingClientRect().width > 1);  // not a visually hidden one
  const gap = title ? title.getBoundingClientRect().top
    - document.querySelector('.site-header').getBoundingClientRect().bottom : null;
  return [body ? body.getBoundingClientRect().width : null, gap]; })()"""


@pytest.mark.parametrize("theme", THEMES)
def test_bodies_of_text_keep_a_reading_measure_and_titles_clear_the_header(
        sites: dict[str, str], browser: Browser, theme: str) -> None:
    """On a wide screen no text runs the full width (own pages and social posts included:
    magazine's lived in article.css, which only article pages linked)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        problems: list[str] = []
        measured = 0
        for name, path in PAGES.items():
            page.goto(sites[theme] + path)
            width, gap = page.evaluate(_READING)
            if width is not None:
                measured += 1
                if width > 800:
                    problems.append(f"{name}: lines of text {width:.0f} px wide")
            if gap is not None and gap < 24:
                problems.append(f"{name}: the title is {gap:.0f} px below the header")
        assert measured >= 4, "no body of text was measured"
        assert not problems, f"{theme}:\n" + "\n".join(problems)
    finally:
        context.close()


@pytest.mark.parametrize("theme", THEMES)
def test_the_headers_file_allows_everything_the_pages_load(
        sites: dict[str, str], browser: Browser, theme: str) -> None:
    """Served with `_headers` applied, no page breaks its Content-Security-Policy."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        blocked: list[str] = []
        page.on("console", lambda m: blocked.append(m.text)
                if "Content Security Policy" in m.text else None)
        for path in PAGES.values():
            response = page.goto(sites[theme] + path, wait_until="load")
            assert response is not None
            assert "script-src 'self'" in (response.headers.get("content-security-policy") or "")
            assert response.headers.get("x-content-type-options") == "nosniff"
            small = page.evaluate(_SMALL_HEADINGS)  # at 1280 px (375 px: the mobile test)
            assert not small, f"{theme} {path}: headings smaller than the body text: {small}"
        css = page.evaluate("[...document.styleSheets].map(s => s.href)")
        for href in css:  # (the theme's: Pagefind's own files are not content-hashed)
            if "/pagefind/" in href:
                continue
            cached = page.request.get(href).headers.get("cache-control", "")
            assert "immutable" in cached, href
        assert blocked == [], blocked
    finally:
        context.close()


def test_the_nu_checker_finds_no_error_in_the_whole_output(sites: dict[str, str]) -> None:
    from tests.vnu import vnu_errors

    assert set(OUTPUTS) == set(THEMES)
    assert vnu_errors([OUTPUTS[theme] for theme in THEMES]) == []
