"""`sitegen build` end to end: the demo through the emulator, incremental rebuilds, failures."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import feedparser
import httpx
import pytest

from sitegen.build import BuildOptions, run_build
from sitegen.cli import main
from sitegen.config import Config, demo_config, parse_config
from sitegen.errors import BuildError, ConfigError, StrictError
from sitegen.outputnames import MANIFEST_NAME
from sitegen.report import BuildReport
from sitegen.store import STORE_FILE
from sitegen.workspace import Workspace
from tests.content import synced

REPO = Path(__file__).resolve().parents[1]


def snapshot(root: Path) -> dict[str, tuple[str, int]]:
    """Every file under *root*: (sha256, mtime_ns)."""
    return {
        path.relative_to(root).as_posix(): (
            hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
        for path in sorted(root.rglob("*")) if path.is_file()
    }


def contents(root: Path) -> dict[str, str]:
    """Every file's sha256 but the manifest's (sitegen's bookkeeping holds mtimes)."""
    return {path: digest for path, (digest, _) in snapshot(root).items()
            if path != MANIFEST_NAME}


@pytest.fixture(scope="module")
def demo_workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return synced(demo_config(None, tmp_path_factory.mktemp("fetch")))


def build(config: Config, output: Path, workspace: Workspace | None = None,
          **options: object) -> BuildReport:
    """`run_build` with these options (the content given, when *workspace* is)."""
    return run_build(config, BuildOptions(output=output, workspace=workspace,
                                          **options))  # type: ignore[arg-type]


def site_config(root: Path, **analytics: object) -> Config:
    return parse_config({
        "site": {"title": "The Demo Workshop", "url": "https://notes.acme.test/"},
        "api": {"url": "https://cas.example.test", "workspace": "65f0c0ffee0123456789abcd"},
        "analytics": analytics or {"enabled": False},
    }, root)


def test_the_demo_builds_every_kind_of_file(tmp_path: Path, demo_workspace: Workspace) -> None:
    out = tmp_path / "_site"
    report = build(site_config(tmp_path), out, demo_workspace, demo=True)
    assert report.articles > 10 and report.html_pages > report.articles
    for name in ("index.html", "404.html", "feed.xml", "sitemap.xml", "robots.txt",
                 MANIFEST_NAME):
        assert (out / name).is_file(), name
    assert list((out / "static").glob("style.*.css"))
    # the demo's images are made the site's own (in-process), given content or not
    assert list((out / "media").glob("*-*.jpg")) and not (out / "media" / "demo").exists()
    assert report.written and not report.unchanged and not report.removed
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    assert len(manifest["files"]) == report.files
    assert str(tmp_path) not in (out / MANIFEST_NAME).read_text()


def test_every_page_names_the_favicon_and_a_local_theme_may_replace_it(
        tmp_path: Path, demo_workspace: Workspace) -> None:
    out = tmp_path / "_site"
    build(site_config(tmp_path), out, demo_workspace)
    [icon] = list((out / "static").glob("favicon.*.svg"))
    assert icon.read_text().startswith("<svg")
    pages = list(out.rglob("*.html"))
    assert pages and all(f'<link rel="icon" href="/static/{icon.name}" type="image/svg+xml">'
                         in page.read_text() for page in pages)
    theme = tmp_path / "themes" / "default"  # a local theme of the same name overrides files
    (theme / "templates").mkdir(parents=True)
    (theme / "static").mkdir()
    (theme / "static" / "favicon.svg").write_text('<svg id="mine"/>')
    build(site_config(tmp_path), out, demo_workspace)
    [mine] = list((out / "static").glob("favicon.*.svg"))
    assert mine.read_text() == '<svg id="mine"/>' and mine.name != icon.name
    assert f'href="/static/{mine.name}"' in (out / "index.html").read_text()


def test_every_feed_is_valid_and_dated_from_content(tmp_path: Path,
                                                    demo_workspace: Workspace) -> None:
    out = tmp_path / "_site"
    build(site_config(tmp_path), out, demo_workspace)
    feeds = sorted(out.rglob("feed.xml"))
    assert len(feeds) > 5  # the site's, and agents', clusters', tags'
    newest = max(a.updatedAt for a in demo_workspace.articles if a.status == "published"
                 and a.updatedAt is not None)
    for path in feeds:
        parsed = feedparser.parse(path.read_bytes())
        assert parsed.bozo == 0, (path, parsed.get("bozo_exception"))
        assert parsed.entries, path
        assert parsed.entries[0].content[0].value
    main_feed = feedparser.parse((out / "feed.xml").read_bytes())
    assert main_feed.feed.updated == newest.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert len(main_feed.entries) <= 20


def test_the_sitemap_lists_every_html_page_but_404_and_search(
        tmp_path: Path, demo_workspace: Workspace) -> None:
    out = tmp_path / "_site"
    build(site_config(tmp_path), out, demo_workspace)
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = {e.text for e in ET.parse(out / "sitemap.xml").findall("s:url/s:loc", ns)}
    pages = {p.relative_to(out).as_posix() for p in out.rglob("*.html")} - {"404.html"}
    searches = {p for p in pages if p.endswith("search/index.html")}  # (noindex pages)
    assert searches == {"search/index.html", "lang/de/search/index.html",
                        "lang/fr/search/index.html"}
    pages -= searches
    expected = {"https://notes.acme.test/" + p.removesuffix("index.html") for p in pages}
    assert locs == expected
    robots = (out / "robots.txt").read_text()
    assert "Sitemap: https://notes.acme.test/sitemap.xml" in robots


def test_every_sitemap_url_is_dated_by_its_content(tmp_path: Path,
                                                   demo_workspace: Workspace) -> None:
    """An article by its update, a list or index by the newest of what it lists, an own page
    by its front matter's `updated` (or `date`): one without either has no lastmod."""
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "about.md").write_text('+++\ntitle = "About"\nupdated = 2025-11-03\n+++\nUs.\n')
    (pages / "imprint.md").write_text("---\ntitle: Imprint\ndate: 2024-02-29T12:00:00Z\n---\n")
    (pages / "undated.md").write_text('+++\ntitle = "Undated"\n+++\nNo date.\n')
    out = tmp_path / "_site"
    build(site_config(tmp_path), out, demo_workspace)
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    dated = {e.findtext("s:loc", namespaces=ns): e.findtext("s:lastmod", namespaces=ns)
             for e in ET.parse(out / "sitemap.xml").findall("s:url", ns)}
    base = "https://notes.acme.test"
    assert dated.pop(base + "/about/") == "2025-11-03T00:00:00Z"
    assert dated.pop(base + "/imprint/") == "2024-02-29T12:00:00Z"
    assert dated.pop(base + "/undated/") is None
    assert [url for url, lastmod in dated.items() if lastmod is None] == []
    published = [a for a in demo_workspace.articles if a.status == "published"]
    newest = max(a.updatedAt or a.createdAt for a in published if a.updatedAt or a.createdAt)
    stamp = newest.strftime("%Y-%m-%dT%H:%M:%SZ")
    for index in ("/", "/topics/", "/tags/", "/authors/", "/agents/"):
        assert dated[base + index] == stamp, index


