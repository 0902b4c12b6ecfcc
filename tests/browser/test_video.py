"""Videos load on demand, in both themes, in a real browser.

The demo workspace (whose article "Video Embeds That Respect Your Readers" holds a YouTube
and a Vimeo video) is built once per theme and served on loopback with its `_headers`
rules. Every request the page makes is recorded and any to another host is answered by a
local stub: reading the whole article (scrolled to its end, so lazy frames would load)
asks nothing of another host; each video shows its title and a link to its page (without
JavaScript too); a click on the play button puts the privacy-enhanced player in its
place, titled with the video's title, with the focus on it.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, BrowserContext, Route

from tests.browser.served import THEMES, demo_sites

pytestmark = pytest.mark.browser

ARTICLE = "/video-embeds-that-respect-readers/"
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
PLAYERS = {"youtube": "https://www.youtube-nocookie.com/embed/",
           "vimeo": "https://player.vimeo.com/video/"}
PAGES = {"youtube": "https://www.youtube.com/watch?v=", "vimeo": "https://vimeo.com/"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """theme → base URL of the demo, built and served."""
    with demo_sites(tmp_path_factory.mktemp("video")) as built:
        yield {theme: base for theme, (base, _) in built.items()}


def _elsewhere(context: BrowserContext) -> list[str]:
    """Record every request to a host but loopback, answered by a local stub page."""
    asked: list[str] = []

    def stub(route: Route) -> None:
        url = route.request.url
        if urlsplit(url).hostname in LOOPBACK or not url.startswith("http"):
            route.continue_()
            return
        asked.append(url)
        route.fulfill(status=200, content_type="text/html",
                      body="<!doctype html><title>player</title><p>player")

    context.route("**/*", stub)
    return asked


@pytest.mark.parametrize("width", [375, 1280])
@pytest.mark.parametrize("theme", THEMES)
def test_nothing_of_another_host_loads_until_play_is_pressed(
        served: dict[str, str], browser: Browser, theme: str, width: int) -> None:
    context = browser.new_context(viewport={"width": width, "height": 800})
    try:
        asked = _elsewhere(context)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(served[theme] + ARTICLE)
        videos = page.locator("figure.video")
        assert videos.count() == 2
        for index in range(videos.count()):  # read it all: lazy frames would load now
            videos.nth(index).scroll_into_view_if_needed()
        page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        page.wait_for_load_state("networkidle")
        assert asked == [], asked
        assert page.locator("iframe").count() == 0
        for index, kind in enumerate(("youtube", "vimeo")):
            video = videos.nth(index)
            title = video.get_attribute("data-title") or ""
            assert title and video.get_by_text(title).is_visible()
            link = video.locator("a.video__link")
            assert (link.get_attribute("href") or "").startswith(PAGES[kind])
            assert link.inner_text().endswith("YouTube" if kind == "youtube" else "Vimeo")
            assert video.locator("button.video__play").is_visible()
        assert errors == [], errors
    finally:
        context.close()


@pytest.mark.parametrize("theme", THEMES)
def test_pressing_play_puts_the_titled_player_in_place_with_the_focus(
        served: dict[str, str], browser: Browser, theme: str) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        asked = _elsewhere(context)
        page = context.new_page()
        page.goto(served[theme] + ARTICLE)
        for index, kind in enumerate(("youtube", "vimeo")):
            video = page.locator("figure.video").nth(index)
            title = video.get_attribute("data-title")
            play = video.locator("button.video__play")
            play.scroll_into_view_if_needed()  # (as a reader scrolls to it)
            before = video.bounding_box()
            play.click()
            player = video.locator("iframe")
            player.wait_for(timeout=15000)
            src = player.get_attribute("src") or ""
            assert src.startswith(PLAYERS[kind]), src
            assert player.get_attribute("title") == title
            assert page.evaluate("document.activeElement.tagName") == "IFRAME"
            assert page.evaluate("document.activeElement.src") == src
            after = video.bounding_box()
            assert before and after and abs(before["height"] - after["height"]) < 2
            frame = player.element_handle().content_frame()
            assert frame is not None
            frame.wait_for_load_state(timeout=15000)
            assert any(url.startswith(PLAYERS[kind]) for url in asked), asked
    finally:
        context.close()


@pytest.mark.parametrize("theme", THEMES)
def test_without_javascript_each_video_is_its_title_and_a_link(
        served: dict[str, str], browser: Browser, theme: str) -> None:
    context = browser.new_context(java_script_enabled=False,
                                  viewport={"width": 375, "height": 740})
    try:
        asked = _elsewhere(context)
        page = context.new_page()
        page.goto(served[theme] + ARTICLE)
        videos = page.locator("figure.video")
        assert videos.count() == 2
        for index in range(2):
            video = videos.nth(index)
            title = video.get_attribute("data-title") or ""
            assert video.get_by_text(title).is_visible()
            assert video.locator("a.video__link").is_visible()
            assert not video.locator("button.video__play").is_visible()  # it needs the script
        assert asked == []
    finally:
        context.close()
