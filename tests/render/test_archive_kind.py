"""The archive by month (the proof that a page kind is small): its pages, in every language of
the site, named by Babel, paginated, linked from the footer, with SEO, sitemap entries, reserved
slug and incremental reads that come from the page kinds registry alone."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest

from sitegen.build import BuildOptions, run_build
from sitegen.model import build_site
from sitegen.model.slugs import reserved
from tests.render.render_factory import article, make_config, make_workspace

SITE = "https://site.example.test"


def _dated(n: int, day: str, **fields: object) -> dict[str, object]:
    return article(n, createdAt=f"{day}T10:00:00.000Z", updatedAt=f"{day}T11:00:00.000Z",
                   **fields)


ARTICLES = [_dated(1, "2024-01-05"), _dated(2, "2024-01-20"), _dated(3, "2024-01-25"),
            _dated(4, "2024-03-02", language="fr", title="Le quatrième"),
            _dated(5, "2024-03-09", slug="archive")]


def _main(html: str) -> str:
    found = re.search(r"<main.*?</main>", html, re.S)
    assert found is not None
    return found[0]


def test_each_month_of_each_language_is_a_page_named_in_its_language(tmp_path: Path) -> None:
    config = make_config(tmp_path, per_page=2)
    out = tmp_path / "out"
    run_build(config, BuildOptions(output=out, workspace=make_workspace(ARTICLES)))

    january = (out / "archive" / "2024" / "01" / "index.html").read_text()
    assert "<h1>January 2024</h1>" in january and "<title>January 2024 – Test Site</title>" \
        in january
    main = _main(january)  # newest first, two to a page like every list
    assert main.index("/article-3/") < main.index("/article-2/") and "/article-1/" not in main
    second = _main((out / "archive" / "2024" / "01" / "page" / "2" / "index.html").read_text())
    assert "/article-1/" in second and "/article-2/" not in second
    assert f'<link rel="canonical" href="{SITE}/archive/2024/01/">' in january
    found = re.search(r'<script type="application/ld\+json">(.*?)</script>', january, re.S)
    assert found is not None and json.loads(found[1])["@type"] == "CollectionPage"

    # the French archive: its articles only, in French, its month named by Babel in French
    french = (out / "lang" / "fr" / "archive" / "2024" / "03" / "index.html").read_text()
    assert '<html lang="fr">' in french and "<h1>Mars 2024</h1>" in french
    assert "Le quatrième" in _main(french) and "/archive-2/" not in _main(french)
    assert '<a href="/lang/fr/archive/">Archives</a>' in french
    assert not (out / "lang" / "fr" / "archive" / "2024" / "01").exists()

    # the index of months, linked from every page's footer
    index = _main((out / "archive" / "index.html").read_text())
    assert index.index("/archive/2024/03/") < index.index("/archive/2024/01/")
    assert '<a href="/lang/fr/archive/" hreflang="fr" lang="fr">Français</a>' in index
    for page in (out / "index.html", out / "article-2" / "index.html"):
        assert '<a href="/archive/">Archive</a>' in page.read_text()
    sitemap = (out / "sitemap.xml").read_text()
    assert f"<loc>{SITE}/archive/2024/01/</loc>" in sitemap
    assert f"<loc>{SITE}/lang/fr/archive/</loc>" in sitemap
    # its first segment is reserved: the article that asked for it moved
    assert "archive" in reserved() and (out / "archive-2" / "index.html").is_file()


def test_a_month_is_named_standalone_in_the_sites_language(tmp_path: Path) -> None:
    site = build_site(make_config(tmp_path, language="pl"), make_workspace(
        [_dated(1, "2024-01-05", language="pl")]))
    (month,) = [page for page in site.pages if page.kind == "month"]
    assert month.title == "Styczeń 2024"  # not the genitive of a date, "stycznia 2024"
    assert month.language == "pl" and month.url == "/archive/2024/01/"


def test_an_edit_renders_its_months_pages_again_and_no_other_month(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    out = tmp_path / "out"
    run_build(config, BuildOptions(output=out, workspace=make_workspace(ARTICLES)))
    edited = [*ARTICLES[:4], {**ARTICLES[4], "title": "Retitled in March"}]
    report = run_build(config, BuildOptions(output=out, workspace=make_workspace(edited)))
    assert "archive/2024/03/index.html" in report.written
    assert "Retitled in March" in (out / "archive" / "2024" / "03" / "index.html").read_text()
    assert "archive/2024/01/index.html" not in report.written


def test_a_site_with_nothing_published_has_an_empty_archive_its_footer_can_link(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    out = tmp_path / "out"
    with caplog.at_level(logging.WARNING):
        run_build(make_config(tmp_path), BuildOptions(output=out, workspace=make_workspace([])))
    html = (out / "archive" / "index.html").read_text()
    assert "Nothing has been published here yet." in html and "0 months" in html
    assert [path.name for path in (out / "archive").iterdir()] == ["index.html"]  # no month
    assert '<a href="/archive/">Archive</a>' in (out / "index.html").read_text()
    assert not [r for r in caplog.records if "/archive/" in r.getMessage()]  # the link check