def test_same_content_gives_byte_identical_output_anywhere(tmp_path: Path,
                                                           demo_workspace: Workspace) -> None:
    one, two = tmp_path / "a" / "site", tmp_path / "b" / "deeper" / "elsewhere"
    one.mkdir(parents=True)
    two.mkdir(parents=True)
    build(site_config(one), one / "_site", demo_workspace)
    build(site_config(two), two / "out", demo_workspace)
    assert contents(one / "_site") == contents(two / "out")
    assert len(contents(two / "out")) > 100
    for root in (one, two):
        manifest = (root / ("_site" if root == one else "out") / MANIFEST_NAME).read_text()
        assert str(root) not in manifest and str(tmp_path) not in manifest


def _edit(workspace: Workspace, index: int, text: str) -> tuple[Workspace, str]:
    published = [i for i, a in enumerate(workspace.articles) if a.status == "published"
                 and a.slug]
    target = published[index]
    articles = list(workspace.articles)
    article = articles[target]
    articles[target] = article.model_copy(update={"content": (article.content or "") + text,
                                                  "blocks": None})
    return workspace.model_copy(update={"articles": articles}), str(article.slug)


def test_a_rebuild_after_one_changed_article_renders_few_pages_and_equals_a_fresh_build(
        tmp_path: Path, demo_workspace: Workspace) -> None:
    out = tmp_path / "_site"
    config = site_config(tmp_path)
    first = build(config, out, demo_workspace)
    assert first.rendered == first.html_pages
    before = snapshot(out)
    again = build(config, out, demo_workspace)
    assert again.written == [] and again.removed == [] and again.rendered == 0
    assert not again.output_changed and snapshot(out) == before

    changed, slug = _edit(demo_workspace, -1, "\n\nOne more paragraph, added later.\n")
    report = build(config, out, changed)
    assert f"{slug}/index.html" in report.written
    assert 0 < report.rendered < report.html_pages / 4, (report.rendered, report.html_pages)
    # The search index changed: Pagefind's files are named by their bytes.
    assert [path for path in report.removed if not path.startswith("pagefind/")] == []
    assert any(path.startswith("pagefind/") and "/fragment/" in path for path in report.written)
    after = snapshot(out)
    for path, value in before.items():
        if path not in report.written and path not in report.removed and \
                path != MANIFEST_NAME:
            assert after[path] == value, path  # kept where they were, not written again
    others = [p for p in after if p.endswith("/index.html") and p not in report.written]
    assert len(others) > 20
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    build(site_config(fresh), fresh / "_site", changed)
    assert contents(out) == contents(fresh / "_site")


