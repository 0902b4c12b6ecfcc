"""The link check in the build: broken internal links are warnings (`--strict` fails and
keeps the output), kept pages are checked from what the store remembers, and the built-in
themes and the demo link to nothing that is not there."""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any

import pytest

from sitegen.build import BuildOptions, run_build
from sitegen.cli import main
from sitegen.config import Config, demo_config, parse_config
from sitegen.errors import StrictError
from sitegen.fetch.stored import open_config_store
from sitegen.report import BuildReport
from sitegen.workspace import Workspace
from tests.content import synced

BROKEN = "is broken"


def config_for(root: Path, **site: Any) -> Config:
    return parse_config({
        "site": {"title": "Links", "url": "https://links.example.test/", **site},
        "api": {"url": "https://cas.example.test", "workspace": "65f0c0ffee0123456789abcd"},
    }, root)


def record(n: int, content: str) -> dict[str, Any]:
    return {"id": f"{n:024x}", "title": f"Article {n}", "slug": f"article-{n}",
            "status": "published", "createdAt": f"2024-01-{n:02d}T10:00:00.000Z",
            "updatedAt": f"2024-01-{n:02d}T10:00:00.000Z", "content": content,
            "tags": ["news"], "language": "en"}


def workspace(*articles: dict[str, Any]) -> Workspace:
    return Workspace.model_validate({
        "api_version": "v2", "info": {"id": "65f0c0ffee0123456789abcd", "name": "W"},
        "articles": list(articles), "agents": [], "clusters": [], "authors": [],
        "social_posts": []})


LINKING = ("Three links: [gone](/no-such-article/), [anchor](/article-2/#no-such-heading) "
           "and [present](/article-2/#a-heading).")
TARGET = "Body.\n\n## A heading\n\nText."


def build(config: Config, out: Path, content: Workspace, **options: Any) -> BuildReport:
    return run_build(config, BuildOptions(output=out, workspace=content, **options))


def link_warnings(report: BuildReport) -> list[str]:
    return [m for m in report.warning_messages if BROKEN in m]


