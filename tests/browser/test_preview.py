"""Live reload in a real browser: `sitegen serve --demo` on a real port, Chromium via Playwright.

A temporary site (site.toml, a templates/ override of base.html, a local theme with its own
stylesheet) is served with the demo's content. Each test edits a file the way an editor would
and waits (explicitly, with a timeout) for the open page to show the result by itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from sitegen.render.themes import builtin_themes_root

pytestmark = pytest.mark.browser

WAIT_MS = 30_000
SITE_TOML = """\
[site]
title = "{title}"
url = "https://preview.example.test/"
theme = "local"

[api]
url = "https://api.example.test"
workspace = "65f0c0ffee0123456789abcd"
"""
PROBE = '<p id="probe">{text}</p>'


@dataclass
class Preview:
    root: Path
    url: str
    process: subprocess.Popen[str]
    stderr: list[str] = field(default_factory=list)

    @property
    def base_html(self) -> Path:
        return self.root / "templates" / "base.html"

    @property
    def stylesheet(self) -> Path:
        return self.root / "themes" / "local" / "static" / "style.css"

    def write_base(self, marker: str) -> None:
        """The default base.html with a probe paragraph (or any markup) after <body>."""
        original = (builtin_themes_root() / "default" / "templates" / "base.html").read_text(
            encoding="utf-8")
        head, sep, tail = original.partition('<body class="kind-{{ page.kind }}">')
        assert sep, "the default base.html changed shape: update this test"
        _save(self.base_html, head + sep + "\n" + marker + tail)

    def lines_matching(self, text: str) -> list[str]:
        return [line for line in list(self.stderr) if text in line]


def _save(path: Path, text: str) -> None:
    """Save like an editor: write a temporary file beside, then rename over."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def _drain(stream: object, sink: list[str]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        sink.append(line.rstrip("\n"))