def test_an_unpublished_article_disappears_and_files_dropped_into_the_output_go_git_too(
        tmp_path: Path, demo_workspace: Workspace) -> None:
    out = tmp_path / "_site"
    config = site_config(tmp_path)
    build(config, out, demo_workspace)
    (out / "CNAME").write_text("notes.acme.test\n")
    (out / ".nojekyll").write_text("")
    (out / ".git").mkdir()
    (out / ".git" / "HEAD").write_text("ref: refs/heads/gh-pages\n")
    victim = next(a for a in demo_workspace.articles if a.status == "published" and a.slug)
    articles = [a.model_copy(update={"status": "draft"}) if a.id == victim.id else a
                for a in demo_workspace.articles]
    report = build(config, out,
                       demo_workspace.model_copy(update={"articles": articles}))
    assert f"{victim.slug}/index.html" in report.removed
    assert not (out / str(victim.slug)).exists()
    assert victim.slug not in (out / "sitemap.xml").read_text()
    for stray in ("CNAME", ".nojekyll", ".git/HEAD"):  # (a site's own files: static/)
        assert not (out / stray).exists(), stray
        assert stray in report.removed
    assert not (out / ".git").exists()  # (a dot-folder the build did not write is a stray)
    assert ".git/HEAD" not in json.loads((out / MANIFEST_NAME).read_text())["files"]


