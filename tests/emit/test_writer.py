"""The output writer: staging, reuse, removal of only sitegen's files, refusal, locking."""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import stat
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from sitegen.emit import tree
from sitegen.emit.manifest import MANIFEST_NAME, FileEntry, Manifest
from sitegen.emit.writer import OutputWriter, Staged, WriteResult
from sitegen.errors import BuildError, ConfigError

Snapshot = dict[str, tuple[str, int, int]]


def snapshot(root: Path) -> Snapshot:
    """Every entry under *root*: (sha256 or symlink target or "dir", mtime_ns, inode)."""
    result: Snapshot = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        if path.is_symlink():
            kind = "-> " + os.readlink(path)
        elif path.is_dir():
            kind = "dir"
        else:
            kind = hashlib.sha256(path.read_bytes()).hexdigest()
        result[path.relative_to(root).as_posix()] = (kind, info.st_mtime_ns, info.st_ino)
    return result


def build(output: Path, files: dict[str, bytes], keep: set[str] | None = None,
          stats: Mapping[str, tuple[int, int]] | None = None) -> WriteResult:
    """Write *files*, keeping those in *keep* where the writer can.

    *stats* are what the build keeps in its store: the previous commit's `result.stats`.
    """
    with OutputWriter(output, stats=stats) as writer:
        for path, data in files.items():
            if keep is not None and path in keep and writer.keep(path):
                continue
            assert writer.write(path, data) == sha(data)
        return writer.commit()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def on_disk(root: Path, paths: Iterable[str]) -> dict[str, tuple[int, int]]:
    """(size, mtime_ns) of each of *paths* under *root*: what `WriteResult.stats` holds."""
    return {p: ((root / p).lstat().st_size, (root / p).lstat().st_mtime_ns) for p in paths}


def no_hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any reading of a file to hash it fail: the writer must trust stats alone."""
    def refuse(*args: object) -> None:
        raise AssertionError("a file was hashed")

    monkeypatch.setattr(hashlib, "file_digest", refuse)


def count_hashing(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Note the name of each file the writer hashes."""
    hashed: list[str] = []
    real = hashlib.file_digest

    def counting(handle: object, digest: str) -> object:
        hashed.append(getattr(handle, "name", "?"))
        return real(handle, digest)  # type: ignore[arg-type]

    monkeypatch.setattr(hashlib, "file_digest", counting)
    return hashed


def beside(output: Path) -> list[str]:
    return sorted(p.name for p in output.parent.iterdir())


SITE = {
    "index.html": b"<h1>home</h1>",
    "a/index.html": b"<h1>a</h1>",
    "b/index.html": b"<h1>b</h1>",
    "feed.xml": b"<feed/>",
}


def test_first_build_writes_every_file_a_manifest_of_hashes_and_returns_their_stats(
        tmp_path: Path) -> None:
    out = tmp_path / "_site"
    result = build(out, SITE)
    assert result == WriteResult(sorted(SITE), [], [], touched_output=True,
                                 stats=on_disk(out, SITE))
    for path, data in SITE.items():
        assert (out / path).read_bytes() == data
    assert (out / MANIFEST_NAME).read_bytes() == (
        '{"generator": "sitegen", "version": 3, "files": {\n'
        + ",\n".join(f'  "{path}": "{sha(SITE[path])}"' for path in sorted(SITE))
        + "\n}}\n").encode()
    assert beside(out) == ["._site.sitegen-lock", "_site"]


@pytest.mark.parametrize("by_keep", [False, True], ids=["same-bytes", "keep"])
def test_a_no_change_rebuild_leaves_the_output_untouched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by_keep: bool) -> None:
    out = tmp_path / "_site"
    first = build(out, SITE)
    (out / "CNAME").write_text("mine\n")
    before, folder = snapshot(out), out.stat()
    no_hashing(monkeypatch)  # the stats of the first build suffice: no file is read
    result = build(out, SITE, keep=set(SITE) if by_keep else None, stats=first.stats)
    assert result == WriteResult([], sorted(SITE), [], touched_output=False, stats=first.stats)
    assert snapshot(out) == before
    assert (out.stat().st_ino, out.stat().st_mtime_ns) == (folder.st_ino, folder.st_mtime_ns)


