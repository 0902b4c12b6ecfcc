"""Light and dark by the visitor's choice, in a real browser, in both themes.

Issue 53. The demo is built in each theme and served with its `_headers` (its CSP applies:
the switch's script is a file). Measured in Chromium:

- without JavaScript the system's scheme applies (dark system, dark page) and no switch
  shows (it would do nothing);
- with JavaScript the header's switch is a button that says whether dark colours are on;
  pressing it turns the page dark on a light system, code listings included;
- the choice is remembered: the next page is dark from the start — `<html data-scheme>`
  is set before the body is parsed (so before the first paint: no flash) — and pressing
  again turns it light on a dark system;
- the page's console shows no error (a CSP violation is one).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page

from tests.browser.served import THEMES, demo_sites

pytestmark = pytest.mark.browser

ARTICLE = "/makefile-readme-that-runs/"
#: The page's background, and its code listing's, as Chromium computes them.
_COLOURS = """() => [getComputedStyle(document.body).backgroundColor,
  getComputedStyle(document.querySelector('pre.highlight')).backgroundColor]"""
#: Notes `<html data-scheme>` when the body element first exists (before any of it is drawn).
_AT_BODY = """window.__scheme_at_body = 'unseen';
new MutationObserver((_, seen) => { if (document.body) {
  window.__scheme_at_body = document.documentElement.getAttribute('data-scheme');
  seen.disconnect(); } }).observe(document, {childList: true, subtree: true});"""


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    with demo_sites(tmp_path_factory.mktemp("scheme")) as built:
        yield {theme: base for theme, (base, _) in built.items()}


def _colours(browser: Browser, url: str, scheme: str) -> list[str]:
    context = browser.new_context(color_scheme=scheme)  # type: ignore[arg-type]
    try:
        page = context.new_page()
        page.goto(url)
        colours: list[str] = page.evaluate(_COLOURS)
        return colours
    finally:
        context.close()


@pytest.mark.parametrize("theme", THEMES)
def test_without_javascript_the_systems_scheme_applies(sites: dict[str, str],
                                                       browser: Browser, theme: str) -> None:
    url = sites[theme] + ARTICLE
    context = browser.new_context(color_scheme="dark", java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(url)
        dark = page.evaluate(_COLOURS)
        assert not page.locator("#scheme-switch").is_visible()
    finally:
        context.close()
    light = _colours(browser, url, "light")
    assert dark[0] != light[0] and dark[1] != light[1], (dark, light)


def _press(page: Page) -> None:
    switch = page.locator("#scheme-switch")
    switch.click()


@pytest.mark.parametrize("theme", THEMES)
def test_the_visitors_choice_applies_at_once_and_is_remembered_without_a_flash(
        sites: dict[str, str], browser: Browser, theme: str) -> None:
    base = sites[theme]
    light = _colours(browser, base + ARTICLE, "light")
    dark = _colours(browser, base + ARTICLE, "dark")
    context = browser.new_context(color_scheme="light", viewport={"width": 375, "height": 700})
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.add_init_script(_AT_BODY)
        page.goto(base + ARTICLE)
        switch = page.locator("#scheme-switch")
        assert switch.is_visible() and switch.get_attribute("aria-pressed") == "false"
        assert page.evaluate("window.__scheme_at_body") is None
        _press(page)
        assert switch.get_attribute("aria-pressed") == "true"
        assert page.evaluate(_COLOURS) == dark
        page.goto(base + "/")  # another page: dark before its body is parsed
        assert page.evaluate("window.__scheme_at_body") == "dark"
        page.goto(base + ARTICLE)
        assert page.evaluate(_COLOURS) == dark
        page.emulate_media(color_scheme="dark")  # the system turns dark; the visitor goes light
        _press(page)
        assert page.evaluate(_COLOURS) == light
        page.reload()
        assert page.evaluate("window.__scheme_at_body") == "light"
        assert page.evaluate(_COLOURS) == light
        assert errors == [], errors
    finally:
        context.close()
