"""What the browser tests share: the demo output served with its `_headers`, and Chromium.

`serve_output` serves a built output folder on loopback with its `_headers` rules applied,
as Netlify or Cloudflare Pages would (so a page that breaks its Content-Security-Policy
shows it); `chromium` launches Debian's Chromium, never a browser a tool downloads.
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

from playwright.sync_api import Browser, sync_playwright

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


@contextmanager
def chromium() -> Iterator[Browser]:
    """Debian's headless Chromium, closed on exit."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=LAUNCH_ARGS)
        try:
            yield browser
        finally:
            browser.close()