@pytest.mark.parametrize("by_keep", [False, True], ids=["same-bytes", "keep"])
def test_without_stats_a_rebuild_hashes_every_file_then_carries_it_and_knows_its_stat(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by_keep: bool) -> None:
    out = tmp_path / "_site"
    build(out, SITE)  # its stats are lost: a deleted store
    before = snapshot(out)
    hashed = count_hashing(monkeypatch)
    result = build(out, SITE, keep=set(SITE) if by_keep else None, stats=None)
    assert sorted(hashed) == sorted(os.fspath(out / path) for path in SITE)  # each once
    assert result == WriteResult([], sorted(SITE), [], touched_output=False,
                                 stats=on_disk(out, SITE))
    assert snapshot(out) == before
    no_hashing(monkeypatch)  # and with those stats, the next build reads no file
    again = build(out, SITE, keep=set(SITE) if by_keep else None, stats=result.stats)
    assert again == result and snapshot(out) == before


def test_one_changed_file_is_the_only_one_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "_site"
    first = build(out, SITE)
    before = snapshot(out)
    no_hashing(monkeypatch)
    result = build(out, {**SITE, "a/index.html": b"<h1>a, edited</h1>"}, keep={"feed.xml"},
                   stats=first.stats)
    assert result == WriteResult(["a/index.html"], sorted(set(SITE) - {"a/index.html"}), [],
                                 touched_output=True, stats=on_disk(out, SITE))
    assert result.stats["a/index.html"] != first.stats["a/index.html"]
    after = snapshot(out)
    for path in SITE:
        if path != "a/index.html":
            assert after[path] == before[path], path  # same bytes, inode and mtime
    assert after["a/index.html"][0] == hashlib.sha256(b"<h1>a, edited</h1>").hexdigest()
    assert beside(out) == ["._site.sitegen-lock", "_site"]


def test_intact_and_keep_trust_only_files_as_sitegen_left_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "_site"
    files = {**SITE, "c/index.html": b"c", "d/index.html": b"d", "e.html": b"e",
             "f.html": b"f", "g.html": b"g"}
    first = build(out, files)
    (out / "a/index.html").write_bytes(b"edited by hand, another size")
    (out / "b/index.html").unlink()
    (out / "c/index.html").unlink()
    (out / "c/index.html").symlink_to(out / "index.html")
    (out / "d/index.html").unlink()
    (out / "d/index.html").mkdir()
    os.utime(out / "e.html", ns=(0, 10**18))  # same bytes, another mtime
    os.utime(out / "f.html", ns=(0, 10**18))  # likewise, but with no stat record: hashed
    (out / "g.html").write_bytes(b"G")  # no stat record, and other bytes
    (out / "CNAME").write_text("mine\n")  # the user's, whatever stats say of it
    stats = {**first.stats, "CNAME": on_disk(out, ["CNAME"])["CNAME"]}
    del stats["f.html"], stats["g.html"]
    hashed = count_hashing(monkeypatch)
    with OutputWriter(out, stats=stats) as writer:
        assert writer.previous_paths() == frozenset(files)
        assert writer.recorded("e.html") == sha(b"e") and writer.recorded("g.html") == sha(b"g")
        assert writer.recorded("CNAME") is None and writer.recorded("new.html") is None
        assert writer.intact("index.html") and writer.intact("feed.xml")  # by their stats
        assert writer.intact("f.html")  # by its bytes
        assert hashed == [os.fspath(out / "f.html")]
        for path in ("a/index.html", "b/index.html", "c/index.html", "d/index.html", "e.html",
                     "g.html", "CNAME", "new.html", "../x", MANIFEST_NAME):
            assert not writer.intact(path), path
            assert not writer.keep(path), path
        assert writer.keep("index.html")
        writer.write("a/index.html", SITE["a/index.html"])  # not kept: not claimed either
        writer.write("e.html", b"e")  # the same bytes, but not as left: written
        writer.write("f.html", b"f")  # the same bytes, as left: carried
        result = writer.commit()
    assert result.written == ["a/index.html", "e.html"]
    assert result.unchanged == ["f.html", "index.html"]
    assert result.removed == ["b/index.html", "c/index.html", "d/index.html", "feed.xml",
                              "g.html"]
    assert result.stats == on_disk(out, ["a/index.html", "e.html", "f.html", "index.html"])
    assert (out / "a/index.html").read_bytes() == SITE["a/index.html"]
    assert (out / "CNAME").read_text() == "mine\n"