def test_a_git_folder_planted_in_a_cached_output_is_removed_by_the_next_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A `.git/` (or any dot-folder) put into an output sitegen built — a restored CI cache —
    does not survive the next build, a no-change build too; a repository's own checkout is
    refused as an output before anything is removed."""
    monkeypatch.chdir(tmp_path)
    assert main(["build", "--demo", "-o", "out", "-q"]) == 0
    out = tmp_path / "out"
    for planted in (".git/HEAD", ".git/objects/ab/cdef", ".hidden/page.html"):
        (out / planted).parent.mkdir(parents=True, exist_ok=True)
        (out / planted).write_text("planted\n")
    assert main(["build", "--demo", "-o", "out", "-q", "--offline"]) == 0
    said = capsys.readouterr().err
    assert not (out / ".git").exists() and not (out / ".hidden").exists()
    assert (out / "index.html").is_file()
    # (out of the output, but never destroyed: it may be someone's repository)
    aside = list(tmp_path.glob(".out.git-set-aside-*"))
    assert len(aside) == 1 and (aside[0] / "objects" / "ab" / "cdef").read_text() == "planted\n"
    assert "held a .git folder the build did not write" in said and str(aside[0]) in said
    checkout = tmp_path / "gh-pages"
    subprocess.run(["git", "init", "-q", "-b", "gh-pages", str(checkout)], check=True)
    capsys.readouterr()
    assert main(["build", "--demo", "-o", "gh-pages", "-q", "--offline"]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and f"the output folder {checkout} holds .git" in error[0]
    assert "rsync -a --delete --exclude .git _site/ gh-pages/" in error[0]
    assert (checkout / ".git" / "HEAD").is_file() and not (checkout / "index.html").exists()


def test_a_failing_render_keeps_the_previous_output(tmp_path: Path, demo_workspace: Workspace,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "_site"
    config = site_config(tmp_path)
    build(config, out, demo_workspace)
    before = snapshot(out)
    from sitegen.render.pages import Renderer

    def broken(self: Renderer, page: object) -> tuple[bytes, frozenset[str]]:
        raise BuildError("template exploded")

    monkeypatch.setattr(Renderer, "render_recorded", broken)
    changed, _ = _edit(demo_workspace, 0, "\nchanged\n")
    with pytest.raises(BuildError, match="exploded"):
        build(config, out, changed)
    assert snapshot(out) == before
    assert not list(tmp_path.glob("._site.sitegen-staging"))
    monkeypatch.undo()  # the next build renders what the failed one did not commit
    report = build(config, out, changed)
    assert report.rendered > 0
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    build(site_config(fresh), fresh / "_site", changed)
    assert contents(out) == contents(fresh / "_site")


def test_strict_fails_before_the_commit(tmp_path: Path, demo_workspace: Workspace) -> None:
    out = tmp_path / "_site"
    config = site_config(tmp_path, enabled=True, key_env="SITEGEN_TEST_UNSET_KEY")
    build(site_config(tmp_path), out, demo_workspace)
    before = snapshot(out)
    with pytest.raises(StrictError, match="warning"):
        build(config, out, demo_workspace, strict=True)
    assert snapshot(out) == before


def test_the_output_may_not_hold_the_site_itself(tmp_path: Path,
                                                 demo_workspace: Workspace) -> None:
    with pytest.raises(ConfigError, match="dedicated"):
        build(site_config(tmp_path), tmp_path, demo_workspace)
    with pytest.raises(ConfigError, match="dedicated"):
        build(site_config(tmp_path / "sub"), tmp_path, demo_workspace)


def test_analytics_pages_load_the_hashed_beacon(tmp_path: Path, demo_workspace: Workspace,
                                                monkeypatch: pytest.MonkeyPatch,
                                                caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("SITEGEN_ANALYTICS_KEY", "public-beacon-key")
    monkeypatch.setenv("SITEGEN_API_KEY", "secret-api-key")
    config = site_config(tmp_path, enabled=True, site_slug="acme-notes")
    out = tmp_path / "_site"
    build(config, out, demo_workspace)
    [script] = list((out / "static").glob("sitegen-beacon.*.js"))
    home = (out / "index.html").read_text()
    assert f'src="/static/{script.name}"' in home
    assert ('data-endpoint="https://cas.example.test/api/v2/workspaces/'
            '65f0c0ffee0123456789abcd/analytics"') in home
    assert 'data-page-type="workspace"' in home
    for path in out.rglob("*"):
        if path.is_file():
            assert b"secret-api-key" not in path.read_bytes(), path


def test_a_beacon_key_equal_to_the_api_key_is_a_warning(
        tmp_path: Path, demo_workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SITEGEN_ANALYTICS_KEY", "same-key")
    monkeypatch.setenv("SITEGEN_API_KEY", "same-key")
    config = site_config(tmp_path, enabled=True)
    with pytest.raises(StrictError):
        build(config, tmp_path / "_site", demo_workspace, strict=True)
    assert not (tmp_path / "_site").exists()


def test_the_cli_builds_the_demo_and_writes_a_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["build", "--demo", "-o", "out", "--report", "report.json"]) == 0
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.startswith("built ") and " written, " in line and "API: " in line
    report = json.loads((tmp_path / "report.json").read_text())
    assert set(report["pages"]) >= {"written", "unchanged", "removed"}
    assert report["pages"]["written"] > 100
    assert report["api"]["version"] == "v2" and report["api"]["total"] > 0
    assert set(report["timings"]) >= {"fetch", "model", "render", "commit"}
    # a second run is a no-change build
    assert main(["build", "--demo", "-o", "out", "--offline", "--report", "report.json"]) == 0
    again = json.loads((tmp_path / "report.json").read_text())
    assert again["pages"]["written"] == 0 and again["api"]["total"] == 0


def test_offline_without_a_cache_fails_with_exit_1(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["build", "--demo", "--offline", "-o", "out"]) == 1
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.startswith("error: the content store ") and "without --offline" in line
    assert not (tmp_path / "out").exists()


def test_editing_a_theme_template_an_override_extends_renders_its_pages_again(
        tmp_path: Path, demo_workspace: Workspace) -> None:
    """`templates/base.html` extends `theme/base.html`: an edit there reaches every page."""
    from sitegen.render.themes import builtin_themes_root

    theme = tmp_path / "themes" / "mine" / "templates"
    theme.mkdir(parents=True)
    base = (builtin_themes_root() / "default" / "templates" / "base.html").read_text()
    (theme / "base.html").write_text(base)
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "base.html").write_text('{% extends "theme/base.html" %}')

    def configured(root: Path) -> Config:
        return parse_config({
            "site": {"title": "T", "url": "https://notes.acme.test/", "theme": "mine"},
            "api": {"url": "https://cas.example.test", "workspace": "65f0c0ffee0123456789abcd"},
            "analytics": {"enabled": False}}, root)

    out = tmp_path / "_site"
    build(configured(tmp_path), out, demo_workspace)
    (theme / "base.html").write_text(base.replace("<body ", '<body data-edited="yes" ', 1))
    report = build(configured(tmp_path), out, demo_workspace)
    assert report.rendered == report.html_pages
    assert 'data-edited="yes"' in (out / "index.html").read_text()
    fresh = tmp_path / "fresh"
    (fresh / "themes").mkdir(parents=True)  # (copies: a link out of the site is refused)
    shutil.copytree(theme.parent, fresh / "themes" / "mine")
    shutil.copytree(tmp_path / "templates", fresh / "templates")
    build(configured(fresh), fresh / "_site", demo_workspace)
    assert contents(out) == contents(fresh / "_site")


def test_force_renders_every_page_with_no_request_offline(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config, out = demo_config(None, tmp_path), tmp_path / "out"
    first = run_build(config, BuildOptions(output=out, demo=True))
    assert first.api["total"] > 0 and first.rendered == first.html_pages
    before = snapshot(out)
    assert run_build(config, BuildOptions(output=out, demo=True, offline=True)).rendered == 0
    requests: list[httpx.Request] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(500)

    report = run_build(config, BuildOptions(output=out, demo=True, offline=True, force=True,
                                            transport=httpx.MockTransport(refuse)))
    assert report.rendered == report.html_pages > 100
    assert requests == [] and report.api["total"] == 0
    assert report.written == [] and snapshot(out) == before  # the same bytes: files kept
    # the command line's --force, and its report
    assert main(["build", "--demo", "-o", "out", "-q", "--offline", "--force",
                 "--report", "report.json"]) == 0
    pages = json.loads((tmp_path / "report.json").read_text())["pages"]
    assert pages["rendered"] == pages["html"] == report.html_pages


def test_each_read_is_fingerprinted_once_whatever_the_workers_share(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Render workers share most reads (the site, the templates, the articles on lists):
    each read's fingerprint is taken once per build, not once per worker that made it."""
    from sitegen.render import pool
    from sitegen.render.fingerprints import Fingerprints

    taken = tmp_path / "taken.txt"  # (appended to by the building process and its workers)
    real = Fingerprints._compute

    def compute(self: Fingerprints, read: str) -> bytes:
        with taken.open("a") as file:
            file.write(read.replace("\n", " ") + "\n")
        return real(self, read)

    monkeypatch.setattr(Fingerprints, "_compute", compute)
    monkeypatch.setattr(pool, "PARALLEL_THRESHOLD", 2)  # (a pool, whatever the site's size)
    monkeypatch.setattr(pool, "CHUNK_SIZE", 4)  # (both workers take many chunks)
    monkeypatch.chdir(tmp_path)
    config = demo_config(None, tmp_path)
    report = run_build(config, BuildOptions(output=tmp_path / "out", demo=True, force=True))
    assert report.rendered > 100
    reads = taken.read_text().splitlines()
    assert "site" in reads and len(reads) == len(set(reads))