def snapshot(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_missing_page_and_a_missing_anchor_are_two_warnings_naming_the_article(
        tmp_path: Path) -> None:
    config, out = config_for(tmp_path), tmp_path / "_site"
    report = build(config, out, workspace(record(1, LINKING), record(2, TARGET)))
    found = link_warnings(report)
    assert len(found) == 2, found
    assert all(m.startswith("page article-1/index.html: the link /") for m in found)
    assert all("in the content of article 000000000000000000000001 (article-1)" in m
               for m in found)
    assert any("/no-such-article/" in m and "no such file" in m for m in found)
    assert any("/article-2/#no-such-heading" in m and "no id 'no-such-heading'" in m
               for m in found)


def test_strict_fails_on_a_broken_link_and_keeps_the_previous_output(
        tmp_path: Path) -> None:
    config, out = config_for(tmp_path), tmp_path / "_site"
    assert link_warnings(build(config, out, workspace(record(1, "Fine."), record(2, TARGET))))\
        == []
    before = snapshot(out)
    with pytest.raises(StrictError, match="warning"):
        build(config, out, workspace(record(1, LINKING), record(2, TARGET)), strict=True)
    assert snapshot(out) == before


def test_kept_pages_are_checked_again_when_a_target_goes(tmp_path: Path) -> None:
    config, out = config_for(tmp_path), tmp_path / "_site"
    extra = record(3, "A third.")
    linking = record(1, "See [three](/article-3/).")
    assert link_warnings(build(config, out, workspace(linking, record(2, TARGET), extra))) == []
    again = build(config, out, workspace(linking, record(2, TARGET)))  # article 3 unpublished
    found = link_warnings(again)
    assert len(found) == 1 and "/article-3/" in found[0] and "article-1/index.html" in found[0]
    # a build with no change renders nothing and still reports it (from the stored scans)
    same = build(config, out, workspace(linking, record(2, TARGET)))
    assert same.rendered == 0 and link_warnings(same) == found
    # ... also when the store lost them (the kept pages are read once)
    with open_config_store(config) as store:
        store.save_derived("links", {}, ())
    assert link_warnings(build(config, out, workspace(linking, record(2, TARGET)))) == found
    # and a fix clears it
    fixed = workspace(record(1, "See [two](/article-2/)."), record(2, TARGET))
    assert link_warnings(build(config, out, fixed)) == []


def tagged(n: int, content: str, tag: str) -> dict[str, Any]:
    """An article alone in its tag: no other article page shows it as related."""
    return {**record(n, content), "tags": [tag]}


def four(target: str) -> Workspace:
    """Article 1 links to a heading of article 3, which is not its neighbour (2 is) nor
    the newest (4), so a change of article 3 leaves article 1's page as it was."""
    return workspace(tagged(1, "See [the heading](/article-3/#a-heading) and [more](/more/).",
                            "one"),
                     tagged(2, "Between.", "two"), tagged(3, target, "three"),
                     tagged(4, "Newest.", "four"))


def test_a_kept_pages_links_are_checked_again_when_what_they_point_to_changes(
        tmp_path: Path) -> None:
    config, out = config_for(tmp_path), tmp_path / "_site"
    found = link_warnings(build(config, out, four(TARGET)))
    assert len(found) == 1 and "the link /more/ " in found[0]
    assert link_warnings(build(config, out, four(TARGET))) == found  # (nothing rendered)
    # a file added where the link points mends it, though the page is not rendered again
    (tmp_path / "static" / "more").mkdir(parents=True)
    (tmp_path / "static" / "more" / "index.html").write_text("<p>More.</p>")
    mended = build(config, out, four(TARGET))
    assert mended.rendered == 0 and link_warnings(mended) == []
    # the heading gone from article 3 breaks article 1's link, kept page or not
    gone = build(config, out, four("No heading now."))
    assert "article-1/index.html" not in gone.written
    found = link_warnings(gone)
    assert len(found) == 1 and "page article-1/index.html: the link /article-3/#a-heading" \
        in found[0] and "has no id 'a-heading'" in found[0]
    assert link_warnings(build(config, out, four("No heading now."))) == found
    assert link_warnings(build(config, out, four(TARGET))) == []
    # and the file it points to gone breaks it again
    (tmp_path / "static" / "more" / "index.html").unlink()
    again = build(config, out, four(TARGET))
    assert again.rendered == 0 and [m for m in link_warnings(again) if "/more/" in m]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return synced(demo_config(None, tmp_path_factory.mktemp("fetch")))


@pytest.mark.parametrize("theme", ["default", "magazine"])
@pytest.mark.parametrize("url", ["https://links.example.test/", "https://host.test/blog/"])
def test_the_built_in_themes_and_the_demo_link_to_nothing_missing(
        tmp_path: Path, demo: Workspace, theme: str, url: str) -> None:
    config = config_for(tmp_path, theme=theme, url=url)
    report = build(config, tmp_path / "_site", demo, demo=True)
    assert report.html_pages > 100
    # (the demo's content uses root-relative URLs: under a sub-path they are the host's)
    assert [m for m in link_warnings(report) if "outside the site's base path" not in m] == []
    if url.endswith("/blog/"):
        assert link_warnings(report)
    else:
        assert link_warnings(report) == []
        # (the demo links one article to a section of another: the check saw it resolve)
        page = (tmp_path / "_site" / "backups-you-have-tested" / "index.html").read_text()
        assert 'href="/the-case-for-boring-static-sites/#what-you-get"' in page


def test_sitegen_build_demo_strict_passes_and_a_broken_link_exits_1(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["build", "--demo", "-o", "out"]) == 0
    assert BROKEN not in capsys.readouterr().err
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "404.html").write_text(
        '{% extends "theme/404.html" %}{% block content %}'
        '<a href="{{ link(\'/gone/\') }}">gone</a>{% endblock %}')
    before = snapshot(tmp_path / "out")
    with caplog.at_level(logging.WARNING):
        code = main(["build", "--demo", "-o", "out", "--offline", "--strict"])
    assert code == 1
    assert "page 404.html: the link /gone/ is broken" in capsys.readouterr().err
    assert snapshot(tmp_path / "out") == before
