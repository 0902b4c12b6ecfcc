"""The no-change stamp: every input invalidates it, so does a tampered output; online builds
check it once their sync is done."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sitegen.cli import main
from sitegen.config import ApiSection, demo_config, parse_config
from sitegen.emit import stamp as stamp_module
from sitegen.fetch.cache import CACHE_FILE, CHANGES_FILE, ContentCache
from sitegen.fetch.sync import demo_transport, sync
from sitegen.workspace import Workspace

SITE_TOML = """\
[site]
title = "Stamped"
url = "https://stamped.example.test/"

[api]
url = "https://cas.example.test"
workspace = "65f0c0ffee0123456789abcd"

[analytics]
enabled = {analytics}
key_env = "SITEGEN_STAMP_TEST_KEY"
"""


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    root = tmp_path_factory.mktemp("fetch")
    return sync(demo_config(None, root), key="demo", transport=demo_transport()).workspace


@pytest.fixture
def site(tmp_path: Path, workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A site folder with site.toml and a warm content cache; the cwd is that folder."""
    monkeypatch.chdir(tmp_path)
    # sitegen's own files are part of the key; other people editing this tree while the
    # tests run must not flip a result (test_sitegen_code_changes_... covers the package).
    (tmp_path / "package").mkdir()
    monkeypatch.setattr(stamp_module, "PACKAGE_DIR", tmp_path / "package")
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    monkeypatch.delenv("SITEGEN_STAMP_TEST_KEY", raising=False)
    (tmp_path / "site.toml").write_text(SITE_TOML.format(analytics="false"))
    config = parse_config({"site": {"title": "x", "url": "https://x.test/"},
                           "api": {"url": "https://cas.example.test",
                                   "workspace": "65f0c0ffee0123456789abcd"}}, tmp_path)
    assert ContentCache(config.cache_path, config.api.base_url,
                        config.api.workspace).save(workspace)
    return tmp_path


def build(site: Path, *extra: str) -> dict[str, object]:
    """One `sitegen build --offline` through the CLI; its report."""
    status = main(["build", "-q", "--offline", "--report", str(site / "report.json"), *extra])
    assert status == 0
    report = json.loads((site / "report.json").read_text())
    assert isinstance(report, dict)
    return report


def stamped(report: dict[str, object]) -> bool:
    """True when the stamp answered: it was checked, and no site model was built."""
    timings = report["timings"]
    assert isinstance(timings, dict)
    return "stamp" in timings and "model" not in timings


def tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_default_cache_folder_matches_the_config() -> None:
    assert ApiSection.model_fields["cache_dir"].default == stamp_module.DEFAULT_CACHE_DIR
    assert CACHE_FILE == stamp_module.CONTENT_FILE
    assert CHANGES_FILE == stamp_module.CHANGES_FILE


def test_a_second_offline_build_is_answered_by_the_stamp(site: Path) -> None:
    first = build(site)
    assert not stamped(first)
    before = tree(site / "_site")
    second = build(site)
    assert stamped(second)
    assert tree(site / "_site") == before
    for key in ("articles", "api", "from_cache", "warnings"):
        assert second[key] == first[key], key
    pages, first_pages = second["pages"], first["pages"]
    assert isinstance(pages, dict) and isinstance(first_pages, dict)
    assert pages["written"] == 0 and pages["unchanged"] == first_pages["written"]
    assert pages["html"] == first_pages["html"]


def _rewrite_content(site: Path) -> None:
    path = site / ".sitegen" / CACHE_FILE
    data = json.loads(path.read_text())
    for article in data["workspace"]["articles"]:
        if article.get("status") == "published":
            article["title"] = (article.get("title") or "") + " (revised)"
            break
    path.write_text(json.dumps(data))


def _write_changes(site: Path, suffix: str = " (changed)") -> None:
    """A changes file over the cache's base, as a sync that edited one article writes it."""
    base = json.loads((site / ".sitegen" / CACHE_FILE).read_text())
    article = next(a for a in base["workspace"]["articles"] if a.get("status") == "published")
    article["title"] = (article.get("title") or "") + suffix
    changes = {**base, "base": base.pop("generation"), "removed": [],
               "workspace": {**base["workspace"], "articles": [article]}}
    (site / ".sitegen" / CHANGES_FILE).write_text(json.dumps(changes))


def _touch_content(site: Path) -> None:
    path = site / ".sitegen" / CACHE_FILE
    path.write_bytes(path.read_bytes())


