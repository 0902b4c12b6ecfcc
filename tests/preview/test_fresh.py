"""Pages rendered first: URL → page matching, the early `reload`, serving them until the commit."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from sitegen.errors import BuildError
from sitegen.preview.fresh import MAX_FIRST_PAGES, FreshPages, output_path, pages_for
from sitegen.preview.httpserver import PreviewServer
from sitegen.preview.reload import Problem, ReloadChannel

from .conftest import drain, serving, write_site


@dataclass
class FakePage:
    path: str


@dataclass
class FakeSite:
    pages: list[FakePage]


@dataclass
class FakeRenderer:
    site: FakeSite
    rendered: list[str] = field(default_factory=list)
    broken: str | None = None

    def render(self, page: FakePage) -> bytes:
        if page.path == self.broken:
            raise BuildError(f"rendering {page.path} failed: fix the template")
        self.rendered.append(page.path)
        return f"<html><body>new {page.path}</body></html>".encode()


SITE = FakeSite([FakePage("index.html"), FakePage("hello/index.html"),
                 FakePage("caf\u00e9/index.html"), FakePage("404.html"), FakePage("a.html")])


@pytest.mark.parametrize(("url", "rel"), [
    ("/", "index.html"),
    ("/hello/", "hello/index.html"),
    ("/hello", "hello"),
    ("/a.html", "a.html"),
    ("/caf%C3%A9/", "caf\u00e9/index.html"),
    ("/x/?q=1", "x/index.html"),
    ("/../etc/passwd", None),
    ("/%2e%2e/x/", None),
])
def test_output_path_maps_urls_like_the_server(url: str, rel: str | None) -> None:
    assert output_path(url) == rel


def test_pages_for_matches_reported_paths_to_pages() -> None:
    found = pages_for({"/", "/caf%C3%A9/", "/missing/", "/../x"}, SITE.pages)  # type: ignore[arg-type]
    assert {url: page.path for url, page in found.items()} == {
        "/": "index.html", "/caf%C3%A9/": "caf\u00e9/index.html"}


def test_pages_for_is_bounded() -> None:
    pages = [FakePage(f"p{n}/index.html") for n in range(50)]
    found = pages_for({f"/p{n}/" for n in range(50)}, pages)  # type: ignore[arg-type]
    assert len(found) == MAX_FIRST_PAGES


def test_render_first_serves_open_pages_and_announces_only_them() -> None:
    channel = ReloadChannel()
    fresh = FreshPages(channel)
    home = channel.subscribe("/")
    other = channel.subscribe("/nowhere/")
    drain(home), drain(other)
    committed = channel.build_id
    renderer = FakeRenderer(SITE)
    fresh.render_first(renderer)  # type: ignore[arg-type]
    assert renderer.rendered == ["index.html"]
    found = fresh.get("index.html")
    assert found is not None
    data, build = found
    assert data == b"<html><body>new index.html</body></html>"
    assert build == channel.next_build_id and build != committed
    assert fresh.get("hello/index.html") is None
    [early] = drain(home)
    assert early.name == "reload" and early.data == {"build": build, "paths": ["/"]}
    assert channel.build_id == committed  # nothing committed yet
    # A page that reconnects while the build runs is not told to reload again.
    late = channel.subscribe("/")
    hello = late.get(timeout=1)
    assert hello is not None and hello.data["pending"] == build
    # The commit: the same id, announced to every page (the early ones already have it).
    channel.built()
    fresh.clear()
    assert channel.build_id == build
    [final] = drain(other)[-1:]
    assert final.name == "reload" and final.data == {"build": build}
    assert fresh.get("index.html") is None and len(fresh) == 0


def test_no_open_page_means_nothing_rendered_ahead() -> None:
    channel = ReloadChannel()
    fresh = FreshPages(channel)
    sub = channel.subscribe()  # a stream that reported no path
    drain(sub)
    renderer = FakeRenderer(SITE)
    fresh.render_first(renderer)  # type: ignore[arg-type]
    assert renderer.rendered == [] and len(fresh) == 0
    assert drain(sub) == []


def test_a_failed_page_publishes_nothing() -> None:
    channel = ReloadChannel()
    fresh = FreshPages(channel)
    sub = channel.subscribe("/")
    drain(sub)
    with pytest.raises(BuildError):
        fresh.render_first(FakeRenderer(SITE, broken="index.html"))  # type: ignore[arg-type]
    assert len(fresh) == 0 and drain(sub) == []


def test_a_build_failing_after_its_early_pages_never_reuses_their_id() -> None:
    channel = ReloadChannel()
    fresh = FreshPages(channel)
    sub = channel.subscribe("/")
    drain(sub)
    fresh.render_first(FakeRenderer(SITE))  # type: ignore[arg-type]
    early = fresh.get("index.html")
    assert early is not None
    fresh.clear()
    channel.failed(Problem("boom", file="templates/page.html", line=3, kind="template"))
    # Pages showing the early page carry its id; the next good build must differ from it.
    channel.built()
    assert channel.build_id != early[1]
    names = [event.name for event in drain(sub)]
    assert names == ["reload", "problem", "reload"]


# --- over HTTP -------------------------------------------------------------------------


@pytest.fixture()
def served(tmp_path: Path) -> Iterator[tuple[PreviewServer, FreshPages]]:
    root = tmp_path / "out"
    write_site(root)
    channel = ReloadChannel()
    fresh = FreshPages(channel)
    with serving(root, channel, fresh) as server:
        yield server, fresh


def test_stream_reports_its_page_path(served: tuple[PreviewServer, FreshPages]) -> None:
    server, _ = served
    url = server.url + "__sitegen/events?path=%2Fhello%2F"
    with httpx.stream("GET", url, timeout=10) as response:
        lines = response.iter_lines()  # (kept: a dropped iterator closes the stream)
        for line in lines:
            if line.startswith("data: "):
                break
        assert server.channel.open_paths() == {"/hello/"}
    with httpx.stream("GET", server.url + "__sitegen/events?path=nope", timeout=10) as response:
        lines = response.iter_lines()
        for line in lines:
            if line.startswith("data: "):
                break
        assert server.channel.open_paths() <= {"/hello/"}  # not a path: not recorded


def test_fresh_pages_are_served_until_cleared(
        served: tuple[PreviewServer, FreshPages]) -> None:
    server, fresh = served
    with httpx.stream("GET", server.url + "__sitegen/events?path=%2Fhello%2F",
                      timeout=10) as response:
        lines = response.iter_lines()
        for line in lines:
            if line.startswith("data: "):
                break
        site = FakeSite([FakePage("index.html"), FakePage("hello/index.html")])
        fresh.render_first(FakeRenderer(site))  # type: ignore[arg-type]
        for line in lines:
            if line.startswith("data: "):
                assert json.loads(line[6:])["paths"] == ["/hello/"]
                break
    pending = server.channel.next_build_id
    page = httpx.get(server.url + "hello/")
    assert page.status_code == 200
    assert "new hello/index.html" in page.text
    assert f'data-sitegen-build="{pending}"' in page.text
    assert "livereload.js" not in (server.root / "hello" / "index.html").read_text("utf-8")
    home = httpx.get(server.url)  # not rendered ahead: the committed file, the committed id
    assert "<h1>Home</h1>" in home.text
    assert f'data-sitegen-build="{server.channel.build_id}"' in home.text
    fresh.clear()
    assert "<p>hi</p>" in httpx.get(server.url + "hello/").text


def test_render_first_waits_for_the_announced_page_to_be_fetched() -> None:
    channel = ReloadChannel()
    fresh = FreshPages(channel, settle=60.0)
    sub = channel.subscribe("/")
    drain(sub)
    done = threading.Event()

    def build() -> None:
        fresh.render_first(FakeRenderer(SITE))  # type: ignore[arg-type]
        done.set()

    thread = threading.Thread(target=build)
    thread.start()
    early = sub.get(timeout=10)
    assert early is not None and early.name == "reload"
    assert not done.wait(0.2)  # still waiting for the page's browser
    assert fresh.get("hello/index.html") is None  # another page does not count
    assert not done.is_set()
    assert fresh.get("index.html") is not None
    assert done.wait(10)
    thread.join(timeout=10)
