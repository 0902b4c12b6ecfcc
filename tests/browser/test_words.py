"""Words a visitor and a machine read, in a real browser, over the demo in both themes.

The demo workspace is built once per theme and served over loopback with its `_headers`
rules (its Content-Security-Policy). Checked as a visitor's browser sees the pages:
languages are named in their own name (the language page's heading and title, the
footer's switcher, each link with its `lang`); every image has a text alternative, or an
empty one only where it is decorative (a card's picture beside its linked title), and
text in another language than the page says so (`lang`); the AI persona is labelled as
one (the author box, the author page, the article's JSON-LD) and social post pages say an
AI agent wrote them; and what machines read — the article's JSON-LD image and raster
publisher logo, the feeds' absolute image URLs, the sitemap's dates of social posts and
each tag page's own description.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from sitegen.build import BuildOptions, run_build
from sitegen.config import DEMO_WORKSPACE_ID, demo_config, parse_config
from tests.browser.served import THEMES, chromium, serve_output
from tests.content import synced

pytestmark = pytest.mark.browser

SITE_URL = "https://notes.example.test/"
TIMEOUT = 60_000
#: Where each theme's build was written (filled by the `sites` fixture).
OUTPUTS: dict[str, Path] = {}


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Base URLs of the demo built in each theme (with the site's public URL an https
    address, as published), served from loopback."""
    root = tmp_path_factory.mktemp("words")
    workspace = synced(demo_config(None, root))
    servers: list[ThreadingHTTPServer] = []
    urls: dict[str, str] = {}
    try:
        for theme in THEMES:
            config = parse_config({
                "site": {"title": "Northwind Field Notes", "url": SITE_URL,
                         "description": "Slow travel, patient fermentation and quiet tooling",
                         "theme": theme},
                "api": {"url": "http://127.0.0.1:9/", "workspace": DEMO_WORKSPACE_ID},
                "analytics": {"enabled": False},
            }, root / theme)
            output = OUTPUTS[theme] = root / theme / "_site"
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


@pytest.fixture()
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(TIMEOUT)
    context.set_default_navigation_timeout(TIMEOUT)
    try:
        yield context.new_page()
    finally:
        context.close()


def _open(page: Page, base: str, path: str) -> None:
    response = page.goto(base + path, wait_until="domcontentloaded")
    assert response is not None and response.status == 200, path


def _jsonld(page: Page) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(
        page.locator('script[type="application/ld+json"]').first.text_content() or "{}")
    return found


@pytest.mark.parametrize("theme", THEMES)
def test_languages_are_named_in_their_own_name(sites: dict[str, str], page: Page,
                                               theme: str) -> None:
    _open(page, sites[theme], "/lang/fr/")
    assert page.locator("h1").first.inner_text().strip() == "Français"
    assert page.title().startswith("Français – ")
    switcher = page.locator(".site-footer a[hreflang]")
    names = {(switcher.nth(i).get_attribute("lang"), switcher.nth(i).inner_text().strip())
             for i in range(switcher.count())}
    assert {("de", "Deutsch"), ("en", "English"), ("fr", "Français")} <= names, names
