"""A poisoned CI cache is never published. Nothing executable comes from the cache folder
unverified (#25 point 6): a poisoned CI cache of `.sitegen/` must not be code run by the
build; compiled templates are kept only in the content store, sealed, and one whose seal does
not verify is compiled again. What the store and the output hold is untrusted (#27 point 5):
see the second half."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jinja2 import BytecodeCache, Environment, FileSystemBytecodeCache
from jinja2.bccache import Bucket

from sitegen import cores, fileset, plan
from sitegen.cachekey import TAG_BYTES, mac_key, seal
from sitegen.cli import main
from sitegen.codeprint import code_fingerprint
from sitegen.config import resolve_config
from sitegen.outputnames import MANIFEST_NAME
from sitegen.render.themes import ThemeSet
from tests.clireport import cli_report

STORE_FILES = {"store.sqlite", "store.sqlite-wal", "store.sqlite-shm", "store.sqlite-journal"}


def test_a_build_leaves_nothing_but_the_store_in_the_cache_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["build", "-q", "--demo", "-o", "out"]) == 0
    assert main(["build", "-q", "--demo", "--offline", "--force", "-o", "out"]) == 0
    left = {p.relative_to(tmp_path / ".sitegen").as_posix()
            for p in (tmp_path / ".sitegen").rglob("*") if p.is_file()}
    assert left and {Path(name).name for name in left} <= STORE_FILES, sorted(left)


def test_compiled_templates_are_never_cached_on_disk(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["build", "-q", "--demo", "-o", "out"]) == 0
    env = ThemeSet(resolve_config("site.toml", True)).environment()
    assert not isinstance(env.bytecode_cache, FileSystemBytecodeCache)
    assert not [p for p in tmp_path.rglob("*") if p.suffix in (".jinja", ".pyc", ".cache")]


# --- #27 point 5: the store and a restored output are untrusted input --------------------
#
# A CI cache of `.sitegen/` and the output can be written by others. Derived data that
# bypasses the sanitiser is sealed with an HMAC of a secret the cache does not hold
# (`sitegen.cachekey`), and a file the build did not write, or whose bytes differ from what it
# wrote, does not survive a build. Each test edits the cache as an attacker would (the
# SQLite rows, the output's files, its manifest) and builds as CI does.

SCRIPT = b"<script>alert(1)</script>"
_SEEDS: dict[str, Path] = {}


def _seed(key: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo site folder (`.sitegen/` and `out/`) built once per key ("" = no secret in the
    environment: the per-user key), with search and images."""
    if key not in _SEEDS:
        root = tmp_path_factory.mktemp("seed")
        cli_report(root, "build", "-q", "--demo", "-o", "out")
        _SEEDS[key] = root
    return _SEEDS[key]


