"""`sitegen serve --drafts` in a real browser, both built-in themes: a draft's page shows the
"Draft — not published" banner near its title, light and dark, on a phone and a desktop, and
axe-core finds no violation (contrast included) there or on the `/drafts/` list.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser

from tests.browser.served import THEMES
from tests.browser.test_themes_a11y import _axe_source, _describe
from tests.preview.draftsite import BANNER, DRAFTS, Preview, emulator, serving, write_site

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module", params=THEMES)
def preview(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[Preview]:
    """`serve --drafts` of a site in the theme, its content from the running emulator."""
    root: Path = tmp_path_factory.mktemp(f"drafts-{request.param}")
    with emulator(root) as api, serving(write_site(root / "site", api, theme=request.param)
                                        ) as running:
        yield running


@pytest.mark.parametrize("width", [375, 1280])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_draft_shows_its_banner_and_passes_axe(preview: Preview, browser: Browser,
                                                  scheme: str, width: int) -> None:
    axe = _axe_source()
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme,
                                  bypass_csp=True)  # axe is injected inline
    try:
        page = context.new_page()
        failures: dict[str, str] = {}
        for slug, title in DRAFTS.items():
            response = page.goto(f"{preview.url}drafts/{slug}/")
            assert response is not None and response.status == 200
            banner = page.get_by_text(BANNER, exact=True)
            assert banner.is_visible()
            heading = page.get_by_role("heading", level=1)
            assert heading.inner_text() == title
            # near the title: above it, within the first screen
            above, box = banner.bounding_box(), heading.bounding_box()
            assert above is not None and box is not None
            assert above["y"] < box["y"] < 900
            robots = page.locator('meta[name="robots"]').get_attribute("content")
            assert robots is not None and "noindex" in robots
        for path in (f"drafts/{next(iter(DRAFTS))}/", "drafts/"):
            page.goto(preview.url + path)
            page.add_script_tag(content=axe)
            options: dict[str, Any] = {"resultTypes": ["violations"]}
            results = page.evaluate("options => axe.run(document, options)", options)
            if results["violations"]:
                failures[path] = _describe(results["violations"])
        links = page.locator("ul.drafts a")
        assert sorted(links.all_inner_texts()) == sorted(DRAFTS.values())
        assert not failures, "\n".join(f"[{scheme}/{width}] {path}:\n{text}"
                                       for path, text in failures.items())
    finally:
        context.close()
