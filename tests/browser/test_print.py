"""Printing, in a real browser: Chromium prints the demo's pages to PDF, in both themes.

Issue 53, point 8. The demo is built in each theme and served (`demo_sites`); a page is
printed with `page.pdf()` from a context whose screen is dark, and the PDF's text is read
with pypdf. What a reader of the paper gets:

- the article's words, and no site chrome (header, footer, neighbours, table of contents:
  its links lead nowhere on paper);
- each link to another site with its address written out;
- a YouTube or Vimeo stand-in as its title and the video's address, never an empty box;
- black text on white even when the screen's scheme is dark (measured under print media).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser
from pypdf import PdfReader

from tests.browser.served import THEMES, demo_sites

pytestmark = pytest.mark.browser

VIDEO = "/video-embeds-that-respect-readers/"
LINKED = "/pinning-python-dependencies/"


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    with demo_sites(tmp_path_factory.mktemp("print")) as built:
        yield {theme: base for theme, (base, _) in built.items()}


def _printed(browser: Browser, url: str) -> tuple[str, dict[str, object]]:
    """(the PDF's text, what the page looks like under print media) of *url*, printed from
    a dark screen."""
    context = browser.new_context(color_scheme="dark")
    try:
        page = context.new_page()
        page.goto(url)
        pdf = page.pdf(format="A4", print_background=True)
        text = " ".join(p.extract_text() or "" for p in PdfReader(io.BytesIO(pdf)).pages)
        page.emulate_media(media="print", color_scheme="dark")
        looks = page.evaluate("""() => ({
          text: getComputedStyle(document.querySelector('.prose p')).color,
          background: getComputedStyle(document.body).backgroundColor,
          toc: !!document.querySelector('.toc'),
          hidden: ['.site-header', '.site-footer', '.toc', '.neighbours']
            .filter(s => document.querySelector(s))
            .filter(s => document.querySelector(s).getBoundingClientRect().height > 0),
          frames: [...document.querySelectorAll('.video__frame')]
            .map(f => [f.getBoundingClientRect().height, f.innerText.trim()]),
        })""")
        return re.sub(r"\s+", " ", text), looks
    finally:
        context.close()


@pytest.mark.parametrize("theme", THEMES)
def test_a_printed_article_is_black_on_white_with_its_links_and_videos_written_out(
        sites: dict[str, str], browser: Browser, theme: str) -> None:
    text, looks = _printed(browser, sites[theme] + VIDEO)
    assert "Video Embeds That Respect" in text
    assert looks["text"] == "rgb(0, 0, 0)", looks
    assert looks["background"] in ("rgb(255, 255, 255)", "rgba(0, 0, 0, 0)"), looks
    assert looks["toc"] and looks["hidden"] == [], looks
    for height, title in looks["frames"]:  # type: ignore[attr-defined]
        assert title and height < 120, looks["frames"]
    compact = text.replace(" ", "")
    for address in ("https://www.youtube.com/watch?v=M7lc1UVf-VE", "https://vimeo.com/76979871"):
        assert address in compact, (address, text[:2000])
    text, _ = _printed(browser, sites[theme] + LINKED)
    assert "https://peps.python.org/pep-0440/" in text.replace(" ", ""), text[:2000]
