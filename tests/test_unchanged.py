"""The recipe's first stage (`sitegen.unchanged`): an offline build that changed nothing is
answered at once, and any change of the output anywhere (deep in `pagefind/` too) means
"build", whose output is then exactly the clean one again."""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sitegen.build import BuildOptions, ConfigFile, run_build
from sitegen.codeprint import code_fingerprint
from sitegen.config import resolve_config
from sitegen.logs import WarningCounter
from sitegen.preview.builder import SiteBuilder, preview_config, preview_output
from sitegen.report import BuildReport
from sitegen.store import output_name
from sitegen.storefile import glance_store
from sitegen.unchanged import NoChange
from tests.clireport import cli_report

_SEED: list[Path] = []


@pytest.fixture
def copied(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
           monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of a demo site folder (search on) built once online, as a cache restores it."""
    monkeypatch.setenv("SITEGEN_CACHE_KEY", "a-secret-only-the-build-has")
    if not _SEED:
        seed = tmp_path_factory.mktemp("seed")
        cli_report(seed, "build", "-q", "--demo", "-o", "out")
        _SEED.append(seed)
    root = tmp_path / "site"
    shutil.copytree(_SEED[0], root, symlinks=True)
    return root


@pytest.fixture
def site(copied: Path) -> Path:
    """*copied*, the no-change record made in it by an offline build."""
    root = copied
    first = cli_report(root, "build", "-q", "--demo", "--offline", "-o", "out")
    assert not _replayed(first)  # a copy: new inodes and ctimes, as a restored cache
    assert _replayed(cli_report(root, "build", "-q", "--demo", "--offline", "-o", "out"))
    return root


def _replayed(report: dict[str, Any]) -> bool:
    """Whether the no-change stage answered the build (its only timed stage)."""
    return set(report["timings"]) == {"unchanged"}


def _files(root: Path) -> dict[str, tuple[bytes, bool]]:
    return {p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else b"", p.is_dir())
            for p in sorted(root.rglob("*"))}


def _deepest(out: Path) -> Path:
    """The most deeply nested file of the search index."""
    files = [p for p in (out / "pagefind").rglob("*") if p.is_file()]
    return max(files, key=lambda p: (len(p.parts), p.as_posix()))


def _add(path: Path) -> None:
    (path.parent / "added.js").write_bytes(b"alert(1)")


def _remove(path: Path) -> None:
    path.unlink()


def _replace(path: Path) -> None:
    """The same bytes in a new file renamed over it (a new inode, its folder's listing)."""
    (path.parent / "tmp").write_bytes(path.read_bytes())
    os.replace(path.parent / "tmp", path)


def _rewrite(path: Path) -> None:
    """Other bytes of the same size, written in place (the same inode and folder)."""
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    with open(path, "r+b") as handle:
        handle.write(bytes(data))


def _empty_folder(path: Path) -> None:
    (path.parent / "extra").mkdir()


def _rename(path: Path) -> None:
    path.rename(path.with_name(path.name + "-moved"))


def _chmod(path: Path) -> None:
    path.chmod(0o600)


def _page_sibling(path: Path) -> None:
    out = next(p for p in path.parents if p.name == "out")
    (out / "night-train-to-vienna" / "steal.html").write_bytes(b"<script></script>")


@pytest.mark.parametrize("change", [_add, _remove, _replace, _rewrite, _empty_folder,
                                    _rename, _chmod, _page_sibling])
def test_any_change_of_the_output_means_build_and_is_repaired(
        site: Path, change: Callable[[Path], None]) -> None:
    out = site / "out"
    clean = {p: found[0] for p, found in _files(out).items()}
    target = _deepest(out)
    assert len(target.relative_to(out).parts) >= 3  # (deep in a shard's bundle)
    change(target)
    report = cli_report(site, "build", "-q", "--demo", "--offline", "-o", "out")
    assert not _replayed(report) and "commit" in report["timings"]
    assert {p: found[0] for p, found in _files(out).items()} == clean
    assert _replayed(cli_report(site, "build", "-q", "--demo", "--offline", "-o", "out"))


def test_a_tampered_record_is_not_trusted(site: Path) -> None:
    with sqlite3.connect(site / ".sitegen" / "demo" / "store.sqlite") as db:
        (value,) = db.execute("SELECT value FROM derived WHERE kind = 'nochange'").fetchone()
        db.execute("UPDATE derived SET value = ? WHERE kind = 'nochange'",
                   (bytes(value).replace(b'"articles": ', b'"articles": 9'),))
    report = cli_report(site, "build", "-q", "--demo", "--offline", "-o", "out")
    assert not _replayed(report)


def test_a_forced_offline_build_is_recorded_for_the_next(copied: Path) -> None:
    """`build --offline --force` then `build --offline`: the second is answered at once."""
    site = copied
    forced = cli_report(site, "build", "-q", "--demo", "--offline", "--force", "-o", "out")
    assert forced["pages"]["rendered"] == forced["pages"]["html"] > 0
    again = cli_report(site, "build", "-q", "--demo", "--offline", "-o", "out")
    assert _replayed(again) and again["pages"]["rendered"] == 0
    assert again["files"]["unchanged"] == forced["files"]["count"]


def test_the_stage_is_the_recipes_first(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`run_build` answers a `ConfigFile` from the store, and says when the stage applies."""
    monkeypatch.chdir(site)
    file = ConfigFile("site.toml", demo=True, offline=True)

    def build(config: Any, **flags: bool) -> BuildReport:
        return run_build(config, BuildOptions(output=site / "out", demo=True, **flags))

    quick = build(file, offline=True)
    assert list(quick.timings) == ["unchanged"] and quick.from_cache and quick.rendered == 0
    listed = sorted(p.relative_to(site / "out").as_posix()
                    for p in (site / "out").rglob("*") if p.is_file())
    assert sorted(quick.unchanged) == [p for p in listed if p != ".sitegen-manifest.json"]
    given = build(file.load(), offline=True)  # a configuration given: not the stage's
    assert "unchanged" not in given.timings and "render" in given.timings
    online = build(file)  # not answered (the content may change at the service), recorded
    assert list(online.timings)[0] == "unchanged" and "render" in online.timings
    assert list(build(file, offline=True).timings) == ["unchanged"]
    forced = build(file, offline=True, force=True)  # recorded, not answered
    assert list(forced.timings)[0] == "unchanged" and "render" in forced.timings
    assert list(build(file, offline=True).timings) == ["unchanged"]


@pytest.mark.parametrize("output", [("-o", "out"), ()])
def test_an_online_build_is_recorded_for_the_next_offline_one(
        copied: Path, output: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """`build` (its own output or `-o`), then the preview's builds, then `build --offline`:
    answered at once, with what an offline build of that content reports (no API call, the
    same warnings)."""
    site = copied
    online = cli_report(site, "build", "-q", "--demo", *output)
    assert online["api"]["total"] > 0 and not _replayed(online)
    monkeypatch.chdir(site)  # `sitegen serve` on the same site: its own output, the store
    config = preview_config(resolve_config("site.toml", True), "http://127.0.0.1:9/")
    SiteBuilder(preview_output(config), demo=True, offline=False)(config, fetch=True)
    offline = cli_report(site, "build", "-q", "--demo", "--offline", *output)
    assert _replayed(offline) and offline["pages"]["rendered"] == 0
    assert offline["files"]["unchanged"] == online["files"]["count"]
    built = cli_report(site, "build", "-q", "--demo", "--offline", "--force", *output)
    assert not _replayed(built)
    assert (offline["api"], offline["warnings"], offline["pages"]["count"]) == (
        built["api"], built["warnings"], built["pages"]["count"])


def test_another_version_of_a_library_means_build(
        site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A library the code fingerprint covers (Pygments) in another version, installed in a
    folder first on the path: "build", every page rendered again (as the render's code
    fingerprint says); then answered at once again."""
    libs = tmp_path / "libs"
    (libs / "pygments-99.0.dist-info").mkdir(parents=True)
    (libs / "pygments-99.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: Pygments\nVersion: 99.0\n")
    monkeypatch.syspath_prepend(str(libs))
    code_fingerprint.cache_clear()  # (as a new process: the fingerprint taken again)
    try:
        report = cli_report(site, "build", "-q", "--demo", "--offline", "-o", "out")
        assert not _replayed(report)
        assert report["pages"]["rendered"] == report["pages"]["html"] > 0
        assert _replayed(cli_report(site, "build", "-q", "--demo", "--offline", "-o", "out"))
    finally:
        monkeypatch.undo()
        code_fingerprint.cache_clear()


def test_an_output_another_build_committed_since_is_not_recorded(
        site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The record is made only while the writer's record is this build's own commit's:
    another build of the output may commit between this one's commit and its record."""
    monkeypatch.chdir(site)
    path = site / ".sitegen" / "demo" / "store.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM derived WHERE kind = 'nochange'")
    options = BuildOptions(output=site / "out", offline=True, demo=True)
    file = ConfigFile("site.toml", demo=True, offline=True)
    store = glance_store(path, "SITEGEN_API_KEY")
    assert store is not None
    with store:
        version, written = store.content_version(), store.output_record(str(site / "out"))
        sealed = store.get(output_name(path, str(site / "out")))
    assert written[1] is not None and sealed

    def record(left: str) -> bool:
        """Record a build whose commit the store keeps as *left*; whether it answers now."""
        stage = NoChange.of(file, options)
        stage.content_read(version, 0)
        stage.committed(written, left)
        stage.recorded(BuildReport(html_pages=1, from_cache=True))
        return NoChange.of(file, options).replay(WarningCounter()) is not None

    assert not record(sealed[:-2] + ("00" if sealed[-2:] != "00" else "11"))  # another's
    assert record(sealed)
