"""`sitegen.emit.links`: which links are the site's own, and which of those are broken."""

from __future__ import annotations

import pytest

from sitegen.emit.links import Broken, LinkScanner, PageLinks, has_anchor

PATHS = frozenset({"index.html", "a/index.html", "b/index.html", "feed.xml",
                   "static/style.css", "tags/x/index.html"})
PAGES = {
    "index.html": b'<main id="main"><a href="/a/">a</a></main>',
    "a/index.html": b'<h2 id="intro">x</h2><a name="old">',
    "b/index.html": b"<p>b</p>",
}


@pytest.mark.parametrize(("page", "link", "expected"), [
    ("a/index.html", "/b/", ("b/index.html", "")),
    ("a/index.html", "/", ("index.html", "")),
    ("a/index.html", "../b/#x", ("b/index.html", "x")),
    ("a/index.html", "./", ("a/index.html", "")),
    ("a/index.html", "#intro", ("a/index.html", "intro")),
    ("a/index.html", "https://site.test/feed.xml", ("feed.xml", "")),
    ("a/index.html", "https://SITE.test/b/?q=1#y", ("b/index.html", "y")),
    ("a/index.html", "/static/style.css?v=2", ("static/style.css", "")),
    ("a/index.html", "/caf%C3%A9/", ("café/index.html", "")),
    ("a/index.html", "https://other.test/x/", None),
    ("a/index.html", "//other.test/x/", None),
    ("a/index.html", "mailto:me@site.test", None),
    ("a/index.html", "data:image/png;base64,AAAA", None),
    ("a/index.html", "#", None),
    ("a/index.html", "../../x/", ("x/index.html", "")),  # clamped at the root, as browsers do
])
def test_resolve(page: str, link: str, expected: object) -> None:
    assert LinkScanner("https://site.test/").resolve(page, link) == expected


def test_a_base_path_is_part_of_every_root_relative_link() -> None:
    scanner = LinkScanner("https://site.test/blog/")
    assert scanner.resolve("a/index.html", "/blog/b/") == ("b/index.html", "")
    assert scanner.resolve("a/index.html", "https://site.test/blog/") == ("index.html", "")
    assert scanner.resolve("a/index.html", "https://site.test/other/") is None
    assert scanner.resolve("a/index.html", "/other/") == (
        "it is outside the site's base path /blog/")


def test_a_missing_page_and_a_missing_anchor_are_broken_and_a_present_one_is_not() -> None:
    scanner = LinkScanner("https://site.test/")
    page = (b'<p><a href="/nowhere/">1</a> <a href="/a/#missing">2</a> '
            b'<a href="/a/#intro">3</a> <a href="https://elsewhere.test/x/">4</a> '
            b'<img src="/static/style.css"></p>')
    pages = {"b/index.html": scanner.scan("b/index.html", page)}
    broken = scanner.find_broken(pages, PATHS, PAGES.get)
    assert broken == [
        Broken("b/index.html", "/a/#missing", "a/index.html has no id 'missing'"),
        Broken("b/index.html", "/nowhere/", "no such file in the site"),
    ]


def test_own_fragments_are_decided_by_the_page_itself() -> None:
    scanner = LinkScanner("https://site.test/")
    links = scanner.scan("a/index.html", b'<a href="#main">s</a><main id="main">'
                                         b'<a href="#gone">g</a><a href="#top">t</a>')
    assert links.missing == (b"#gone",)
    assert links.links == ()
    assert LinkScanner("https://site.test/").find_broken({"a/index.html": links}, PATHS,
                                                         PAGES.get) == [
        Broken("a/index.html", "#gone", "this page has no id 'gone'")]


def test_a_folder_link_without_its_slash_resolves_to_its_index() -> None:
    scanner = LinkScanner("https://site.test/")
    links = scanner.scan("b/index.html", b'<a href="/tags/x">x</a><a href="tags/x">r</a>')
    assert scanner.find_broken({"b/index.html": links}, PATHS, PAGES.get) == [
        Broken("b/index.html", "tags/x", "no such file in the site")]  # (b/tags/x)
    assert scanner.find_broken({"index.html": links}, PATHS, PAGES.get) == []


def test_anchors_may_be_ids_or_names_and_are_escaped_like_attributes() -> None:
    assert has_anchor(PAGES["a/index.html"], "intro")
    assert has_anchor(PAGES["a/index.html"], "old")
    assert not has_anchor(PAGES["a/index.html"], "nope")
    assert has_anchor(b'<h2 id="a&amp;b">', "a&b")


def test_a_scan_survives_the_store() -> None:
    links = LinkScanner("https://site.test/").scan(
        "b/index.html", b'<a href="/a/#x">x</a><a href="#y">y</a><a href="/a/\nb/">')
    assert PageLinks.from_bytes(links.to_bytes()) == links


@pytest.mark.parametrize("base", ["https://site.test/", "https://site.test/blog/"])
@pytest.mark.parametrize("link", ["/", "/a/", "/a/b.css", "/a/../b/", "/x//y/", "/.well/x",
                                  "/a%20b/", "/a&amp;b/", "/blog/", "/blog/a/", "/blog",
                                  "/blog/x/../y"])
def test_the_fast_path_agrees_with_resolve(base: str, link: str) -> None:
    scanner = LinkScanner(base)
    fast = scanner._simple(link.encode())
    assert fast is None or fast == scanner.resolve("p/index.html", link)