def test_force_renders_the_article_bodies_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SPEC: `--force` rebuilds derived data (the rendered bodies kept in the store)."""
    from sitegen.render.markdown import MarkdownRenderer

    config, out = demo_config(None, tmp_path), tmp_path / "out"
    run_build(config, BuildOptions(output=out, demo=True))
    renders: list[str] = []
    original = MarkdownRenderer.render

    def counted(self: MarkdownRenderer, *args: object, **kwargs: object) -> object:
        renders.append("body")
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(MarkdownRenderer, "render", counted)
    run_build(config, BuildOptions(output=out, demo=True, offline=True))
    assert renders == []  # the stored bodies
    run_build(config, BuildOptions(output=out, demo=True, offline=True, force=True))
    assert renders  # rendered again, not taken from the store


def test_a_deleted_store_builds_again_from_the_service_with_the_same_output(
        tmp_path: Path) -> None:
    config, out = demo_config(None, tmp_path), tmp_path / "out"
    first = run_build(config, BuildOptions(output=out, demo=True))
    before = contents(out)
    store = config.cache_path / STORE_FILE
    assert store.is_file()
    store.unlink()
    again = run_build(config, BuildOptions(output=out, demo=True))
    assert again.api["total"] == first.api["total"] > 0  # everything fetched again
    assert again.rendered == again.html_pages  # no page's reads kept: every one rendered
    assert again.written == [] and contents(out) == before
    assert store.is_file()


@pytest.mark.parametrize("online", [True, False])
def test_a_truncated_store_is_fetched_again_online_and_named_offline(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        online: bool) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["build", "--demo", "-o", "out", "-q", "--report", "first.json"]) == 0
    first = json.loads((tmp_path / "first.json").read_text())
    store = tmp_path / ".sitegen" / "demo" / STORE_FILE
    data = store.read_bytes()
    store.write_bytes(data[:len(data) // 2])
    before = snapshot(tmp_path / "out")
    capsys.readouterr()
    if not online:
        assert main(["build", "--demo", "-o", "out", "--offline"]) == 1
        lines = capsys.readouterr().err.strip().splitlines()
        assert [line for line in lines if line.startswith("error:")] == lines[-1:]
        assert "--refresh" in lines[-1] and "Traceback" not in "\n".join(lines)
        assert snapshot(tmp_path / "out") == before
    # online (and the next online run after the offline failure): a full fetch, the same site
    assert main(["build", "--demo", "-o", "out", "-q", "--report", "again.json"]) == 0
    again = json.loads((tmp_path / "again.json").read_text())
    assert again["api"]["total"] == first["api"]["total"] > 0
    assert again["api"]["calls"] == first["api"]["calls"]
    assert contents(tmp_path / "out") == {
        path: digest for path, (digest, _) in before.items() if path != MANIFEST_NAME}


KILL_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from sitegen.cli import main
    from sitegen.emit.writer import OutputWriter

    original = OutputWriter.adopt  # (each rendered page is staged, then adopted)
    def slow(self, path, staged):
        original(self, path, staged)
        if path.endswith("index.html"):
            print("wrote", path, flush=True)
            time.sleep(0.05)
    if sys.argv[1] == "slow":
        OutputWriter.adopt = slow
    sys.exit(main(["build", "--demo", "-o", "out", "-q"] + sys.argv[2:]))
    """
)


