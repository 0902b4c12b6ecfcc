"""`sitegen build` end to end: the demo through the emulator, incremental rebuilds, failures."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import feedparser
import pytest

from sitegen.build import run_build
from sitegen.cli import main
from sitegen.config import Config, demo_config, parse_config
from sitegen.emit.manifest import MANIFEST_NAME
from sitegen.errors import BuildError, ConfigError, StrictError
from sitegen.fetch.sync import demo_transport, sync
from sitegen.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]


def snapshot(root: Path) -> dict[str, tuple[str, int]]:
    """Every file under *root*: (sha256, mtime_ns)."""
    return {
        path.relative_to(root).as_posix(): (
            hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
        for path in sorted(root.rglob("*")) if path.is_file()
    }


def contents(root: Path) -> dict[str, str]:
    return {path: digest for path, (digest, _) in snapshot(root).items()}


@pytest.fixture(scope="module")
def demo_workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    root = tmp_path_factory.mktemp("fetch")
    config = demo_config(None, root)
    return sync(config, key="demo", transport=demo_transport()).workspace


def site_config(root: Path, **analytics: object) -> Config:
    return parse_config({
        "site": {"title": "The Demo Workshop", "url": "https://notes.acme.test/"},
        "api": {"url": "https://cas.example.test", "workspace": "65f0c0ffee0123456789abcd"},
        "analytics": analytics or {"enabled": False},
    }, root)


def test_the_demo_builds_every_kind_of_file(tmp_path: Path, demo_workspace: Workspace) -> None:
    out = tmp_path / "_site"
    report = run_build(site_config(tmp_path), output=out, workspace=demo_workspace, demo=True)
    assert report.articles > 10 and report.html_pages > report.articles
    for name in ("index.html", "404.html", "feed.xml", "sitemap.xml", "robots.txt",
                 MANIFEST_NAME):
        assert (out / name).is_file(), name
    assert list((out / "static").glob("style.*.css"))
    assert list((out / "media" / "demo").glob("*.svg"))
    assert report.written and not report.unchanged and not report.removed
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    assert len(manifest["files"]) == report.files
    assert str(tmp_path) not in (out / MANIFEST_NAME).read_text()


def test_every_page_names_the_favicon_and_a_local_theme_may_replace_it(
        tmp_path: Path, demo_workspace: Workspace) -> None:
    out = tmp_path / "_site"
    run_build(site_config(tmp_path), output=out, workspace=demo_workspace)
    [icon] = list((out / "static").glob("favicon.*.svg"))
    assert icon.read_text().startswith("<svg")
    pages = list(out.rglob("*.html"))
    assert pages and all(f'<link rel="icon" href="/static/{icon.name}" type="image/svg+xml">'
                         in page.read_text() for page in pages)
    theme = tmp_path / "themes" / "default"  # a local theme of the same name overrides files
    (theme / "templates").mkdir(parents=True)
    (theme / "static").mkdir()
    (theme / "static" / "favicon.svg").write_text('<svg id="mine"/>')
    run_build(site_config(tmp_path), output=out, workspace=demo_workspace)
    [mine] = list((out / "static").glob("favicon.*.svg"))
    assert mine.read_text() == '<svg id="mine"/>' and mine.name != icon.name
    assert f'href="/static/{mine.name}"' in (out / "index.html").read_text()


def test_every_feed_is_valid_and_dated_from_content(tmp_path: Path,
                                                    demo_workspace: Workspace) -> None:
    out = tmp_path / "_site"
    run_build(site_config(tmp_path), output=out, workspace=demo_workspace)
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


def test_the_sitemap_lists_every_html_page_but_404(tmp_path: Path,
                                                   demo_workspace: Workspace) -> None:
    out = tmp_path / "_site"
    run_build(site_config(tmp_path), output=out, workspace=demo_workspace)
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = {e.text for e in ET.parse(out / "sitemap.xml").findall("s:url/s:loc", ns)}
    pages = {p.relative_to(out).as_posix() for p in out.rglob("*.html")} - {"404.html"}
    expected = {"https://notes.acme.test/" + p.removesuffix("index.html") for p in pages}
    assert locs == expected
    robots = (out / "robots.txt").read_text()
    assert "Sitemap: https://notes.acme.test/sitemap.xml" in robots


def test_same_content_gives_byte_identical_output_anywhere(tmp_path: Path,
                                                           demo_workspace: Workspace) -> None:
    one, two = tmp_path / "a" / "site", tmp_path / "b" / "deeper" / "elsewhere"
    one.mkdir(parents=True)
    two.mkdir(parents=True)
    run_build(site_config(one), output=one / "_site", workspace=demo_workspace)
    run_build(site_config(two), output=two / "out", workspace=demo_workspace)
    assert contents(one / "_site") == contents(two / "out")


def _edit(workspace: Workspace, index: int, text: str) -> tuple[Workspace, str]:
    published = [i for i, a in enumerate(workspace.articles) if a.status == "published"
                 and a.slug]
    target = published[index]
    articles = list(workspace.articles)
    article = articles[target]
    articles[target] = article.model_copy(update={"content": (article.content or "") + text,
                                                  "blocks": None})
    return workspace.model_copy(update={"articles": articles}), str(article.slug)


def test_one_changed_article_rewrites_only_its_dependents(tmp_path: Path,
                                                          demo_workspace: Workspace) -> None:
    out = tmp_path / "_site"
    config = site_config(tmp_path)
    run_build(config, output=out, workspace=demo_workspace)
    before = snapshot(out)
    again = run_build(config, output=out, workspace=demo_workspace)
    assert again.written == [] and again.removed == [] and again.rendered == 0
    assert not again.output_changed and snapshot(out) == before

    changed, slug = _edit(demo_workspace, -1, "\n\nOne more paragraph, added later.\n")
    report = run_build(config, output=out, workspace=changed)
    assert f"{slug}/index.html" in report.written
    assert report.rendered < len(report.written) + 10
    assert len(report.written) < report.html_pages / 4
    assert report.removed == []
    after = snapshot(out)
    for path, value in before.items():
        if path not in report.written and path != MANIFEST_NAME:
            assert after[path] == value, path
    others = [p for p in after if p.endswith("/index.html") and p not in report.written]
    assert len(others) > 20


def test_an_unpublished_article_disappears_and_user_files_stay(
        tmp_path: Path, demo_workspace: Workspace) -> None:
    out = tmp_path / "_site"
    config = site_config(tmp_path)
    run_build(config, output=out, workspace=demo_workspace)
    (out / "CNAME").write_text("notes.acme.test\n")
    (out / ".nojekyll").write_text("")
    (out / ".git").mkdir()
    (out / ".git" / "HEAD").write_text("ref: refs/heads/gh-pages\n")
    victim = next(a for a in demo_workspace.articles if a.status == "published" and a.slug)
    articles = [a.model_copy(update={"status": "draft"}) if a.id == victim.id else a
                for a in demo_workspace.articles]
    report = run_build(config, output=out,
                       workspace=demo_workspace.model_copy(update={"articles": articles}))
    assert f"{victim.slug}/index.html" in report.removed
    assert not (out / str(victim.slug)).exists()
    assert victim.slug not in (out / "sitemap.xml").read_text()
    assert (out / "CNAME").read_text() == "notes.acme.test\n"
    assert (out / ".nojekyll").exists() and (out / ".git" / "HEAD").exists()


def test_a_failing_render_keeps_the_previous_output(tmp_path: Path, demo_workspace: Workspace,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "_site"
    config = site_config(tmp_path)
    run_build(config, output=out, workspace=demo_workspace)
    before = snapshot(out)
    from sitegen.render.pages import Renderer

    def broken(self: Renderer, page: object) -> bytes:
        raise BuildError("template exploded")

    monkeypatch.setattr(Renderer, "render", broken)
    changed, _ = _edit(demo_workspace, 0, "\nchanged\n")
    with pytest.raises(BuildError, match="exploded"):
        run_build(config, output=out, workspace=changed)
    assert snapshot(out) == before
    assert not list(tmp_path.glob("._site.sitegen-staging"))


def test_strict_fails_before_the_commit(tmp_path: Path, demo_workspace: Workspace) -> None:
    out = tmp_path / "_site"
    config = site_config(tmp_path, enabled=True, key_env="SITEGEN_TEST_UNSET_KEY")
    run_build(site_config(tmp_path), output=out, workspace=demo_workspace)
    before = snapshot(out)
    with pytest.raises(StrictError, match="warning"):
        run_build(config, output=out, workspace=demo_workspace, strict=True)
    assert snapshot(out) == before


def test_the_output_may_not_hold_the_site_itself(tmp_path: Path,
                                                 demo_workspace: Workspace) -> None:
    with pytest.raises(ConfigError, match="dedicated"):
        run_build(site_config(tmp_path), output=tmp_path, workspace=demo_workspace)
    with pytest.raises(ConfigError, match="dedicated"):
        run_build(site_config(tmp_path / "sub"), output=tmp_path, workspace=demo_workspace)


def test_analytics_pages_load_the_hashed_beacon(tmp_path: Path, demo_workspace: Workspace,
                                                monkeypatch: pytest.MonkeyPatch,
                                                caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("SITEGEN_ANALYTICS_KEY", "public-beacon-key")
    monkeypatch.setenv("SITEGEN_API_KEY", "secret-api-key")
    config = site_config(tmp_path, enabled=True, site_slug="acme-notes")
    out = tmp_path / "_site"
    run_build(config, output=out, workspace=demo_workspace)
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
        run_build(config, output=tmp_path / "_site", workspace=demo_workspace, strict=True)
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


def test_a_surveyed_rebuild_gives_what_a_walked_one_gives(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from sitegen.emit import survey as survey_module
    from sitegen.emit import writer as writer_module

    monkeypatch.setattr(survey_module, "WAIT_SECONDS", 30.0)  # however slow this machine is
    monkeypatch.chdir(tmp_path)
    for folder in ("surveyed", "walked"):
        assert main(["build", "--demo", "-o", folder, "-q"]) == 0
        (tmp_path / folder / "404.html").unlink()
        assert main(["build", "--demo", "-o", folder, "-q", "--offline"]) == 0  # a spare now
        assert (tmp_path / f".{folder}.sitegen-spare").is_dir()
    for folder, least in (("surveyed", 0), ("walked", 10**9)):
        monkeypatch.setattr(writer_module, "SURVEY_MIN_MANIFEST", least)
        (tmp_path / folder / "404.html").unlink()  # sitegen's: written again
        (tmp_path / folder / "tags" / "CNAME").write_text("mine\n")  # the user's: kept
        capsys.readouterr()
        assert main(["build", "--demo", "-o", folder, "--offline", "-v"]) == 0
        told = capsys.readouterr().err
        assert ("took the output survey" in told) == (folder == "surveyed")
        assert "1 written" in told.splitlines()[-1]
    assert contents(tmp_path / "surveyed") == contents(tmp_path / "walked")
    assert (tmp_path / "surveyed" / "tags" / "CNAME").read_text() == "mine\n"


@pytest.mark.parametrize("offline", [True, False])
def test_a_rebuild_starts_its_survey_before_its_content_and_model(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, offline: bool) -> None:
    """The survey's walks overlap the config (offline) or the sync (online): a model from
    the memo is shorter than they are."""
    import sitegen.build as build_module
    import sitegen.config as config_module
    from sitegen.emit import survey as survey_module
    from sitegen.emit import writer as writer_module

    monkeypatch.chdir(tmp_path)
    assert main(["build", "--demo", "-o", "out", "-q"]) == 0
    assert main(["build", "--demo", "-o", "out", "-q", "--offline"]) == 0
    monkeypatch.setattr(writer_module, "SURVEY_MIN_MANIFEST", 0)
    events: list[str] = []

    def spy(module: object, name: str, event: str) -> None:
        real = getattr(module, name)

        def called(*args: object, **kwargs: object) -> object:
            events.append(event)
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, called)

    spy(survey_module.SurveyAhead, "start", "survey")
    spy(config_module, "resolve_config", "config")
    spy(build_module, "_fetch", "content")
    spy(build_module, "_resume", "content")
    (tmp_path / "out" / "404.html").unlink()  # something to do
    assert main(["build", "--demo", "-o", "out", "-q", *(["--offline"] if offline else [])]) == 0
    assert events[0] == "survey" if offline else events.index("survey") < events.index("content")
    assert events.count("survey") == 1


def test_offline_without_a_cache_fails_with_exit_1(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["build", "--demo", "--offline", "-o", "out"]) == 1
    assert "cache" in capsys.readouterr().err.strip().splitlines()[-1]
    assert not (tmp_path / "out").exists()


KILL_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from sitegen.cli import main
    from sitegen.emit.writer import OutputWriter

    original = OutputWriter.write_hashed
    recorded = OutputWriter.record_staged
    def pause(path):
        if path.endswith("index.html"):
            print("wrote", path, flush=True)
            time.sleep(0.05)
    def slow(self, path, data, digest, input_hash=None):
        original(self, path, data, digest, input_hash)
        pause(path)
    def slow_staged(self, path, digest, input_hash=None):
        recorded(self, path, digest, input_hash)
        pause(path)
    if sys.argv[1] == "slow":  # pages come through either (workers may stage them)
        OutputWriter.write_hashed = slow
        OutputWriter.record_staged = slow_staged
    sys.exit(main(["build", "--demo", "-o", "out", "-q"] + sys.argv[2:]))
    """
)


def test_a_build_killed_mid_write_leaves_the_output_as_it_was(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = subprocess.run([sys.executable, "-c", KILL_SCRIPT, "fast"], cwd=tmp_path, env=env,
                         capture_output=True, timeout=300)
    assert run.returncode == 0, run.stderr
    out = tmp_path / "out"
    (out / "CNAME").write_text("mine\n")
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
    assert (out / "CNAME").read_text() == "mine\n"