CHANGES: dict[str, Callable[[Path, pytest.MonkeyPatch], None]] = {
    "site.toml": lambda site, _: (site / "site.toml").write_text(
        (site / "site.toml").read_text().replace('"Stamped"', '"Restamped"')),
    "content cache": lambda site, _: _rewrite_content(site),
    "content changes file": lambda site, _: _write_changes(site),
    "site template": lambda site, _: (site / "templates").mkdir() or (
        site / "templates" / "404.html").write_text(
        '{% extends "default/404.html" %}{% block title %}Gone{% endblock %}'),
    "local theme": lambda site, _: (site / "themes" / "default" / "static").mkdir(parents=True)
    or (site / "themes" / "default" / "static" / "extra.css").write_text("p{}"),
    "theme folder": lambda site, _: (site / "themes" / "default" / "templates").mkdir(
        parents=True),
    "SOURCE_DATE_EPOCH": lambda _, mp: mp.setenv("SOURCE_DATE_EPOCH", "1700000000"),
    "analytics key": lambda _, mp: mp.setenv("SITEGEN_STAMP_TEST_KEY", "beacon-key"),
    "tampered output": lambda site, _: (site / "_site" / "404.html").write_text("defaced"),
    "deleted output": lambda site, _: (site / "_site" / "robots.txt").unlink(),
    "deleted manifest": lambda site, _: (site / "_site" / ".sitegen-manifest.json").unlink(),
    "killed build": lambda site, _: (site / "._site.sitegen-staging").mkdir(),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_every_input_invalidates_the_stamp(site: Path, monkeypatch: pytest.MonkeyPatch,
                                           change: str) -> None:
    build(site)
    assert stamped(build(site))
    CHANGES[change](site, monkeypatch)
    assert not stamped(build(site))
    assert stamped(build(site))  # the rebuild stamps the new state


def test_the_stamped_tree_is_what_a_full_build_gives(site: Path) -> None:
    build(site)
    (site / "_site" / "404.html").write_text("defaced")
    (site / "_site" / "index.html").unlink()
    assert not stamped(build(site))
    repaired = tree(site / "_site")
    assert (site / "_site" / "404.html").read_text() != "defaced"
    build(site, "-o", "fresh")
    assert tree(site / "fresh") == repaired


def test_a_changes_file_rewritten_or_removed_invalidates_the_stamp(site: Path) -> None:
    build(site)
    _write_changes(site, " (first)")
    assert not stamped(build(site))
    assert _published(site, "(first)")
    assert stamped(build(site))
    _write_changes(site, " (second)")
    assert not stamped(build(site))
    assert _published(site, "(second)")
    (site / ".sitegen" / CHANGES_FILE).unlink()
    assert not stamped(build(site))
    assert not _published(site, "(second)")
    assert stamped(build(site))


def _published(site: Path, text: str) -> bool:
    return any(text in page.read_text() for page in (site / "_site").rglob("*.html"))


def test_the_same_bytes_rewritten_keep_the_stamp(site: Path) -> None:
    build(site)
    _touch_content(site)
    assert stamped(build(site))


def test_another_output_folder_has_its_own_stamp(site: Path) -> None:
    build(site)
    assert not stamped(build(site, "-o", "other"))
    assert stamped(build(site, "-o", "other"))
    assert stamped(build(site))


def test_the_working_folder_on_sys_path_does_not_break_the_stamp(
        site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `python -m sitegen` run in the site folder puts that folder on sys.path; the output's
    # siblings (staging, trash, lock) change its mtime at every committed build.
    monkeypatch.syspath_prepend(str(site))
    build(site)
    (site / "._site.sitegen-trash.1.2").mkdir()
    (site / "._site.sitegen-trash.1.2").rmdir()
    assert stamped(build(site))


def test_sitegen_code_changes_invalidate_the_stamp(site: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    package = stamp_module.PACKAGE_DIR
    (package / "module.py").write_text("x = 1\n")
    build(site)
    assert stamped(build(site))
    (package / "module.py").write_text("x = 22\n")
    assert not stamped(build(site))


def test_strict_gets_the_same_answer_from_the_stamp(
        site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (site / "site.toml").write_text(SITE_TOML.format(analytics="true"))
    first = build(site)
    warned = capsys.readouterr().err
    assert "SITEGEN_STAMP_TEST_KEY is not set" in warned
    report = build(site)
    assert stamped(report) and report["warnings"] == first["warnings"]
    assert capsys.readouterr().err == warned
    assert main(["build", "-q", "--offline", "--strict"]) == 1
    err = capsys.readouterr().err
    assert "SITEGEN_STAMP_TEST_KEY is not set" in err and "--strict" in err


def test_refresh_and_keyless_online_builds_never_reach_the_stamp(
        site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build(site)
    calls: list[str] = []
    real = stamp_module.check_stamp

    def spy(key: stamp_module.StampKey) -> stamp_module.StampedBuild | None:
        calls.append("checked")
        return real(key)

    monkeypatch.setattr(stamp_module, "check_stamp", spy)
    assert stamped(build(site))
    assert calls == ["checked"]
    monkeypatch.delenv("SITEGEN_API_KEY", raising=False)
    assert main(["build", "-q"]) == 2  # online: needs the key, fails before any stamp
    assert main(["build", "-q", "--refresh"]) == 2
    assert calls == ["checked"]


def _demo_build(root: Path, *extra: str) -> dict[str, Any]:
    status = main(["build", "-q", "--demo", "--report", str(root / "report.json"), *extra])
    assert status == 0
    report: dict[str, Any] = json.loads((root / "report.json").read_text())
    return report


def test_an_online_build_whose_sync_brings_nothing_new_is_answered_by_the_stamp(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "package").mkdir()
    monkeypatch.setattr(stamp_module, "PACKAGE_DIR", tmp_path / "package")
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    first = _demo_build(tmp_path)  # online: syncs from the bundled emulator
    warned = capsys.readouterr().err
    assert not stamped(first) and first["api"]["total"] > 0 and len(first["warnings"]) == 1
    before = tree(tmp_path / "_site")
    second = _demo_build(tmp_path)
    assert stamped(second)
    assert second["api"]["total"] > 0  # it did sync (and saved every detail request)
    assert second["api"]["saved"] > 0
    assert second["pages"]["written"] == 0
    assert second["pages"]["unchanged"] == first["pages"]["written"]
    assert (second["articles"], second["pages"]["html"]) == (first["articles"],
                                                             first["pages"]["html"])
    assert second["warnings"] == first["warnings"]  # the build's warning, replayed once
    assert capsys.readouterr().err == warned
    assert tree(tmp_path / "_site") == before
    assert stamped(_demo_build(tmp_path, "--offline"))  # one stamp for both kinds of build
    assert main(["build", "-q", "--demo", "--strict"]) == 1  # the replayed warning counts
    (tmp_path / "_site" / "404.html").write_text("defaced")
    third = _demo_build(tmp_path)
    assert not stamped(third) and third["pages"]["written"] == 1
    assert tree(tmp_path / "_site") == before


def test_an_online_build_logs_each_warning_once_whether_stamped_or_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A warning logged before the sync (analytics key unset) is not replayed a second time."""
    import logging

    from sitegen.build import run_build
    from sitegen.config import DEMO_API_URL, DEMO_WORKSPACE_ID, load_config
    from sitegen.logs import LOGGER_NAME

    monkeypatch.chdir(tmp_path)
    (tmp_path / "package").mkdir()
    monkeypatch.setattr(stamp_module, "PACKAGE_DIR", tmp_path / "package")
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    monkeypatch.delenv("SITEGEN_STAMP_TEST_KEY", raising=False)
    monkeypatch.setenv("SITEGEN_API_KEY", "any-key-the-emulator-accepts")
    (tmp_path / "site.toml").write_text(
        SITE_TOML.format(analytics="true")
        .replace("https://cas.example.test", DEMO_API_URL)
        .replace("65f0c0ffee0123456789abcd", DEMO_WORKSPACE_ID))
    config = load_config(tmp_path / "site.toml")
    seen: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.WARNING:
                seen.append(record.getMessage())

    handler = Collect()
    logging.getLogger(LOGGER_NAME).addHandler(handler)
    try:
        reports = []
        for _ in range(2):
            seen.clear()
            reports.append(run_build(
                config, output=tmp_path / "_site", transport=demo_transport(),
                locate_stamp=lambda: stamp_module.StampKey.locate(
                    "site.toml", demo=False, output=None)))
            assert len(seen) == len(set(seen)) == reports[-1].warnings, seen
            assert any("SITEGEN_STAMP_TEST_KEY is not set" in m for m in seen)
    finally:
        logging.getLogger(LOGGER_NAME).removeHandler(handler)
    first, second = reports
    assert "model" in first.timings and "model" not in second.timings  # the stamp answered
    assert second.warnings == first.warnings and second.api["total"] > 0


@pytest.mark.parametrize("damage", ["not json", "empty content list", "no content list"])
def test_a_corrupt_stamp_means_a_normal_build(site: Path, damage: str) -> None:
    build(site)
    (stamp_file,) = (site / ".sitegen").glob("build-stamp-*.json")
    if damage == "not json":
        stamp_file.write_text("{not json")
    else:
        raw = json.loads(stamp_file.read_text())
        raw["content"]["files"] = [] if damage.startswith(
            "empty") else None
        raw["content"]["sha"] += "x"  # so the stats alone cannot answer
        stamp_file.write_text(json.dumps(raw))
        stamp_module._known_sha.clear()  # as in a new process
    assert not stamped(build(site))
    assert stamped(build(site))
    assert not os.path.exists(site / "_site" / stamp_file.name)


def test_an_incremental_build_equals_a_cold_full_build(site: Path) -> None:
    build(site)
    _rewrite_content(site)
    path = site / ".sitegen" / CACHE_FILE
    data = json.loads(path.read_text())
    published = [a for a in data["workspace"]["articles"] if a.get("status") == "published"]
    published[-1]["content"] = (published[-1].get("content") or "") + "\n\nA new *line*.\n"
    published[-1]["blocks"] = None
    path.write_text(json.dumps(data))
    incremental = build(site)
    pages = incremental["pages"]
    assert isinstance(pages, dict) and 0 < pages["written"] < pages["files"]
    for stored in (site / ".sitegen").glob("bodies.sqlite*"):
        stored.unlink()
    build(site, "-o", "cold")
    assert tree(site / "_site") == tree(site / "cold")


def test_a_changed_content_cache_is_hashed_once(site: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    build(site)
    _rewrite_content(site)
    hashed: list[str] = []
    real = stamp_module.hashlib.file_digest

    def counting(handle: Any, digest: str) -> Any:
        hashed.append(handle.name)
        return real(handle, digest)

    monkeypatch.setattr(stamp_module.hashlib, "file_digest", counting)
    assert not stamped(build(site))
    assert hashed == [os.fspath(site / ".sitegen" / CACHE_FILE)]
    assert stamped(build(site))


def test_an_unchanged_content_cache_is_not_hashed_again_after_another_input_changed(
        site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build(site)
    stamp_module._known_sha.clear()  # as in a new process
    (site / "site.toml").write_text(SITE_TOML.format(analytics="false").replace(
        'title = "Stamped"', 'title = "Restamped"'))
    hashed: list[str] = []
    real = stamp_module.hashlib.file_digest

    def counting(handle: Any, digest: str) -> Any:
        hashed.append(handle.name)
        return real(handle, digest)

    monkeypatch.setattr(stamp_module.hashlib, "file_digest", counting)
    assert not stamped(build(site))
    assert hashed == []
    stamp_module._known_sha.clear()
    assert stamped(build(site))  # and the key it recorded is right
    assert hashed == []


def test_the_stamp_after_a_small_rebuild_records_every_file_as_it_is(
        site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build(site)
    _write_changes(site)
    statted: list[str] = []
    real = stamp_module._stat

    def counting(path: str) -> Any:
        statted.append(path)
        return real(path)

    monkeypatch.setattr(stamp_module, "_stat", counting)
    report = build(site)
    assert not stamped(report)
    pages = report["pages"]
    assert isinstance(pages, dict) and 0 < pages["written"] < pages["unchanged"]
    # The files the writer confirmed unchanged are not stat'ed again ...
    assert len(statted) < pages["written"] + pages["unchanged"]
    # ... and every recorded stat is the file's, so the next build is answered by the stamp.
    record = json.loads(next((site / ".sitegen").glob("build-stamp-*.json")).read_bytes())
    output = site / "_site"
    for rel, (size, mtime_ns, inode) in record["files"].items():
        st = os.stat(output / rel, follow_symlinks=False)
        assert (st.st_size, st.st_mtime_ns, st.st_ino) == (size, mtime_ns, inode), rel
    assert stamped(build(site))


@pytest.mark.parametrize(("toml_output", "override", "demo", "with_file"), [
    (None, None, False, True), ("public", None, False, True), ("../elsewhere", None, False, True),
    (None, "out/here", False, True), (None, None, True, False), ("public", None, True, True),
    (None, "o", True, False)])
def test_the_likely_output_is_the_configured_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toml_output: str | None,
        override: str | None, demo: bool, with_file: bool) -> None:
    """The early survey's guess of the output, from the raw site.toml, is the build's."""
    from sitegen.config import SiteSection, resolve_config

    assert SiteSection.model_fields["output"].default == stamp_module.DEFAULT_OUTPUT
    site = tmp_path / "site"
    site.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    config = site / "site.toml"
    if with_file:
        line = f'output = "{toml_output}"\n' if toml_output else ""
        config.write_text('[site]\ntitle = "T"\nurl = "https://t.test/"\n' + line
                          + '[api]\nurl = "https://api.test"\n'
                          'workspace = "65f0c0ffee0123456789abcd"\n', encoding="utf-8")
    name = os.path.relpath(config, work)
    expected = resolve_config(name, demo).output_path(override)
    assert stamp_module.likely_output(name, demo=demo, output=override) == expected
