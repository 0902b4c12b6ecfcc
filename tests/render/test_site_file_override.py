"""A site's own `templates/feed.xml` (and sitemap.xml, robots.txt) replaces the theme's, like
any page template, and incremental builds re-render a site file exactly when what it read
changed: its template, or an article it shows."""

from __future__ import annotations

import shutil
from pathlib import Path

import feedparser
from render_factory import article, make_config, make_workspace

from sitegen.build import BuildOptions, run_build
from sitegen.workspace import Workspace

FEED = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>{{ page.title }} (MARK)</title>
  <id>{{ absolute(page.url) }}</id>
  <updated>{{ (page.updated or build_date) | atom_date }}</updated>
{% for item in page.articles %}
  <entry><title>{{ item.title }}</title><id>{{ absolute(item.url) }}</id>
    <updated>{{ item.updated | atom_date }}</updated></entry>
{% endfor %}
</feed>
"""


def _files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and not p.name.startswith(".")}


def _build(root: Path, workspace: Workspace, mark: str) -> tuple[list[str], dict[str, bytes]]:
    (root / "templates").mkdir(parents=True, exist_ok=True)
    (root / "templates" / "feed.xml").write_text(FEED.replace("MARK", mark))
    config = make_config(root)
    report = run_build(config, BuildOptions(output=root / "out", workspace=workspace))
    return report.written, _files(root / "out")


def test_a_sites_feed_template_overrides_the_themes_and_edits_re_render_it(
        tmp_path: Path) -> None:
    first = make_workspace([article(1, tags=["news"]), article(2, tags=["other"])])
    written, files = _build(tmp_path / "site", first, "own v1")
    parsed = feedparser.parse(files["feed.xml"])
    assert parsed.bozo == 0 and parsed.feed.title == "Test Site (own v1)"
    assert [e.title for e in parsed.entries] == ["Article 2", "Article 1"]
    assert b"(own v1)" in files["tags/news/feed.xml"]  # every feed: the same template
    assert b"<generator" not in files["feed.xml"]  # nothing of the theme's

    written, files = _build(tmp_path / "site", first, "own v2")
    assert b"(own v2)" in files["feed.xml"]
    feeds = sorted(path for path in files if path.endswith("feed.xml"))
    assert sorted(written) == feeds  # the feeds read the template; no page did

    edited = make_workspace([article(1, tags=["news"]),
                             article(2, tags=["other"], title="Retitled")])
    written, files = _build(tmp_path / "site", edited, "own v2")
    assert "Retitled" in feedparser.parse(files["feed.xml"]).entries[0].title
    assert {"feed.xml", "tags/other/feed.xml"} <= set(written)
    assert "tags/news/feed.xml" not in written  # it does not show the article
    _, fresh = _build(tmp_path / "fresh", edited, "own v2")
    shutil.rmtree(tmp_path / "fresh")
    assert files == fresh  # the incremental build is the fresh one, file for file


def test_sitemap_and_robots_templates_are_overridable_too(tmp_path: Path) -> None:
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "robots.txt").write_text(
        "User-agent: *\nDisallow: /drafts/\nSitemap: {{ absolute('/sitemap.xml') }}\n")
    (tmp_path / "templates" / "sitemap.xml").write_text(
        '{% extends "theme/sitemap.xml" %}')
    config = make_config(tmp_path)
    run_build(config, BuildOptions(output=tmp_path / "out", workspace=make_workspace(
        [article(1)])))
    robots = (tmp_path / "out" / "robots.txt").read_text()
    assert robots.startswith("User-agent: *\nDisallow: /drafts/\n")
    assert b"<urlset" in (tmp_path / "out" / "sitemap.xml").read_bytes()
