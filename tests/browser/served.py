"""What the browser tests share: the demo output served with its `_headers`, and Chromium.

`serve_output` serves a built output folder on loopback with its `_headers` rules applied,
as Netlify or Cloudflare Pages would (so a page that breaks its Content-Security-Policy
shows it); `build_demo` builds the demo in a theme (with an own page, `/about/`) and
`demo_sites` builds it in each built-in theme and serves each; `chromium` launches
Debian's Chromium, never a browser a tool downloads.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Page, sync_playwright

from sitegen.build import BuildOptions, run_build
from sitegen.config import DEMO_WORKSPACE_ID, demo_config, parse_config
from sitegen.workspace import Workspace
from tests.content import synced

LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--no-first-run"]
THEMES = ("default", "magazine")


def rule_pattern(path: str) -> re.Pattern[str]:
    """A `_headers` path as both hosts read it: `*` matches anything, a `:name` segment one
    segment."""
    parts = re.split(r"(\*|:[A-Za-z_][A-Za-z0-9_]*)", path)
    return re.compile("".join(".*" if part == "*" else "[^/]+" if part.startswith(":")
                              else re.escape(part) for part in parts) + r"\Z")


def header_rules(text: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """The rules of a `_headers` file: (path pattern, [(name, value)]) in order."""
    rules: list[tuple[str, list[tuple[str, str]]]] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            rules.append((line.strip(), []))
        else:
            name, _, value = line.strip().partition(":")
            rules[-1][1].append((name.strip(), value.strip()))
    return rules


class _HeadersHandler(SimpleHTTPRequestHandler):
    """Serves the output with its `_headers` rules applied, and logs nothing."""

    rules: list[tuple[str, list[tuple[str, str]]]] = []

    def end_headers(self) -> None:
        path = self.path.split("?", 1)[0]
        for pattern, headers in self.rules:
            if rule_pattern(pattern).match(path):
                for name, value in headers:
                    self.send_header(name, value)
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass


def serve_output(output: Path) -> tuple[str, ThreadingHTTPServer]:
    """(base URL, running server) of *output* with its `_headers`; shut the server down."""
    rules = header_rules((output / "_headers").read_text(encoding="utf-8"))
    served = type("Served", (_HeadersHandler,), {"rules": rules})
    server = ThreadingHTTPServer(("127.0.0.1", 0),
                                 functools.partial(served, directory=str(output)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}", server


#: The demo's own page (the demo workspace has none: own pages are the site's).
OWN_PAGE = ('+++\ntitle = "About"\nmenu = 1\n+++\n## Who\n\nUs, [elsewhere](/tags/).\n'
            "\n## How\n\n```python\nprint(1)\n```\n\n## Where\n\nHere.\n")


def build_demo(root: Path, theme: str, *, workspace: Workspace | None = None,
               url: str = "http://127.0.0.1/") -> Path:
    """The demo built in *theme* into `root/THEME/_site` (its site folder with the own page
    `/about/`), its public address *url*; returns the output folder."""
    site = root / theme
    (site / "pages").mkdir(parents=True, exist_ok=True)
    (site / "pages" / "about.md").write_text(OWN_PAGE, encoding="utf-8")
    config = parse_config({
        "site": {"title": "Northwind Field Notes", "url": url,
                 "description": "Slow travel, patient fermentation and quiet tooling",
                 "theme": theme},
        "api": {"url": "http://127.0.0.1:9/", "workspace": DEMO_WORKSPACE_ID},
        "analytics": {"enabled": False},
    }, site)
    output = site / "_site"
    run_build(config, BuildOptions(output=output, demo=True,
                                   workspace=workspace or synced(demo_config(None, root))))
    return output


@contextmanager
def demo_sites(root: Path, *, url: str = "http://127.0.0.1/"
               ) -> Iterator[dict[str, tuple[str, Path]]]:
    """theme → (base URL, output folder) of the demo built in each built-in theme under
    *root* (`build_demo`), each served from loopback until the block ends."""
    workspace = synced(demo_config(None, root))
    servers: list[ThreadingHTTPServer] = []
    found: dict[str, tuple[str, Path]] = {}
    try:
        for theme in THEMES:
            output = build_demo(root, theme, workspace=workspace, url=url)
            base, server = serve_output(output)
            servers.append(server)
            found[theme] = (base, output)
        yield found
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


@contextmanager
def chromium() -> Iterator[Browser]:
    """Debian's headless Chromium, closed on exit."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=LAUNCH_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def open_page(browser: Browser, width: int, height: int = 800) -> Page:
    """A new page in a context of its own, *width*×*height*, a minute's timeout."""
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(60_000)
    return context.new_page()
