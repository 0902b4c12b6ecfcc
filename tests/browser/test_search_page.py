"""The search page as a visitor meets it, in both themes, in a real browser.

The demo workspace is built once per theme and served on loopback with its `_headers`
rules (as `test_search` serves it). Opening `/search/?q=<word>` must hold still: the
layout shifts (a `PerformanceObserver` of `layout-shift` entries, buffered, read after the
results are drawn) add up to less than 0.05 at 375 and 1280 px. Each result's title is a
heading link and its excerpt does not repeat it; magazine draws results in its serif
headline font. One pagefind.js and one worker serve every language, and the own language's
results are drawn before any other language's file is fetched (Lighthouse's largest paint
waited on all of them). Pagefind's scripts carry a short caching rule, never `immutable`. From the
top of a page, the Tab key reaches the header's search link right after the site name.
Without JavaScript the page says search needs it and offers links to browse instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, Response

from tests.browser.served import THEMES, demo_sites

pytestmark = pytest.mark.browser

#: A word of several demo articles' titles and bodies (English), so results fill a screen.
WORD = "sauerkraut"
#: Every layout shift of the page since it began, kept by an observer made before any script
#: of the page runs (buffered: shifts before it are delivered too).
_OBSERVE = """window.__shifts = [];
new PerformanceObserver(list => { for (const entry of list.getEntries()) {
  if (!entry.hadRecentInput) window.__shifts.push(entry.value); } })
  .observe({type: 'layout-shift', buffered: true});"""
#: The shifts so far, once the observer has had two frames to deliver its entries.
_SHIFTS = """() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(
  () => done(window.__shifts))))"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """theme → base URL of the demo, built with search on and served."""
    with demo_sites(tmp_path_factory.mktemp("search-page")) as built:
        yield {theme: base for theme, (base, _) in built.items()}


def _results(page: Page) -> None:
    """Wait until the page shows results (whatever draws them: the theme's markup, or
    Pagefind's default UI, which the themes used before)."""
    page.locator(".search-result, .pagefind-ui__result").first.wait_for(timeout=30000)


@pytest.mark.parametrize("width", [375, 1280])
@pytest.mark.parametrize("theme", THEMES)
def test_opening_a_search_link_does_not_shift_the_page(
        served: dict[str, str], browser: Browser, theme: str, width: int) -> None:
    context = browser.new_context(viewport={"width": width, "height": 740 if width < 600
                                            else 900})
    try:
        context.add_init_script(_OBSERVE)
        page = context.new_page()
        page.goto(f"{served[theme]}/search/?q={WORD}")
        _results(page)
        page.wait_for_load_state("networkidle")
        shifts = page.evaluate(_SHIFTS)
        assert sum(shifts) < 0.05, (theme, width, shifts)
        # the footer was never drawn on the first screen to be pushed down
        top = page.evaluate("document.querySelector('.site-footer').getBoundingClientRect().top")
        assert top >= (740 if width < 600 else 900), top
    finally:
        context.close()


@pytest.mark.parametrize("theme", THEMES)
def test_the_own_language_answers_before_any_other_language_is_fetched(
        served: dict[str, str], browser: Browser, theme: str) -> None:
    """Lighthouse put the search page at 98–99 on mobile: its largest paint, the first
    result, waited for every language's pagefind.js, worker and WebAssembly (~360 KB on a
    phone's line). Now one pagefind.js and one worker serve every language, and no other
    language's file is asked for before the own language's results are drawn."""
    context = browser.new_context(viewport={"width": 375, "height": 740})
    try:
        page = context.new_page()
        asked: list[tuple[str, bool]] = []  # (path, drawn yet)
        page.on("request", lambda request: asked.append((
            request.url.split("/pagefind/", 1)[-1].split("?")[0] if "/pagefind/" in
            request.url else "", drawn[0])))
        drawn = [False]
        page.expose_function("markDrawn", lambda: drawn.__setitem__(0, True))
        context.add_init_script("""new MutationObserver((changes, seen) => {
          if (document.querySelector('.search-result')) { window.markDrawn(); seen.disconnect(); }
        }).observe(document, {childList: true, subtree: true});""")
        page.goto(f"{served[theme]}/search/?q={WORD}")
        _results(page)
        page.wait_for_load_state("networkidle")
        files = [path for path, _ in asked if path]
        assert [f for f in files if f.endswith("/pagefind.js")] == ["en-0/pagefind.js"], files
        assert [f for f in files if f.endswith("/pagefind-worker.js")] == [
            "en-0/pagefind-worker.js"], files
        early = [path for path, when in asked if path and not when]
        assert not [f for f in early if not f.startswith(("en-", "shards.json"))], early
        later = [path for path, when in asked if path and when]
        assert any(f.startswith("de-") for f in later) and any(
            f.startswith("fr-") for f in later), later  # (the others still searched)
        assert page.locator(".search-result[lang=de]").count() >= 1
    finally:
        context.close()


@pytest.mark.parametrize("theme", THEMES)
def test_each_result_is_a_heading_link_and_its_excerpt_does_not_repeat_the_title(
        served: dict[str, str], browser: Browser, theme: str) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{served[theme]}/search/?q={WORD}")
        _results(page)
        results = page.evaluate("""[...document.querySelectorAll('.search-result')].map(r => {
          const link = r.querySelector('h2 > a[href]');
          const excerpt = r.querySelector('.search-result__excerpt');
          return [link ? link.textContent : null, excerpt ? excerpt.textContent : '',
                  excerpt ? excerpt.querySelectorAll('mark').length : 0]; })""")
        assert len(results) >= 2, results
        titled = 0
        for title, excerpt, _marks in results:
            assert title, results  # a heading (h2 under the page's h1) holding the link
            assert title.lower() not in excerpt.lower(), (title, excerpt)
            words, start = title.lower().split(), excerpt.lower().split()
            ends = [" ".join(words[i:]) for i in range(len(words) - 1)]  # 2 words or more
            assert not any(" ".join(start).startswith(end) for end in ends), (title, excerpt)
            titled += WORD in title.lower()
        assert any(marks for _, _, marks in results), results  # the word, marked
        assert titled >= 1, results  # a title holding the word: its excerpt began with it
        status = page.locator("#search-status").inner_text()
        assert re.search(r"\d", status) and WORD in status, status
        assert errors == [], errors
    finally:
        context.close()


def test_magazine_results_take_its_serif_headline_font(
        served: dict[str, str], browser: Browser) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{served['magazine']}/search/?q={WORD}")
        _results(page)
        fonts = page.evaluate("""[document.querySelector('main h1'),
          document.querySelector('.search-result h2'),
          document.querySelector('.search-result h2 a')]
          .map(e => getComputedStyle(e).fontFamily)""")
        headline, result, link = fonts
        assert result == headline == link, fonts
        assert "serif" in result and "sans-serif" not in result, fonts
    finally:
        context.close()


@pytest.mark.parametrize("theme", THEMES)
def test_pagefind_scripts_have_a_short_caching_rule(
        served: dict[str, str], browser: Browser, theme: str) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        loaded: list[Response] = []
        page.on("response", lambda r: loaded.append(r)
                if "/pagefind/" in r.url and r.url.endswith((".js", ".css")) else None)
        page.goto(f"{served[theme]}/search/?q={WORD}")
        _results(page)
        page.wait_for_load_state("networkidle")
        ui = page.request.get(f"{served[theme]}/pagefind/pagefind-ui.css")
        rules = {r.url: r.headers.get("cache-control", "") for r in loaded}
        rules[ui.url] = ui.headers.get("cache-control", "")
        assert any(url.endswith("/pagefind.js") for url in rules), rules
        for url, rule in rules.items():
            age = re.search(r"max-age=(\d+)", rule)
            assert age and 0 < int(age.group(1)) <= 3600, (url, rule)
            assert "immutable" not in rule and "must-revalidate" in rule, (url, rule)
    finally:
        context.close()


@pytest.mark.parametrize("theme", THEMES)
def test_tab_reaches_search_right_after_the_site_name(
        served: dict[str, str], browser: Browser, theme: str) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(served[theme] + "/")
        focused: list[str] = []
        for _ in range(4):
            page.keyboard.press("Tab")
            focused.append(page.evaluate("document.activeElement.className"))
            if focused[-1] == "brand":
                break
        assert focused[-1] == "brand", focused
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.className") == "search-link"
        # and it is drawn before the topics: above their row, or left of them on one row
        (search_top, search_left), (nav_top, nav_left) = page.evaluate(
            """['.search-link', '.site-nav a'].map(s => {
            const r = document.querySelector(s).getBoundingClientRect(); return [r.bottom, r.left];
            })""")
        assert search_top <= nav_top - 8 or (abs(search_top - nav_top) < 8
                                             and search_left < nav_left), (search_top, nav_top)
    finally:
        context.close()


@pytest.mark.parametrize("theme", THEMES)
def test_without_javascript_the_page_says_so_and_offers_links(
        served: dict[str, str], browser: Browser, theme: str) -> None:
    context = browser.new_context(java_script_enabled=False,
                                  viewport={"width": 375, "height": 740})
    try:
        page = context.new_page()
        page.goto(f"{served[theme]}/search/?q={WORD}")
        assert page.locator("#search-input").is_disabled()
        assert "JavaScript" in page.locator("main").inner_text()
        links = page.locator(".search-page__links a")
        assert links.count() >= 2 and all(links.nth(i).is_visible()
                                           for i in range(links.count()))
    finally:
        context.close()