@pytest.fixture(scope="module")
def preview(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Preview]:
    root = tmp_path_factory.mktemp("site")
    (root / "site.toml").write_text(SITE_TOML.format(title="Preview Test"), encoding="utf-8")
    (root / "templates").mkdir()
    (root / "themes" / "local" / "templates").mkdir(parents=True)
    (root / "themes" / "local" / "static").mkdir()
    shutil.copy(builtin_themes_root() / "default" / "static" / "style.css",
                root / "themes" / "local" / "static" / "style.css")
    env = {**os.environ, "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "sitegen", "serve", "--demo", "--port", "0",
         "--refresh-every", "0"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    assert first.startswith("sitegen preview: "), first
    state = Preview(root, first.split()[2], process)
    state.write_base(PROBE.format(text="start"))
    drainer = threading.Thread(target=_drain, args=(process.stderr, state.stderr), daemon=True)
    drainer.start()
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            if httpx.get(state.url, timeout=5).status_code == 200:
                break
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    else:
        process.kill()
        pytest.fail("the preview never served its first build: " + "\n".join(state.stderr))
    try:
        yield state
    finally:
        process.terminate()
        process.wait(timeout=60)
        drainer.join(timeout=10)
        process.stdout.close()
        process.stderr.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        launched = p.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run"])
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture()
def page(browser: Browser, preview: Preview) -> Iterator[Page]:
    context = browser.new_context()
    opened = context.new_page()
    opened.goto(preview.url)
    # Wait until the page's event stream is connected (the script answered `hello`).
    opened.wait_for_function("() => window.__sitegenPreview !== undefined", timeout=WAIT_MS)
    try:
        yield opened
    finally:
        context.close()


def _probe(page: Page, text: str) -> None:
    page.wait_for_function(
        "text => document.getElementById('probe')?.textContent === text", arg=text,
        timeout=WAIT_MS)


OVERLAY_LOCATION = """() => {
  const host = document.getElementById('sitegen-overlay');
  const node = host && host.shadowRoot && host.shadowRoot.querySelector('.location');
  return node ? node.textContent : null;
}"""


def test_template_edit_shows_without_reloading_by_hand(page: Page, preview: Preview) -> None:
    _probe(page, "start")
    preview.write_base(PROBE.format(text="edited once"))
    _probe(page, "edited once")
    assert page.evaluate("document.getElementById('sitegen-overlay')") is None
    # The open page is served before the rest of the site is; the terminal line comes at the end.
    deadline = time.monotonic() + 30
    while not preview.lines_matching("(template change)"):
        assert time.monotonic() < deadline, "the terminal did not report the rebuild"
        time.sleep(0.05)


def test_broken_template_shows_overlay_and_fixing_heals(page: Page, preview: Preview) -> None:
    preview.write_base(PROBE.format(text="before break"))
    _probe(page, "before break")
    preview.write_base(PROBE.format(text="broken") + "\n{{ oops }\n")
    location = page.wait_for_function(OVERLAY_LOCATION, timeout=WAIT_MS).json_value()
    body_line = next(i for i, line in enumerate(preview.base_html.read_text(
        encoding="utf-8").splitlines(), start=1) if "{{ oops }" in line)
    assert location == f"templates/base.html:{body_line}"
    message = page.evaluate("""() => document.getElementById('sitegen-overlay')
        .shadowRoot.querySelector('.message').textContent""")
    assert message
    # The last good build is still what is served.
    assert "before break" in httpx.get(preview.url).text
    deadline = time.monotonic() + 30
    while not preview.lines_matching(f"templates/base.html:{body_line}:"):
        assert time.monotonic() < deadline, "the terminal did not name the file and line"
        time.sleep(0.1)
    preview.write_base(PROBE.format(text="healed"))
    _probe(page, "healed")
    page.wait_for_function("() => document.getElementById('sitegen-overlay') === null",
                           timeout=WAIT_MS)


def test_css_edit_swaps_styles_without_navigation(page: Page, preview: Preview) -> None:
    page.evaluate("window.__previewMarker = 'still here'")
    before = page.evaluate("document.querySelector('link[rel=stylesheet]').href")
    original = preview.stylesheet.read_text(encoding="utf-8")
    _save(preview.stylesheet, original + "\n#probe { color: rgb(1, 2, 3) !important; }\n")
    try:
        page.wait_for_function(
            "() => getComputedStyle(document.getElementById('probe')).color === 'rgb(1, 2, 3)'",
            timeout=WAIT_MS)
        assert page.evaluate("window.__previewMarker") == "still here"
        assert page.evaluate("document.querySelector('link[rel=stylesheet]').href") != before
    finally:
        _save(preview.stylesheet, original)
    page.wait_for_function(
        "() => getComputedStyle(document.getElementById('probe')).color !== 'rgb(1, 2, 3)'",
        timeout=WAIT_MS)
    assert page.evaluate("window.__previewMarker") == "still here"


def test_config_title_change_shows(page: Page, preview: Preview) -> None:
    config = preview.root / "site.toml"
    _save(config, SITE_TOML.format(title="A Brand New Title"))
    try:
        page.wait_for_function("() => document.title.includes('A Brand New Title')",
                               timeout=WAIT_MS)
    finally:
        _save(config, SITE_TOML.format(title="Preview Test"))
    page.wait_for_function("() => document.title.includes('Preview Test')", timeout=WAIT_MS)


def test_invalid_config_shows_overlay_and_keeps_serving(page: Page, preview: Preview) -> None:
    config = preview.root / "site.toml"
    good = config.read_text(encoding="utf-8")
    page.evaluate("window.__previewMarker = 'before the fix'")
    _save(config, good.replace('title = "Preview Test"', "title = "))
    try:
        location = page.wait_for_function(OVERLAY_LOCATION, timeout=WAIT_MS).json_value()
        assert location == "site.toml:2"
        assert httpx.get(preview.url).status_code == 200
    finally:
        _save(config, good)
    # Fixing the file reloads the page: a fresh document, stream connected, no overlay.
    page.wait_for_function(
        """() => window.__previewMarker === undefined && document.readyState === 'complete'
            && window.__sitegenPreview !== undefined
            && document.getElementById('sitegen-overlay') === null""", timeout=WAIT_MS)


LOADS = """sessionStorage.setItem('loads',
    String(Number(sessionStorage.getItem('loads') || 0) + 1));"""


def _other_page_url(preview: Preview) -> str:
    """A page of the demo site other than the home page (from its sitemap)."""
    sitemap = httpx.get(preview.url + "sitemap.xml").text
    locs = [part.split("</loc>")[0] for part in sitemap.split("<loc>")[1:]]
    others = [loc for loc in locs if loc.rstrip("/") != preview.url.rstrip("/")]
    assert others, "the demo sitemap lists no page besides the home page"
    return others[0]


def test_open_pages_are_rebuilt_first_and_reload_once(browser: Browser, preview: Preview) -> None:
    context = browser.new_context()
    context.add_init_script(LOADS)
    try:
        pages = []
        for url in (preview.url, _other_page_url(preview)):
            opened = context.new_page()
            opened.goto(url)
            opened.wait_for_function("() => window.__sitegenPreview !== undefined",
                                     timeout=WAIT_MS)
            pages.append(opened)
        rebuilt = len(preview.lines_matching("(template change)"))
        preview.write_base(PROBE.format(text="both pages"))
        for opened in pages:
            _probe(opened, "both pages")
        deadline = time.monotonic() + 30
        while len(preview.lines_matching("(template change)")) <= rebuilt:
            assert time.monotonic() < deadline, "the rebuild never finished"
            time.sleep(0.05)
        committed = httpx.get(preview.url).text.split('data-sitegen-build="')[1].split('"')[0]
        time.sleep(0.5)  # room for a (wrong) second reload to show
        for opened in pages:
            opened.wait_for_function("id => window.__sitegenPreview?.build === id",
                                     arg=committed, timeout=WAIT_MS)
            assert opened.evaluate("sessionStorage.getItem('loads')") == "2"
    finally:
        context.close()


def test_search_works_in_the_preview(browser: Browser, preview: Preview) -> None:
    """The preview builds through the recipe, so its `/search/` page finds as the site's does."""
    from tests.browser.test_search import _unique_word

    word, url = _unique_word(preview.root / ".sitegen" / "preview")
    context = browser.new_context()
    try:
        opened = context.new_page()
        opened.goto(preview.url.rstrip("/") + "/search/")
        opened.locator("#search-input").fill(word)
        first = opened.locator(".search-result__link").first
        first.wait_for(timeout=WAIT_MS)
        assert first.get_attribute("href") == url
        assert opened.request.get(preview.url.rstrip("/") + url).status == 200
    finally:
        context.close()