@pytest.fixture(params=["", "a-secret-only-the-build-has"], ids=["no-key", "key"])
def site(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
         tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of a built demo site folder, as a CI cache restores it (new inodes, ctimes)."""
    key = str(request.param)
    if key:
        monkeypatch.setenv("SITEGEN_CACHE_KEY", key)
    seed = _seed(key, tmp_path_factory)
    shutil.copytree(seed, tmp_path / "site", symlinks=True)
    return tmp_path / "site"


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() or p.is_symlink()}


def _edit_rows(site: Path, kind: str, change: Callable[[bytes], bytes]) -> int:
    """Change every `derived` row of *kind* in the site's demo store; how many changed."""
    with sqlite3.connect(site / ".sitegen" / "demo" / "store.sqlite") as db:
        rows = db.execute("SELECT key, value FROM derived WHERE kind = ?", (kind,)).fetchall()
        changed = [(change(bytes(v)), kind, k) for k, v in rows]
        changed = [row for row, (_, v) in zip(changed, rows, strict=True) if row[0] != v]
        db.executemany("UPDATE derived SET value = ? WHERE kind = ? AND key = ?", changed)
    return len(changed)


def _edit_fileset(change: Callable[[dict[str, bytes]], dict[str, bytes]],
                  ) -> Callable[[bytes], bytes]:
    """A row edit that unpacks a `fileset` blob (wherever it starts), changes its files and
    packs it again: a well-formed blob, as anyone who can read the format can write."""
    def edit(value: bytes) -> bytes:
        files = fileset.unpack(value[value.find(b"PK\x03\x04"):])
        assert files is not None
        return fileset.pack(change(dict(files)))
    return edit


def test_a_tampered_stored_body_never_reaches_the_output(site: Path) -> None:
    assert _edit_rows(site, "body", lambda v: v.replace(b"</p>", b"</p>" + SCRIPT, 1)) > 0
    report = cli_report(site, "build", "-q", "--demo", "--offline", "-o", "fresh")  # CI: no output
    assert report["pages"]["rendered"] == report["pages"]["html"]
    assert not [p for p, data in _files(site / "fresh").items() if SCRIPT in data]
    again = cli_report(site, "build", "-q", "--demo", "--offline", "-o", "again")  # stored again
    assert _files(site / "again") == _files(site / "fresh") and again["pages"]["rendered"]


FORGED = "FORGED-TEMPLATE-RAN"


def _demo_themes(site: Path) -> ThemeSet:
    """The theme chain of the demo site in *site* (as `--demo` resolves it there)."""
    cwd = os.getcwd()
    os.chdir(site)
    try:
        return ThemeSet(resolve_config("site.toml", True))
    finally:
        os.chdir(cwd)


def _forged_template(site: Path, name: str) -> tuple[str, bytes]:
    """The store key of the demo's compiled template *name*, and well-formed Jinja bytecode
    of another template (it writes FORGED) carrying *name*'s true source checksum: what
    anyone who can read Jinja's bytecode format can write into a cache."""
    env = _demo_themes(site).environment()
    template = env.get_template(name)
    assert env.loader is not None and template.filename is not None
    source = env.loader.get_source(env, name)[0]
    jinja = BytecodeCache()  # (its key and checksum, as every Jinja bytecode cache has them)
    key = jinja.get_cache_key(name, template.filename)
    bucket = Bucket(env, key, jinja.get_source_checksum(source))
    bucket.code = env.compile(f"<footer>{FORGED}</footer>", name, template.filename)
    return code_fingerprint() + ":" + key, bucket.bytecode_to_string()


def _set_row(site: Path, kind: str, key: str, value: bytes) -> None:
    with sqlite3.connect(site / ".sitegen" / "demo" / "store.sqlite") as db:
        assert db.execute("UPDATE derived SET value = ? WHERE kind = ? AND key = ?",
                          (value, kind, key)).rowcount == 1


def _stored_row(site: Path, kind: str, key: str) -> bytes:
    with sqlite3.connect(site / ".sitegen" / "demo" / "store.sqlite") as db:
        (value,) = db.execute("SELECT value FROM derived WHERE kind = ? AND key = ?",
                              (kind, key)).fetchone()
    return bytes(value)


def test_a_forged_compiled_template_never_runs(site: Path) -> None:
    key, forged = _forged_template(site, "partials/footer.html")
    tag = _stored_row(site, "template", key)[:TAG_BYTES]
    _set_row(site, "template", key, tag + forged)  # (the genuine row's seal kept)
    report = cli_report(site, "build", "-q", "--demo", "--offline", "-o", "fresh")
    assert report["pages"]["rendered"] == report["pages"]["html"]  # (CI: no output)
    assert not [p for p, data in _files(site / "fresh").items() if FORGED.encode() in data]
    assert _files(site / "fresh") == _files(site / "out")
    # The same bytes under a seal made with the build's own key would run: the seal is what
    # keeps them out (the forged entry is well-formed and its checksum is the true one).
    _set_row(site, "template", key, seal(mac_key("SITEGEN_API_KEY"), "template", key, forged))
    cli_report(site, "build", "-q", "--demo", "--offline", "-o", "sealed")
    assert FORGED in (site / "sealed" / "index.html").read_text()


def test_a_second_build_compiles_no_template_and_an_edited_one_alone(
        site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[str | None] = []
    compile_: Any = Environment.compile

    def counting(env: Environment, source: Any, name: str | None = None, *args: Any) -> Any:
        compiled.append(name)
        return compile_(env, source, name, *args)

    monkeypatch.setattr(Environment, "compile", counting)
    cli_report(site, "build", "-q", "--demo", "--offline", "--force", "-o", "out")
    assert compiled == []  # (every template from the store: the seed's build stored them)
    (site / "templates").mkdir()
    source = _demo_themes(site).template_source("partials/footer.html")
    assert source is not None
    (site / "templates" / "partials").mkdir()
    (site / "templates" / "partials" / "footer.html").write_text(source + "<!-- edited -->")
    compiled.clear()
    cli_report(site, "build", "-q", "--demo", "--offline", "-o", "out")
    assert compiled == ["partials/footer.html"]
    assert "<!-- edited -->" in (site / "out" / "index.html").read_text()


def test_a_tampered_stored_search_bundle_never_reaches_the_output(site: Path) -> None:
    def poison(files: dict[str, bytes]) -> dict[str, bytes]:
        return {name: data + b"\nalert('poisoned');\n" if name.endswith(".js") else data
                for name, data in files.items()}

    assert _edit_rows(site, "search", _edit_fileset(poison)) == 3  # (one per shard)
    cli_report(site, "build", "-q", "--demo", "--offline", "-o", "fresh")  # CI: no output
    bundle = {p: d for p, d in _files(site / "fresh").items() if p.startswith("pagefind/")}
    assert bundle and not [p for p, data in bundle.items() if b"poisoned" in data]
    assert bundle == {p: d for p, d in _files(site / "out").items() if p.startswith("pagefind/")}


def test_a_tampered_stored_image_variant_never_reaches_the_output(site: Path) -> None:
    def poison(files: dict[str, bytes]) -> dict[str, bytes]:
        return {name: b"poisoned " + SCRIPT for name in files}

    assert _edit_rows(site, "imagevariants", _edit_fileset(poison)) > 0
    cli_report(site, "build", "-q", "--demo", "--offline", "-o", "fresh")  # CI: no output
    media = {p: d for p, d in _files(site / "fresh").items() if p.startswith("media/")}
    assert media and not [p for p, data in media.items() if b"poisoned" in data]
    assert media == {p: d for p, d in _files(site / "out").items() if p.startswith("media/")}


def test_a_stray_file_survives_neither_a_build_nor_force(site: Path) -> None:
    out = site / "out"
    clean = _files(out)
    for flags in ((), (), ("--force",)):  # (the second: the no-change fast path)
        (out / "evil.js").write_bytes(SCRIPT)
        (out / "night-train-to-vienna" / "steal.html").write_bytes(SCRIPT)
        (out / ".well-known" / "x").mkdir(parents=True, exist_ok=True)
        cli_report(site, "build", "-q", "--demo", "--offline", "-o", "out", *flags)
        assert _files(out) == clean, flags
        assert not (out / ".well-known").exists()
        cli_report(site, "build", "-q", "--demo", "--offline", "-o", "out")  # nothing to do
        assert _files(out) == clean


def test_a_tampered_page_is_written_again_even_with_its_manifest_and_store_edited(
        site: Path) -> None:
    out = site / "out"
    clean = _files(out)
    page = out / "night-train-to-vienna" / "index.html"
    poisoned = page.read_bytes().replace(b"</body>", SCRIPT + b"</body>")
    old, new = (hashlib.sha256(d).hexdigest() for d in (page.read_bytes(), poisoned))
    page.write_bytes(poisoned)
    manifest = out / MANIFEST_NAME  # the attacker makes the manifest and the store agree
    manifest.write_text(manifest.read_text().replace(old, new))
    with sqlite3.connect(site / ".sitegen" / "demo" / "store.sqlite") as db:
        db.execute("UPDATE pages SET sha = ? WHERE sha = ?", (new.encode(), old.encode()))
    report = cli_report(site, "build", "-q", "--demo", "--offline", "-o", "out")
    assert _files(out) == clean and report["pages"]["rendered"] >= 1
    quick = cli_report(site, "build", "-q", "--demo", "--offline", "-o", "out")
    assert set(quick["timings"]) == {"unchanged"}  # the no-change stage answers
    page.write_bytes(page.read_bytes().replace(b"<html", b"<HTML", 1))  # the same size
    report = cli_report(site, "build", "-q", "--demo", "--offline", "-o", "out")  # (no fast path)
    assert _files(out) == clean and report["pages"]["rendered"] == 1


@pytest.mark.parametrize("forked", [False, True], ids=["checked-here", "checks-forked"])
def test_a_cache_restored_by_tar_renders_nothing_then_repairs_what_was_changed(
        site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forked: bool) -> None:
    """As CI restores a cache: GNU tar, mtimes to the second, new inodes and ctimes; the
    plan's checks in this process, or shared out over forked ones as on a large site."""
    monkeypatch.setattr(plan, "SHARED_FROM", 1 if forked else 10**9)
    forks: list[int] = []
    fork = cores._fork
    monkeypatch.setattr(cores, "_fork", lambda *args: forks.append(1) or fork(*args))
    cli_report(site, "build", "-q", "--demo", "--offline", "-o", "out")
    built = _files(site / "out")
    archive, restored = tmp_path / "cache.tar", tmp_path / "restored"
    subprocess.run(["tar", "--format=gnu", "-cf", str(archive), "-C", str(site),
                    ".sitegen", "out"], check=True, timeout=300)
    restored.mkdir()
    subprocess.run(["tar", "-xf", str(archive), "-C", str(restored)], check=True, timeout=300)
    assert (restored / "out" / "index.html").stat().st_mtime_ns % 10**9 == 0
    forks.clear()
    report = cli_report(restored, "build", "-q", "--demo", "--offline", "-o", "out")
    assert report["pages"]["rendered"] == 0 and report["pages"]["written"] == 0
    assert len(forks) == (min(cores.core_count(), 4) - 1 if forked else 0)
    assert _files(restored / "out") == built
    page = restored / "out" / "index.html"
    page.write_bytes(page.read_bytes().replace(b"</body>", SCRIPT + b"</body>"))
    (restored / "out" / "media" / "stray.js").write_bytes(SCRIPT)
    report = cli_report(restored, "build", "-q", "--demo", "--offline", "-o", "out")
    assert _files(restored / "out") == built and report["pages"]["rendered"] == 1
    assert report["files"]["removed"] == 1
