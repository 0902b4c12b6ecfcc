"""Fixtures for the preview tests: a hand-built output folder served on a real loopback port."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from sitegen.preview.fresh import FreshPages
from sitegen.preview.httpserver import PreviewServer
from sitegen.preview.reload import Event, ReloadChannel, Subscription


@dataclass
class Running:
    server: PreviewServer
    channel: ReloadChannel
    root: Path

    @property
    def url(self) -> str:
        return self.server.url.rstrip("/")


def write_site(root: Path) -> None:
    """A tiny build output, as the writer would leave it."""
    (root / "hello").mkdir(parents=True, exist_ok=True)
    (root / "static").mkdir(exist_ok=True)
    (root / "index.html").write_text(
        '<!doctype html><html><head><title>Home</title>'
        '<link rel="stylesheet" href="/static/style.css"></head>'
        "<body><h1>Home</h1></body></html>", encoding="utf-8")
    (root / "hello" / "index.html").write_text(
        "<!doctype html><html><head><title>Hello</title></head><body><p>hi</p></BODY></html>",
        encoding="utf-8")
    (root / "404.html").write_text(
        "<!doctype html><html><head><title>Not found</title></head><body>missing</body></html>",
        encoding="utf-8")
    (root / "static" / "style.css").write_text("body { color: red }", encoding="utf-8")
    (root / "static" / "logo.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>",
                                              encoding="utf-8")
    (root / "feed.xml").write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">'
        "</feed>", encoding="utf-8")
    (root / "sitemap.xml").write_text('<?xml version="1.0"?><urlset/>', encoding="utf-8")


@contextmanager
def serving(root: Path, channel: ReloadChannel,
            fresh: FreshPages | None = None) -> Iterator[PreviewServer]:
    """*root* served on a loopback port in a thread; everything closed and joined after."""
    server = PreviewServer("127.0.0.1", 0, root, channel, fresh)
    server.start()
    try:
        yield server
    finally:
        channel.close()
        server.stop()


def drain(sub: Subscription) -> list[Event]:
    """Every event waiting on *sub* (heartbeats left out)."""
    found = []
    while True:
        try:
            event = sub.get(timeout=0.01)
        except Exception:
            return found
        if event is not None:
            found.append(event)


@pytest.fixture()
def running(tmp_path: Path) -> Iterator[Running]:
    root = tmp_path / "out"
    write_site(root)
    (tmp_path / "secret.txt").write_text("top secret", encoding="utf-8")
    channel = ReloadChannel()
    with serving(root, channel) as server:
        yield Running(server, channel, root)
