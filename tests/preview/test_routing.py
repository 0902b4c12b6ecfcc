"""URL mapping of the preview server: pretty URLs, redirects, misses, traversal, content types."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sitegen.preview.routing import (
    NotFound,
    Redirect,
    ServeFile,
    content_type,
    path_segments,
    resolve_target,
    split_target,
)


@pytest.fixture()
def site(tmp_path: Path) -> Path:
    root = tmp_path / "out"
    (root / "hello").mkdir(parents=True)
    (root / "index.html").write_text("<p>home</p>", encoding="utf-8")
    (root / "hello" / "index.html").write_text("<p>hello</p>", encoding="utf-8")
    (root / "style.css").write_text("body{}", encoding="utf-8")
    (root / "empty").mkdir()
    (root / "caf\u00e9").mkdir()
    (root / "caf\u00e9" / "index.html").write_text("x", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("secret", encoding="utf-8")
    return root


def test_root_and_pretty_urls(site: Path) -> None:
    assert resolve_target(site, "/") == ServeFile(site / "index.html")
    assert resolve_target(site, "/hello/") == ServeFile(site / "hello" / "index.html")
    assert resolve_target(site, "/hello/index.html") == ServeFile(site / "hello" / "index.html")
    assert resolve_target(site, "/style.css?v=1") == ServeFile(site / "style.css")
    assert resolve_target(site, "/caf%C3%A9/") == ServeFile(site / "caf\u00e9" / "index.html")


def test_directory_without_slash_redirects_keeping_the_query(site: Path) -> None:
    assert resolve_target(site, "/hello") == Redirect("/hello/")
    assert resolve_target(site, "/hello?utm_source=x") == Redirect("/hello/?utm_source=x")
    assert resolve_target(site, "/caf%C3%A9") == Redirect("/caf%C3%A9/")


def test_redirect_never_leaves_the_origin(site: Path) -> None:
    # `//hello` must not become the protocol-relative (off-site) `//hello/`.
    result = resolve_target(site, "//hello")
    assert result == Redirect("/hello/")


def test_misses_and_no_directory_listing(site: Path) -> None:
    assert resolve_target(site, "/nope/") == NotFound()
    assert resolve_target(site, "/empty/") == NotFound()
    assert resolve_target(site, "/empty") == NotFound()
    assert resolve_target(site, "/style.css/") == NotFound()


@pytest.mark.parametrize("target", [
    "/../secret.txt",
    "/%2e%2e/secret.txt",
    "/%2E%2E%2Fsecret.txt",
    "/hello/..%2f..%2fsecret.txt",
    "/..%5csecret.txt",
    "/hello/%00/index.html",
    "/%ff/",
    "http://example.test/../secret.txt",
])
def test_traversal_is_refused(site: Path, target: str) -> None:
    assert resolve_target(site, target) == NotFound()


def test_absolute_paths_stay_inside(site: Path, tmp_path: Path) -> None:
    secret = (tmp_path / "secret.txt").as_posix()
    assert resolve_target(site, secret) == NotFound()
    assert resolve_target(site, "/" + secret) == NotFound()
    assert resolve_target(site, "//etc/passwd") == NotFound()


def test_symlink_out_of_the_folder_is_not_served(site: Path, tmp_path: Path) -> None:
    os.symlink(tmp_path / "secret.txt", site / "link.txt")
    os.symlink(tmp_path, site / "up")
    assert resolve_target(site, "/link.txt") == NotFound()
    assert resolve_target(site, "/up/secret.txt") == NotFound()


def test_absolute_form_targets_use_their_path(site: Path) -> None:
    assert split_target("http://127.0.0.1:8000/hello/?a=1") == ("/hello/", "a=1")
    assert resolve_target(site, "http://127.0.0.1:8000/hello/") == ServeFile(
        site / "hello" / "index.html")


def test_path_segments() -> None:
    assert path_segments("/a//./b/") == ["a", "b"]
    assert path_segments("/a/../b") is None
    assert path_segments("/a%2F..%2Fb") is None


@pytest.mark.parametrize(("name", "head", "expected"), [
    ("index.html", b"", "text/html; charset=utf-8"),
    ("style.css", b"", "text/css; charset=utf-8"),
    ("app.js", b"", "text/javascript; charset=utf-8"),
    ("logo.svg", b"", "image/svg+xml; charset=utf-8"),
    ("feed.xml", b'<?xml version="1.0"?>\n<feed xmlns="http://www.w3.org/2005/Atom">',
     "application/atom+xml; charset=utf-8"),
    ("sitemap.xml", b'<?xml version="1.0"?><urlset>', "application/xml; charset=utf-8"),
    ("robots.txt", b"", "text/plain; charset=utf-8"),
    ("font.woff2", b"", "font/woff2"),
    ("blob.unknownext", b"", "application/octet-stream"),
])
def test_content_types(name: str, head: bytes, expected: str) -> None:
    assert content_type(Path(name), head) == expected
