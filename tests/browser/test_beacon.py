"""The page-view beacon in a real browser, cross-origin, under a strict CSP.

The built site is served by a tiny threaded http.server that adds
`Content-Security-Policy: script-src 'self'; connect-src <emulator origin>`; the
emulator runs over real HTTP (uvicorn) on another loopback port, so every event
is a cross-origin POST with a CORS preflight.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from sitegen.build import BuildOptions, run_build
from sitegen.config import DEMO_WORKSPACE_ID, demo_config, parse_config
from sitegen.emulator.app import create_app
from sitegen.emulator.demo import load_demo
from sitegen.fetch.payloads import AnalyticsEvent
from sitegen.listening import bind
from tests.content import synced

pytestmark = pytest.mark.browser
playwright_api = pytest.importorskip("playwright.sync_api")

BEACON_KEY = "public-beacon-key-123"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--no-first-run"]


@pytest.fixture(scope="module")
def emulator() -> Iterator[tuple[str, Any]]:
    app = create_app(load_demo())
    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False,
                                           lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            thread.join(0.01)
            assert thread.is_alive(), "uvicorn did not start"
        yield f"http://127.0.0.1:{sock.getsockname()[1]}", app.state.emulator
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory,
         emulator: tuple[str, Any]) -> Iterator[tuple[str, Path]]:
    api_url, _ = emulator
    root = tmp_path_factory.mktemp("site")
    workspace = synced(demo_config(None, root))
    config = parse_config({
        "site": {"title": "Beacon test", "url": "http://127.0.0.1/"},
        "api": {"url": api_url, "workspace": DEMO_WORKSPACE_ID},
        "analytics": {"enabled": True, "key_env": "SITEGEN_TEST_BEACON_KEY",
                      "site_slug": "beacon-test"},
    }, root)
    mp = pytest.MonkeyPatch()
    mp.setenv("SITEGEN_TEST_BEACON_KEY", BEACON_KEY)
    try:
        run_build(config, BuildOptions(output=root / "_site", workspace=workspace, demo=True))
    finally:
        mp.undo()

    class Handler(SimpleHTTPRequestHandler):
        def end_headers(self) -> None:
            self.send_header("Content-Security-Policy",
                             f"script-src 'self'; connect-src {api_url}")
            super().end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0),
                                 functools.partial(Handler, directory=str(root / "_site")))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root / "_site"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.fixture(scope="module")
def browser(site: tuple[str, Path]) -> Iterator[Any]:
    # after `site`: Playwright's sync API runs an event loop that asyncio.run (the sync) refuses
    with playwright_api.sync_playwright() as p:
        instance = p.chromium.launch(executable_path="/usr/bin/chromium", args=LAUNCH_ARGS)
        try:
            yield instance
        finally:
            instance.close()


def _article_path(root: Path) -> str:
    for page in sorted(root.glob("*/index.html")):
        if 'data-page-type="article"' in page.read_text():
            return f"/{page.parent.name}/"
    raise AssertionError("no article page in the build")


def _visit(browser: Any, urls: list[str], events: Any, *, init: str | None = None,
           expect: int) -> tuple[list[dict[str, Any]], list[str]]:
    """Open *urls* in one context; wait for *expect* new events; return them and problems."""
    start = len(events.analytics_events)
    context = browser.new_context()
    problems: list[str] = []
    try:
        if init:
            context.add_init_script(init)
        # Chromium asks for /favicon.ico on its own; the theme need not have one
        context.route("**/favicon.ico", lambda route: route.fulfill(status=204))
        page = context.new_page()
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        for number, url in enumerate(urls, start=1):
            page.goto(url, wait_until="load")
            if expect:
                for _ in range(100):
                    if len(events.analytics_events) >= start + number:
                        break
                    page.wait_for_timeout(50)
            else:
                page.wait_for_timeout(1500)  # long enough for a send after load + idle
    finally:
        context.close()
    return list(events.analytics_events[start:]), problems


def test_one_valid_event_per_view_and_a_stable_visitor(
        browser: Any, site: tuple[str, Path], emulator: tuple[str, Any]) -> None:
    _, events = emulator
    url, root = site
    article = _article_path(root)
    sent, problems = _visit(browser, [f"{url}/?utm_source=news&utm_medium=mail&x=1#top",
                                      f"{url}{article}?token=secret"], events, expect=2)
    assert problems == []
    assert len(sent) == 2
    home, post = (AnalyticsEvent.model_validate(raw) for raw in sent)
    assert home.page is not None and home.page.type == "workspace"
    assert home.utm == {"utm_source": "news", "utm_medium": "mail"}
    assert home.articleId is None and "articleId" not in sent[0]
    assert home.page.siteSlug == "beacon-test" and home.page.host == url.split("//")[1]
    assert home.client is not None and "x" in str(home.client.get("screen"))
    # the query string goes, except utm_* parameters
    assert home.landingUrl == f"{url}/?utm_source=news&utm_medium=mail"
    assert post.page is not None and post.page.type == "article"
    assert post.page.path == article and post.page.articleSlug == article.strip("/")
    assert post.landingUrl == f"{url}{article}"
    assert post.articleId is not None and post.agentId is not None
    assert post.visitorId == home.visitorId and 6 <= len(home.visitorId) <= 128
    assert all(value is not None for raw in sent for value in raw.values())


@pytest.mark.parametrize("init", [
    "Object.defineProperty(navigator, 'doNotTrack', {get: () => '1'})",
    "Object.defineProperty(navigator, 'globalPrivacyControl', {get: () => true})",
    "Object.defineProperty(window, 'doNotTrack', {get: () => '1'})",
])
def test_nothing_is_sent_with_dnt_or_gpc(browser: Any, site: tuple[str, Path],
                                          emulator: tuple[str, Any], init: str) -> None:
    _, events = emulator
    sent, problems = _visit(browser, [f"{site[0]}/"], events, init=init, expect=0)
    assert sent == []
    assert problems == []


def test_storage_blocked_still_sends_with_a_page_id(browser: Any, site: tuple[str, Path],
                                                    emulator: tuple[str, Any]) -> None:
    _, events = emulator
    url = site[0]
    init = ("Object.defineProperty(window, 'sessionStorage', "
            "{get: () => { throw new Error('blocked'); }})")
    sent, problems = _visit(browser, [f"{url}/"], events, init=init, expect=1)
    assert problems == []
    assert len(sent) == 1
    assert 6 <= len(AnalyticsEvent.model_validate(sent[0]).visitorId) <= 128


def _stored_ids(browser: Any, url: str, events: Any, persistent: bool) -> dict[str, Any]:
    """Visit *url* (the tag made persistent when asked); where the visitor id is kept."""
    start = len(events.analytics_events)
    context = browser.new_context()
    try:
        if persistent:  # the tag as `[analytics] visitor = "persistent"` writes it
            context.add_init_script("""new MutationObserver(records => records.forEach(r =>
                r.addedNodes.forEach(el => { if (el.dataset && el.dataset.key)
                    el.dataset.visitor = 'persistent'; }))
            ).observe(document, {childList: true, subtree: true});""")
        context.route("**/favicon.ico", lambda route: route.fulfill(status=204))
        page = context.new_page()
        page.goto(url + "/", wait_until="load")
        for _ in range(100):
            if len(events.analytics_events) > start:
                break
            page.wait_for_timeout(50)
        return page.evaluate("""() => ({local: localStorage.getItem('sitegen:visitor'),
                                          session: sessionStorage.getItem('sitegen:visitor')})""")
    finally:
        context.close()


def test_the_visitor_id_lasts_a_session_unless_persistent(
        browser: Any, site: tuple[str, Path], emulator: tuple[str, Any]) -> None:
    _, events = emulator
    url, root = site
    assert 'data-visitor' not in (root / "index.html").read_text()  # the default: session
    stored = _stored_ids(browser, url, events, persistent=False)
    assert stored["local"] is None and stored["session"]
    sent = [e["visitorId"] for e in events.analytics_events]
    assert stored["session"] in sent
    stored = _stored_ids(browser, url, events, persistent=True)
    assert stored["session"] is None and stored["local"]
    assert stored["local"] in [e["visitorId"] for e in events.analytics_events[len(sent):]]