def test_a_file_edited_in_the_manifests_clock_tick_is_checked_by_content(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "_site"
    first = build(out, SITE)
    page = out / "a/index.html"
    written = page.lstat()
    page.write_bytes(SITE["a/index.html"].upper())  # same size
    os.utime(page, ns=(written.st_atime_ns, written.st_mtime_ns))  # and the same mtime
    assert on_disk(out, SITE) == first.stats  # so the stats cannot tell
    manifest = out / MANIFEST_NAME
    oldest = min(mtime for _, mtime in first.stats.values())
    os.utime(manifest, ns=(0, oldest))  # as if every file was written in the manifest's tick
    hashed = count_hashing(monkeypatch)
    with OutputWriter(out, stats=first.stats) as writer:
        assert not writer.intact("a/index.html")
        assert all(writer.intact(path) for path in SITE if path != "a/index.html")
        assert len(hashed) == len(SITE)  # hashed (each of them), and the others the same
    os.utime(manifest, ns=(0, oldest + 10**9))  # a later tick: stats suffice
    with OutputWriter(out) as writer:  # (but not without them: a deleted store)
        assert not writer.intact("a/index.html")
    no_hashing(monkeypatch)  # (and no file is read for it)
    with OutputWriter(out, stats=first.stats) as writer:
        assert all(writer.intact(path) for path in SITE)  # the edit is not seen: as designed


def test_the_manifest_is_a_later_clock_tick_than_every_file_the_commit_wrote(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "_site"
    first = build(out, SITE)
    manifest = out / MANIFEST_NAME
    assert manifest.lstat().st_mtime_ns > max(mtime for _, mtime in first.stats.values())
    real_write = tree.write_new
    newest = [0]

    def coarse_clock(target: str, data: bytes) -> os.stat_result:
        """Stamp each file with the clock's next 20 ms, the manifest with the newest file's
        mtime: as a coarse clock does when they are written in the same tick."""
        made = real_write(target, data)
        if os.path.basename(target) == MANIFEST_NAME:
            os.utime(target, ns=(made.st_atime_ns, newest[0]))
        else:
            newest[0] = max(newest[0], time.time_ns() + 20 * 10**6)
            os.utime(target, ns=(made.st_atime_ns, newest[0]))
        return os.lstat(target)

    monkeypatch.setattr(tree, "write_new", coarse_clock)
    site = {**SITE, "index.html": b"v2", "new/index.html": b"new"}
    result = build(out, site, keep=set(SITE) - {"index.html"}, stats=first.stats)
    monkeypatch.undo()
    assert result.written == ["index.html", "new/index.html"]
    assert result.stats == on_disk(out, site)
    assert manifest.lstat().st_mtime_ns > max(mtime for _, mtime in result.stats.values())
    assert manifest.lstat().st_mtime_ns > newest[0]
    no_hashing(monkeypatch)  # so the next build trusts every file by its stat
    again = build(out, site, keep=set(site), stats=result.stats)
    assert again.unchanged == sorted(site) and not again.touched_output


def test_two_builds_of_the_same_files_anywhere_at_any_time_give_the_same_manifest(
        tmp_path: Path) -> None:
    first, second = tmp_path / "one" / "_site", tmp_path / "elsewhere" / "deep" / "out"
    made = build(first, SITE)
    time.sleep(0.05)  # a later clock tick: other mtimes
    (second / "CNAME").parent.mkdir(parents=True)
    (second / "CNAME").write_text("the user's\n")
    again = build(second, dict(reversed(list(SITE.items()))))
    assert made.stats.keys() == again.stats.keys()
    assert all(made.stats[path][1] != again.stats[path][1] for path in SITE)
    data = (first / MANIFEST_NAME).read_bytes()
    assert (second / MANIFEST_NAME).read_bytes() == data and str(tmp_path).encode() not in data
    assert {p: v[0] for p, v in snapshot(first).items()} == {
        p: v[0] for p, v in snapshot(second).items() if p != "CNAME"}  # (the manifest too)
    changed = build(first, {**SITE, "index.html": b"v2"}, stats=made.stats)
    assert (first / MANIFEST_NAME).read_bytes() != data
    build(first, SITE, stats=changed.stats)  # and back: the very bytes again
    assert (first / MANIFEST_NAME).read_bytes() == data


def test_stale_files_are_removed_but_the_users_files_and_folders_survive(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    (out / "CNAME").write_text("notes.acme.test\n")
    (out / ".nojekyll").write_text("")
    (out / ".git" / "objects").mkdir(parents=True)
    (out / ".git" / "config").write_text("[core]\n")
    (out / ".git").chmod(0o700)
    (out / ".well-known").mkdir()
    (out / "b" / "notes.txt").write_text("mine")
    (out / "b" / "hard").hardlink_to(out / "CNAME")
    (out / "link").symlink_to("/etc/hostname")
    (out / "dangling").symlink_to("nowhere")
    before = snapshot(out)
    user = {p: v for p, v in before.items() if p not in {*SITE, MANIFEST_NAME, "a"}}
    result = build(out, {"index.html": SITE["index.html"], "feed.xml": b"new"})
    assert result.removed == ["a/index.html", "b/index.html"]
    assert not (out / "a").exists() and not (out / "b/index.html").exists()
    after = snapshot(out)
    for path, (kind, mtime, inode) in user.items():
        if kind == "dir":
            assert after[path][0] == "dir", path
        else:
            assert after[path] == (kind, mtime, inode), path  # the very files, linked
    assert stat.S_IMODE((out / ".git").stat().st_mode) == 0o700
    build(out, SITE)  # and again, once sitegen's folder b/ is back
    assert (out / "b" / "notes.txt").read_text() == "mine"
    assert (out / ".git" / "config").exists() and (out / ".git" / "objects").is_dir()


def test_an_emptied_folder_of_sitegen_is_not_kept_as_the_users(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    (out / "a/index.html").unlink()  # leaves a/ empty: still sitegen's
    build(out, {"index.html": b"x"})
    assert not (out / "a").exists()


def test_a_first_build_into_a_folder_keeps_whatever_was_there(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    (out / "old").mkdir(parents=True)
    (out / "old.html").write_text("someone else's")
    build(out, SITE)
    assert (out / "old.html").read_text() == "someone else's" and (out / "old").is_dir()
    build(out, {"index.html": b"x"})
    assert (out / "old.html").exists() and (out / "old").is_dir()


@pytest.mark.parametrize("place", [
    ("index.html", "file"),  # where the site writes a file
    ("a", "file"),  # where the site needs a folder
    ("feed.xml/mine.txt", "file"),  # a folder of the user's where the site writes a file
    ("feed.xml", "folder"),  # an empty folder of the user's, likewise
    ("a", "symlink"),  # a symlink where the site needs a folder: never written through
])
def test_the_users_files_in_the_way_of_the_new_site_are_refused_not_replaced(
        tmp_path: Path, place: tuple[str, str]) -> None:
    out, outside = tmp_path / "_site", tmp_path / "outside"
    outside.mkdir()
    (out / "x").mkdir(parents=True)
    rel, kind = place
    (out / rel).parent.mkdir(parents=True, exist_ok=True)
    if kind == "file":
        (out / rel).write_text("mine")
    elif kind == "folder":
        (out / rel).mkdir()
    else:
        (out / rel).symlink_to(outside, target_is_directory=True)
    before = snapshot(out)
    with pytest.raises(BuildError, match=f"did not write .*{rel.split('/')[0]}"):
        build(out, SITE)
    assert snapshot(out) == before and list(outside.iterdir()) == []
    assert beside(out) == ["._site.sitegen-lock", "_site", "outside"]


@pytest.mark.parametrize("error", [RuntimeError("boom"), KeyboardInterrupt(), SystemExit(1)],
                         ids=lambda error: type(error).__name__)
def test_an_exception_before_or_during_the_commit_keeps_the_previous_output(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: BaseException) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    (out / "CNAME").write_text("mine\n")
    before = snapshot(out)
    with pytest.raises(type(error)), OutputWriter(out) as writer:
        writer.write("index.html", b"new home")
        writer.write("c/index.html", b"new page")
        raise error
    assert snapshot(out) == before and beside(out) == ["._site.sitegen-lock", "_site"]

    def fail(source: str, target: str) -> None:
        if source.endswith("CNAME"):  # the last step before the swap
            raise error
        os.link(source, target, follow_symlinks=False)

    monkeypatch.setattr(tree, "link_into", fail)
    with pytest.raises(type(error)):
        build(out, {**SITE, "index.html": b"new home"})
    assert snapshot(out) == before and beside(out) == ["._site.sitegen-lock", "_site"]


@pytest.mark.parametrize(
    "path",
    ["/etc/passwd", "../escape.html", "a/../../x", "a\\b.html", "a\x00b", "", "a//b",
     "./a", "a/", MANIFEST_NAME, "a/\x07b"],
)
def test_unsafe_paths_are_refused(tmp_path: Path, path: str) -> None:
    with OutputWriter(tmp_path / "_site") as writer, pytest.raises(BuildError, match="refusing"):
        writer.write(path, b"x")
    assert not (tmp_path / "escape.html").exists()


def test_a_path_claimed_twice_is_refused_by_name(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    with OutputWriter(out) as writer:
        writer.write("tag/x/index.html", b"1")
        with pytest.raises(BuildError, match="tag/x/index.html"):
            writer.write("tag/x/index.html", b"2")
        assert writer.keep("a/index.html")
        with pytest.raises(BuildError, match="a/index.html"):
            writer.write("a/index.html", b"again")
        with pytest.raises(BuildError, match="a/index.html"):
            writer.keep("a/index.html")


_FORKED_WRITER: OutputWriter | None = None


def _stage_in_worker(path: str, data: bytes) -> Staged:
    assert _FORKED_WRITER is not None and os.getpid() != _PARENT
    return _FORKED_WRITER.stage(path, data)


_PARENT = os.getpid()


def test_pages_staged_by_a_forked_worker_are_adopted_and_committed(tmp_path: Path) -> None:
    """What the render pool does: the building process reserves the pages' paths, a forked
    worker stages their bytes (an unchanged page is kept, not written), and the building
    process adopts what the worker sends back."""
    import multiprocessing

    out = tmp_path / "_site"
    first = build(out, SITE)
    pages = {"a/index.html": SITE["a/index.html"], "new/deep/index.html": b"<p>new</p>"}
    with OutputWriter(out, stats=first.stats) as writer:
        writer.reserve(pages)
        with pytest.raises(BuildError, match="new/deep/index.html"):
            writer.write("new/deep/index.html", b"twice")
        global _FORKED_WRITER
        _FORKED_WRITER = writer  # (inherited by the forked worker, as the pool's state is)
        with multiprocessing.get_context("fork").Pool(1) as pool:
            staged = pool.starmap(_stage_in_worker, pages.items())
        for path, done in zip(pages, staged, strict=True):
            writer.adopt(path, done)
        for path, data in SITE.items():
            if path not in pages:
                writer.write(path, data)
        result = writer.commit()
    assert [done.kept for done in staged] == [True, False]
    assert result.written == ["new/deep/index.html"]
    assert (out / "new/deep/index.html").read_bytes() == b"<p>new</p>"
    assert Manifest.from_bytes((out / MANIFEST_NAME).read_bytes()).files[  # type: ignore[union-attr]
        "new/deep/index.html"].sha256 == sha(b"<p>new</p>")


def test_a_reserved_path_never_adopted_fails_the_commit(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    before = snapshot(out)
    with OutputWriter(out) as writer:
        writer.reserve(["lost/index.html"])
        with pytest.raises(BuildError, match="never written"):
            writer.commit()
    assert snapshot(out) == before


@pytest.mark.parametrize("first, second", [("x", "x/index.html"), ("x/index.html", "x"),
                                           ("x", "x/y/z.html"), ("x/y/z.html", "x/y")])
def test_a_file_and_a_folder_of_the_same_name_are_refused(
        tmp_path: Path, first: str, second: str) -> None:
    with OutputWriter(tmp_path / "_site") as writer:
        writer.write(first, b"1")
        with pytest.raises(BuildError, match=f"'{second}' (is also a folder|runs through)"):
            writer.write(second, b"2")


def test_a_tampered_manifest_cannot_reach_outside(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    data = (out / MANIFEST_NAME).read_text().replace('"feed.xml"', '"../victim.txt"')
    (out / MANIFEST_NAME).write_text(data)
    with OutputWriter(out) as writer:
        assert "../victim.txt" not in writer.previous_paths()
        assert not writer.keep("../victim.txt")
    build(out, {"index.html": b"x"})
    assert victim.read_text() == "keep me"


@pytest.mark.parametrize("version", [1, 2])
def test_an_older_sitegens_manifest_still_names_its_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: int) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    edited = out / "feed.xml"  # same size and mtime, other bytes: only hashing tells
    info = edited.lstat()
    edited.write_bytes(SITE["feed.xml"].upper())
    os.utime(edited, ns=(info.st_atime_ns, info.st_mtime_ns))

    def entry(path: str, data: bytes) -> str:
        if version == 1:
            return f'["{sha(data)}", "input"]'
        found = (out / path).lstat()  # (version 2 kept stats: never trusted)
        return f'["{sha(data)}", {found.st_size}, {found.st_mtime_ns}]'

    (out / MANIFEST_NAME).write_text(
        f'{{"generator": "sitegen", "version": {version}, "files": {{\n'
        + ",\n".join(f'  "{p}": {entry(p, d)}' for p, d in SITE.items()) + "\n}}\n")
    os.utime(out / MANIFEST_NAME, ns=(0, info.st_mtime_ns + 10**9))
    hashed = count_hashing(monkeypatch)
    with OutputWriter(out) as writer:  # (an older sitegen's store holds no stats)
        assert writer.previous_paths() == frozenset(SITE)
        assert writer.recorded("feed.xml") == sha(SITE["feed.xml"])
        assert writer.keep("index.html") and not writer.keep("feed.xml")
        assert writer.write("feed.xml", SITE["feed.xml"]) == sha(SITE["feed.xml"])
        result = writer.commit()
    assert set(hashed) == {os.fspath(out / "feed.xml"), os.fspath(out / "index.html")}
    assert result == WriteResult(["feed.xml"], ["index.html"], ["a/index.html", "b/index.html"],
                                 touched_output=True,
                                 stats=on_disk(out, ["feed.xml", "index.html"]))
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == [
        MANIFEST_NAME, "feed.xml", "index.html"]
    assert (out / "feed.xml").read_bytes() == SITE["feed.xml"]
    assert Manifest.from_bytes((out / MANIFEST_NAME).read_bytes()) == Manifest(
        {path: FileEntry(sha(SITE[path])) for path in ("feed.xml", "index.html")})


def test_a_foreign_manifest_makes_every_file_the_users(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    (out / MANIFEST_NAME).write_text('{"generator": "other"}')
    with caplog.at_level(logging.WARNING, "sitegen.emit"):
        build(out, {"new.html": b"n"})
    assert "not a sitegen manifest" in caplog.text
    assert all((out / path).read_bytes() == data for path, data in SITE.items())


def test_a_second_build_waits_for_the_lock_then_fails_clearly(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    with OutputWriter(out), pytest.raises(BuildError, match="another sitegen build"):
        OutputWriter(out, lock_timeout=0.2).__enter__()
    with OutputWriter(out, lock_timeout=0.2) as writer:  # released: free again
        writer.write("index.html", b"ok")
        writer.commit()


def test_leftovers_of_interrupted_builds_are_cleaned(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    first = build(out, SITE)
    staging = tmp_path / "._site.sitegen-staging"
    (staging / "half").mkdir(parents=True)
    (tmp_path / "._site.sitegen-spare" / "a").mkdir(parents=True)  # an older sitegen's
    (tmp_path / "._site.sitegen-pictures").write_bytes(b"")
    (tmp_path / "._site.sitegen-old").mkdir()  # a swapped-out tree not yet deleted
    (tmp_path / "_other").mkdir()
    with OutputWriter(out):
        assert sorted(beside(out)) == ["._site.sitegen-lock", "_other", "_site"]
    # killed between the two renames of the fallback swap: the old output comes back
    out.rename(tmp_path / "._site.sitegen-old")
    (staging / "half").mkdir(parents=True)
    result = build(out, SITE, stats=first.stats)
    assert result.unchanged == sorted(SITE)  # the very files, still as sitegen left them
    assert beside(out) == ["._site.sitegen-lock", "_other", "_site"]


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_no_folder_but_the_output_remains_beside_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exchange: bool) -> None:
    if not exchange:
        monkeypatch.setattr(tree, "_exchange", lambda first, second: False)
    out = tmp_path / "_site"
    sites = [SITE, {**SITE, "index.html": b"changed"}, {"index.html": b"changed"},
             {"index.html": b"changed"}, {**SITE, "z/y/x.html": b"deep"}]
    previous: dict[str, bytes] = {}
    for files in sites:
        (out / "CNAME").parent.mkdir(exist_ok=True)
        (out / "CNAME").write_text("x")
        with OutputWriter(out) as writer:
            for path, data in files.items():
                if previous.get(path) != data or not writer.keep(path):
                    writer.write(path, data)
            writer.commit()
            assert beside(out) == ["._site.sitegen-lock", "_site"]  # the commit's own doing
        previous = files
        assert {p: (out / p).read_bytes() for p in files} == files
        assert (out / "CNAME").read_text() == "x"
        assert beside(out) == ["._site.sitegen-lock", "_site"]


def test_the_output_must_be_a_folder_and_not_the_root_or_home(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(BuildError, match="is a file"):
        OutputWriter(target).__enter__()
    for folder, what in ((Path("/"), "the filesystem root"), (Path.home(), "your home folder"),
                         (tmp_path / ".git" / "x", ".git folder")):
        with pytest.raises(ConfigError, match=what) as caught:  # (exit 2, as `-o` would be)
            OutputWriter(folder)
        assert caught.value.exit_code == 2


def test_an_output_reached_through_a_symlink_is_updated_where_it_is(tmp_path: Path) -> None:
    real, link = tmp_path / "www" / "site", tmp_path / "_site"
    real.mkdir(parents=True)
    link.symlink_to(real, target_is_directory=True)
    build(link, SITE)
    build(link, {**SITE, "index.html": b"v2"}, keep=set(SITE) - {"index.html"})
    assert link.is_symlink() and (real / "index.html").read_bytes() == b"v2"
    assert beside(real) == [".site.sitegen-lock", "site"]


def test_a_folder_that_cannot_be_made_is_one_line_and_the_output_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    before = snapshot(out)
    real_mkdir = os.mkdir

    def mkdir(path: str, mode: int = 0o777, **kwargs: object) -> None:
        if "deep" in os.fspath(path):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_mkdir(path, mode)

    monkeypatch.setattr(os, "mkdir", mkdir)
    with pytest.raises(BuildError) as caught:
        build(out, {**SITE, "deep/er/index.html": b"x"})
    monkeypatch.undo()
    message = str(caught.value)
    assert "\n" not in message and "'deep/er/index.html'" in message
    assert os.strerror(errno.ENOSPC) in message
    assert snapshot(out) == before and beside(out) == ["._site.sitegen-lock", "_site"]


def test_the_output_folders_own_mode_is_kept(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    out.chmod(0o750)
    build(out, {**SITE, "index.html": b"v2"})
    assert stat.S_IMODE(out.stat().st_mode) == 0o750


@pytest.mark.skipif(not os.uname().sysname == "Linux", reason="renameat2 is Linux's")
def test_the_swap_is_one_atomic_exchange_where_the_kernel_has_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    (first / "one").mkdir(parents=True)
    (second / "two").mkdir(parents=True)
    assert tree._exchange(first, second)
    assert (first / "two").is_dir() and (second / "one").is_dir()
    out = tmp_path / "_site"
    build(out, SITE)

    def no_rename(*args: object) -> None:
        raise AssertionError("the output was renamed away: not one atomic exchange")

    monkeypatch.setattr(os, "rename", no_rename)
    build(out, {**SITE, "index.html": b"v2"})
    assert (out / "index.html").read_bytes() == b"v2"


def test_a_writer_is_used_once_and_frees_its_lock_on_any_failure(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "_site"
    with OutputWriter(out) as writer:
        writer.write("index.html", b"x")
        writer.commit()
        for late in (lambda: writer.write("a.html", b"a"), writer.commit):
            with pytest.raises(BuildError, match="not open"):
                late()

    def fail(output: Path) -> None:
        raise OSError(errno.EACCES, os.strerror(errno.EACCES), str(output))

    monkeypatch.setattr(tree, "recover_leftovers", fail)
    with pytest.raises(BuildError, match="interrupted build"), OutputWriter(out):
        pass
    monkeypatch.undo()
    with OutputWriter(out, lock_timeout=0.2) as writer:  # the lock was released
        assert writer.previous_paths() == {"index.html"}
