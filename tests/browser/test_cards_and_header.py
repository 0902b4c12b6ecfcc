"""Cards, their pictures and the phone header, measured in a real browser, in both themes.

The demo workspace is built once per theme and served over loopback with its `_headers`
rules (as `test_themes_a11y` serves it). What a visitor would see is measured from the
boxes Chromium lays out, never from the HTML alone:

- at 375 px the header is at most two rows of text (its name, links and Search, each
  line of each counted), Tab reaches every link of it and a focused link is never hidden
  (at least 24 px of it in view: Chromium scrolls a link only partly in view no further),
  and a magazine article shows body text on the first 375×667 screen.
"""

from __future__ import annotations

from collections.abc import Iterator
from http.server import ThreadingHTTPServer

import pytest
from playwright.sync_api import Browser, Page

from sitegen.build import BuildOptions, run_build
from sitegen.config import DEMO_WORKSPACE_ID, demo_config, parse_config
from tests.browser.served import THEMES, chromium, serve_output
from tests.content import synced

pytestmark = pytest.mark.browser

LISTS = {
    "home": "/",
    "page-2": "/page/2/",
    "topic": "/topics/the-fermenting-kitchen/",
    "tag": "/tags/shell/",
    "author": "/authors/mara-lindqvist/",
}
ARTICLE = "/makefile-readme-that-runs/"


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Base URLs of the demo site built in each theme, served from loopback."""
    root = tmp_path_factory.mktemp("cards")
    workspace = synced(demo_config(None, root))
    servers: list[ThreadingHTTPServer] = []
    urls: dict[str, str] = {}
    try:
        for theme in THEMES:
            config = parse_config({
                "site": {"title": "Northwind Field Notes", "url": "http://127.0.0.1/",
                         "description": "Slow travel, patient fermentation and quiet tooling",
                         "theme": theme},
                "api": {"url": "http://127.0.0.1:9/", "workspace": DEMO_WORKSPACE_ID},
                "analytics": {"enabled": False},
            }, root / theme)
            output = root / theme / "_site"
            run_build(config, BuildOptions(output=output, workspace=workspace, demo=True))
            urls[theme], server = serve_output(output)
            servers.append(server)
        yield urls
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def _open(browser: Browser, width: int, height: int = 800) -> Page:
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(60_000)
    return context.new_page()


# -- point 5: the phone header is two rows ---------------------------------------------------

#: The tops and bottoms of every line of text in the header (its name, links and Search).
_HEADER_LINES = """() => [...document.querySelectorAll(
    '.site-header .brand, .site-header nav a, .site-header .search-link')]
  .flatMap(el => { const range = document.createRange(); range.selectNodeContents(el);
    return [...range.getClientRects()].filter(r => r.width > 0 && r.height > 0)
      .map(r => [r.top, r.bottom]); })"""
#: [text, left, right] of the element the keyboard focused, null once it left the header.
_FOCUSED = """async () => { for (const _ of [1, 2]) await new Promise(requestAnimationFrame);
  const el = document.activeElement, inside = el && el.closest('.site-header');
  if (!inside || el.matches('.brand')) return inside ? [] : null;
  const r = el.getBoundingClientRect(); return [el.textContent.trim(), r.left, r.right]; }"""
_LINK_TEXTS = """() => [...document.querySelectorAll(
  '.site-header nav a, .site-header .search-link')].map(a => a.textContent.trim())"""
#: The top of the article body's first line of text (null without one).
_BODY_TOP = """() => { const body = document.querySelector('#article-body');
  const first = body && [...body.querySelectorAll('p, li')].find(el => el.textContent.trim());
  return first ? first.getBoundingClientRect().top : null; }"""


def _rows(lines: list[list[float]]) -> int:
    """How many rows lines of text form (lines whose boxes overlap vertically are one row)."""
    rows: list[list[float]] = []
    for top, bottom in sorted(lines):
        if rows and top < rows[-1][1] - 2:
            rows[-1][1] = max(rows[-1][1], bottom)
        else:
            rows.append([top, bottom])
    return len(rows)


@pytest.mark.parametrize("theme", THEMES)
def test_the_phone_header_is_two_rows_and_every_link_is_reachable(
        sites: dict[str, str], browser: Browser, theme: str) -> None:
    page = _open(browser, 375, 667)
    problems: list[str] = []
    try:
        for name, path in {"home": "/", "article": ARTICLE}.items():
            page.goto(sites[theme] + path)
            rows = _rows(page.evaluate(_HEADER_LINES))
            if rows > 2:
                problems.append(f"{name}: the header is {rows} rows of text")
            reached = set()
            for _ in range(40):  # Tab through the header: each link is then in view
                page.keyboard.press("Tab")
                focused = page.evaluate(_FOCUSED)
                if focused is None and reached:
                    break
                if focused:
                    text, left, right = focused
                    reached.add(text)
                    if min(right, 375) - max(left, 0) < 24:  # WCAG 2.4.11: not hidden
                        problems.append(f"{name}: the link {text!r}, focused, is out of view "
                                        f"({left:.0f}–{right:.0f} px)")
            links = set(page.evaluate(_LINK_TEXTS))
            if links - reached:
                problems.append(f"{name}: Tab never reached {sorted(links - reached)}")
            if name == "article" and theme == "magazine":
                page.evaluate("scrollTo(0, 0)")
                top = page.evaluate(_BODY_TOP)
                if top is None or top > 667 - 20:
                    problems.append(f"article: body text starts at {top} px, below the "
                                    "first 375×667 screen")
    finally:
        page.context.close()
    assert not problems, f"{theme}:\n" + "\n".join(problems)