def test_a_build_killed_mid_write_leaves_the_output_as_it_was(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = subprocess.run([sys.executable, "-c", KILL_SCRIPT, "fast"], cwd=tmp_path, env=env,
                         capture_output=True, timeout=300)
    assert run.returncode == 0, run.stderr
    out = tmp_path / "out"
    (out / "stray.js").write_text("alert(1)\n")
    # change the content so the killed build has something to write
    (tmp_path / "site.toml").write_text(textwrap.dedent("""
        [site]
        title = "A new title for every page"
        url = "http://localhost:8000/"
        [api]
        url = "https://cas.example.test"
        workspace = "65f0c0ffee0123456789abcd"
    """))
    before = snapshot(out)
    with subprocess.Popen([sys.executable, "-c", KILL_SCRIPT, "slow"], cwd=tmp_path, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as victim:
        assert victim.stdout is not None
        for _ in range(3):
            assert victim.stdout.readline().startswith("wrote ")
        assert (tmp_path / ".out.sitegen-staging").is_dir()
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=30)
    assert victim.returncode == -signal.SIGKILL
    assert snapshot(out) == before
    run = subprocess.run([sys.executable, "-c", KILL_SCRIPT, "fast"], cwd=tmp_path, env=env,
                         capture_output=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert not (tmp_path / ".out.sitegen-staging").exists()
    assert "A new title for every page" in (out / "index.html").read_text()
    assert not (out / "stray.js").exists()  # kept by the killed build, gone with the next


def test_the_model_is_built_with_the_collector_off_and_it_is_on_again_after(
        tmp_path: Path, demo_workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """The model stage turns the cyclic collector off (its collections walked the model and
    the whole workspace again and again) and back on after: a build, which the preview runs
    again and again in one process, leaves it as it was."""
    import gc

    import sitegen.model

    build_site = sitegen.model.build_site
    collecting: list[bool] = []

    def watched(*args: object, **kwargs: object) -> object:
        collecting.append(gc.isenabled())
        return build_site(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sitegen.model, "build_site", watched)
    assert gc.isenabled()
    report = build(demo_config(None, tmp_path), tmp_path / "out", demo_workspace)
    assert report.rendered > 0
    assert collecting == [False]
    assert gc.isenabled()
