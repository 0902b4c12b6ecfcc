"""The output writer: staging, reuse, removal of only sitegen's files, refusal, locking."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from sitegen.emit import tree
from sitegen.emit.manifest import FileEntry, Manifest
from sitegen.emit.writer import OutputWriter, Staged, WriteResult
from sitegen.errors import BuildError, ConfigError
from sitegen.outputnames import MANIFEST_NAME

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


Record = tuple[Mapping[str, tuple[str, int, int, int]], tuple[int, int, int] | None]


def build(output: Path, files: dict[str, bytes], keep: set[str] | None = None,
          record: Record | None = None) -> WriteResult:
    """Write *files*, keeping those in *keep* where the writer can.

    *record* is what the build keeps in its store: the previous commit's `result.record`.
    """
    with OutputWriter(output, record=record) as writer:
        for path, data in files.items():
            if keep is not None and path in keep and writer.keep(path):
                continue
            assert writer.write(path, data) == sha(data)
        return writer.commit()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def on_disk(root: Path, paths: Iterable[str]) -> dict[str, tuple[str, int, int, int]]:
    """(sha256, inode, size, ctime_ns) of each of *paths* under *root*: what
    `WriteResult.stats` holds."""
    found = {p: (root / p).lstat() for p in paths}
    return {p: (sha((root / p).read_bytes()), s.st_ino, s.st_size, s.st_ctime_ns)
            for p, s in found.items()}


def no_hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any reading of a file to hash it fail: the writer must trust stats alone."""
    def refuse(*args: object) -> None:
        raise AssertionError("a file was hashed")

    monkeypatch.setattr(tree, "file_sha256", refuse)


def count_hashing(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Note the name of each file the writer hashes."""
    hashed: list[str] = []
    real = tree.file_sha256

    def counting(path: str, handle: int, size: int) -> str:
        hashed.append(path)
        return real(path, handle, size)

    monkeypatch.setattr(tree, "file_sha256", counting)
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
    before, folder = snapshot(out), out.stat()
    no_hashing(monkeypatch)  # the stats of the first build suffice: no file is read
    result = build(out, SITE, keep=set(SITE) if by_keep else None, record=first.record)
    assert result == WriteResult([], sorted(SITE), [], touched_output=False, stats=first.stats)
    assert snapshot(out) == before
    assert (out.stat().st_ino, out.stat().st_mtime_ns) == (folder.st_ino, folder.st_mtime_ns)


@pytest.mark.parametrize("by_keep", [False, True], ids=["same-bytes", "keep"])
def test_without_a_record_a_file_is_kept_only_for_the_bytes_the_build_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by_keep: bool) -> None:
    """The output's own manifest is never trusted (a CI cache can be written by others):
    without the store's record (a deleted store) `keep` refuses every file, and `write`
    carries a file only when it holds the very bytes written (hashed), then knows its stat."""
    out = tmp_path / "_site"
    build(out, SITE)  # its record is lost: a deleted store
    (out / "feed.xml").write_bytes(b"<evil/>")  # and its manifest would still say feed.xml
    before = snapshot(out)
    hashed = count_hashing(monkeypatch)
    with OutputWriter(out) as writer:
        assert writer.previous_paths() == frozenset() and not writer.keep("index.html")
    result = build(out, SITE, keep=set(SITE) if by_keep else None, record=None)
    assert sorted(hashed) == sorted(os.fspath(out / path) for path in SITE)  # each once
    assert result == WriteResult(["feed.xml"], sorted(set(SITE) - {"feed.xml"}), [],
                                 touched_output=True, stats=on_disk(out, SITE))
    assert (out / "feed.xml").read_bytes() == SITE["feed.xml"]
    assert {p: v for p, v in snapshot(out).items() if p in SITE and p != "feed.xml"} == {
        p: v for p, v in before.items() if p in SITE and p != "feed.xml"}
    monkeypatch.undo()
    no_hashing(monkeypatch)  # and with that record, the next build reads no file
    again = build(out, SITE, keep=set(SITE) if by_keep else None, record=result.record)
    assert again == WriteResult([], sorted(SITE), [], touched_output=False, stats=result.stats)


def test_one_changed_file_is_the_only_one_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "_site"
    first = build(out, SITE)
    before = snapshot(out)
    no_hashing(monkeypatch)
    result = build(out, {**SITE, "a/index.html": b"<h1>a, edited</h1>"}, keep={"feed.xml"},
                   record=first.record)
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
    os.utime(out / "e.html", ns=(0, 10**18))  # same bytes, another ctime: hashed
    (out / "g.html").write_bytes(b"G")  # same size, other bytes: hashed
    (out / "CNAME").write_text("mine\n")  # not the build's: removed
    stats = dict(first.stats)
    stats["f.html"] = (sha(b"f"), -1, 1, -1)  # (no stat recorded: hashed)
    hashed = count_hashing(monkeypatch)
    with OutputWriter(out, record=(stats, first.manifest)) as writer:
        assert writer.previous_paths() == frozenset(files)
        assert writer.recorded("e.html") == sha(b"e") and writer.recorded("g.html") == sha(b"g")
        assert writer.recorded("CNAME") is None and writer.recorded("new.html") is None
        assert writer.intact("index.html") and writer.intact("feed.xml")  # by their stats
        assert hashed == []
        assert writer.intact("f.html") and writer.intact("e.html")  # by their bytes
        assert sorted(hashed) == [os.fspath(out / "e.html"), os.fspath(out / "f.html")]
        for path in ("a/index.html", "b/index.html", "c/index.html", "d/index.html",
                     "g.html", "CNAME", "new.html", "../x", MANIFEST_NAME):
            assert not writer.intact(path), path
            assert not writer.keep(path), path
        assert writer.keep("index.html")
        writer.write("a/index.html", SITE["a/index.html"])  # not kept: not claimed either
        writer.write("e.html", b"e")  # the same bytes, as left: carried
        writer.write("f.html", b"f")  # likewise
        result = writer.commit()
    assert result.written == ["a/index.html"]
    assert result.unchanged == ["e.html", "f.html", "index.html"]
    assert result.removed == ["CNAME", "b/index.html", "c/index.html", "d/index.html",
                              "feed.xml", "g.html"]
    assert result.stats == on_disk(out, ["a/index.html", "e.html", "f.html", "index.html"])
    assert (out / "a/index.html").read_bytes() == SITE["a/index.html"]
    assert not (out / "CNAME").exists()


def test_a_file_edited_in_the_manifests_clock_tick_is_checked_by_content(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "_site"
    first = build(out, SITE)
    page = out / "a/index.html"
    page.write_bytes(SITE["a/index.html"].upper())  # same size
    # as if edited in the clock tick it was recorded in: its stat is the recorded one
    stats = {**first.stats, "a/index.html": (sha(SITE["a/index.html"]),
                                             *on_disk(out, ["a/index.html"])["a/index.html"][1:])}
    assert first.manifest is not None
    newest = max(row[3] for row in stats.values())
    oldest = min(row[3] for row in stats.values())
    hashed = count_hashing(monkeypatch)
    racy = (first.manifest[0], first.manifest[1], oldest)  # every file in the manifest's tick
    with OutputWriter(out, record=(stats, racy)) as writer:
        assert not writer.intact("a/index.html")
        assert all(writer.intact(path) for path in SITE if path != "a/index.html")
        assert len(hashed) == len(SITE)  # hashed (each of them), and the others the same
    later = (first.manifest[0], first.manifest[1], newest + 1)  # a later tick: stats suffice
    no_hashing(monkeypatch)  # (and no file is read for it)
    with OutputWriter(out, record=(stats, later)) as writer:
        assert all(writer.intact(path) for path in SITE)  # the edit is not seen: as designed


def test_files_hashed_in_a_forked_process_are_vouched_for_and_a_later_change_still_seen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "_site"
    first = build(out, SITE)
    for path, data in SITE.items():  # as a cache restore leaves them: new inodes and ctimes
        (out / path).unlink()
        (out / path).write_bytes(data)
    time.sleep(0.1)  # (their ctimes now older than the hashing, by more than a clock tick)
    record = (first.stats, first.manifest)
    with OutputWriter(out, record=record) as checker:  # (the plan's forked copy)
        hashed = count_hashing(monkeypatch)
        (out / "feed.xml").unlink()  # changed just before the hashing: not vouched for
        (out / "feed.xml").write_bytes(SITE["feed.xml"])
        found = checker.hashed_intact(sorted(SITE))
        assert len(hashed) == len(SITE) and not checker.keep("new.html")
    assert [row[0] for row in found] == ["a/index.html", "b/index.html", "index.html"]
    with OutputWriter(out, record=record) as writer:
        hashed = count_hashing(monkeypatch)
        writer.vouch(found)
        assert writer.intact("index.html") and writer.keep("b/index.html")
        assert hashed == []  # one lstat each: their bytes were hashed in the other process
        assert writer.intact("feed.xml") and len(hashed) == 1  # (hashed here, as before)
        page = out / "a/index.html"
        page.write_bytes(SITE["a/index.html"].upper())  # same size, after it was vouched for
        assert not writer.intact("a/index.html")


def test_the_manifest_is_a_later_clock_tick_than_every_file_the_commit_wrote(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "_site"
    first = build(out, SITE)
    manifest = out / MANIFEST_NAME
    assert first.manifest is not None
    found = manifest.lstat()
    assert first.manifest == (found.st_ino, found.st_size, found.st_ctime_ns)
    assert found.st_ctime_ns > max(row[3] for row in first.stats.values())
    site = {**SITE, "index.html": b"v2", "new/index.html": b"new"}
    result = build(out, site, keep=set(SITE) - {"index.html"}, record=first.record)
    assert result.written == ["index.html", "new/index.html"]
    assert result.stats == on_disk(out, site)  # (the carried files: linked and unlinked)
    assert result.manifest is not None
    assert manifest.lstat().st_ctime_ns == result.manifest[2]
    assert result.manifest[2] > max(row[3] for row in result.stats.values())
    no_hashing(monkeypatch)  # so the next build trusts every file by its stat
    again = build(out, site, keep=set(site), record=result.record)
    assert again.unchanged == sorted(site) and not again.touched_output


def test_two_builds_of_the_same_files_anywhere_at_any_time_give_the_same_manifest(
        tmp_path: Path) -> None:
    first, second = tmp_path / "one" / "_site", tmp_path / "elsewhere" / "deep" / "out"
    made = build(first, SITE)
    time.sleep(0.05)  # a later clock tick: other mtimes
    again = build(second, dict(reversed(list(SITE.items()))))
    assert made.stats.keys() == again.stats.keys()
    assert all(made.stats[path][1] != again.stats[path][1] for path in SITE)
    data = (first / MANIFEST_NAME).read_bytes()
    assert (second / MANIFEST_NAME).read_bytes() == data and str(tmp_path).encode() not in data
    assert {p: v[0] for p, v in snapshot(first).items()} == {
        p: v[0] for p, v in snapshot(second).items()}  # (the manifest too)
    changed = build(first, {**SITE, "index.html": b"v2"}, record=made.record)
    assert (first / MANIFEST_NAME).read_bytes() != data
    build(first, SITE, record=changed.record)  # and back: the very bytes again
    assert (first / MANIFEST_NAME).read_bytes() == data


def test_stale_and_stray_files_and_folders_are_all_removed(tmp_path: Path) -> None:
    """Anything in the output the build does not write goes (a site's own files come from
    static/): a file dropped into a restored CI cache is never published, nor a `.git` or
    any other dot-folder the build did not write."""
    out = tmp_path / "_site"
    first = build(out, SITE)
    (out / "CNAME").write_text("notes.acme.test\n")
    (out / ".git" / "objects").mkdir(parents=True)
    (out / ".git" / "config").write_text("[core]\n")
    (out / ".well-known").mkdir()
    (out / "b" / "notes.txt").write_text("mine")
    (out / "b" / "hard").hardlink_to(out / "CNAME")
    (out / "link").symlink_to("/etc/hostname")
    (out / "dangling").symlink_to("nowhere")
    result = build(out, {"index.html": SITE["index.html"], "feed.xml": b"new"},
                   keep={"index.html"}, record=first.record)
    assert result.removed == [".git/config", "CNAME", "a/index.html", "b/hard", "b/index.html",
                              "b/notes.txt", "dangling", "link"]
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == [
        MANIFEST_NAME, "feed.xml", "index.html"]
    assert Path("/etc/hostname").exists()  # (a symlink is removed, never followed)


def test_an_emptied_folder_of_sitegen_is_not_kept_as_the_users(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    (out / "a/index.html").unlink()  # leaves a/ empty: still sitegen's
    build(out, {"index.html": b"x"})
    assert not (out / "a").exists()


def test_a_first_build_into_a_folder_of_other_files_is_refused_and_the_folder_kept(
        tmp_path: Path) -> None:
    out = tmp_path / "_site"
    (out / "old").mkdir(parents=True)
    (out / "old.html").write_text("someone else's")
    before = snapshot(out)
    with pytest.raises(ConfigError, match="not written by sitegen.*static/"):
        build(out, SITE)
    assert snapshot(out) == before and beside(out) == ["._site.sitegen-lock", "_site"]
    (out / "old.html").unlink()
    (out / "old").rmdir()
    build(out, SITE)  # an empty folder is fine
    assert (out / "index.html").read_bytes() == SITE["index.html"]


@pytest.mark.parametrize("place", [
    ("index.html", "file"),  # where the site writes a file
    ("a", "file"),  # where the site needs a folder
    ("feed.xml/mine.txt", "file"),  # a folder where the site writes a file
    ("feed.xml", "folder"),  # an empty folder, likewise
    ("a", "symlink"),  # a symlink where the site needs a folder: never written through
])
def test_what_was_dropped_in_the_way_of_the_new_site_is_replaced_never_written_through(
        tmp_path: Path, place: tuple[str, str]) -> None:
    out, outside = tmp_path / "_site", tmp_path / "outside"
    outside.mkdir()
    first = build(out, {"x/index.html": b"x"})
    (out / "x" / "index.html").unlink()
    rel, kind = place
    (out / rel).parent.mkdir(parents=True, exist_ok=True)
    if kind == "file":
        (out / rel).write_text("mine")
    elif kind == "folder":
        (out / rel).mkdir()
    else:
        (out / rel).symlink_to(outside, target_is_directory=True)
    build(out, SITE, keep=set(SITE), record=first.record)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == \
        sorted([*SITE, MANIFEST_NAME])
    assert all((out / path).read_bytes() == data for path, data in SITE.items())
    assert list(outside.iterdir()) == [] and not (out / "a").is_symlink()
    assert beside(out) == ["._site.sitegen-lock", "_site", "outside"]


@pytest.mark.parametrize("error", [RuntimeError("boom"), KeyboardInterrupt(), SystemExit(1)],
                         ids=lambda error: type(error).__name__)
def test_an_exception_before_or_during_the_commit_keeps_the_previous_output(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: BaseException) -> None:
    out = tmp_path / "_site"
    first = build(out, SITE)
    (out / "CNAME").write_text("mine\n")
    before = snapshot(out)
    with pytest.raises(type(error)), OutputWriter(out) as writer:
        writer.write("index.html", b"new home")
        writer.write("c/index.html", b"new page")
        raise error
    assert snapshot(out) == before and beside(out) == ["._site.sitegen-lock", "_site"]

    def fail(source: str, target: str) -> None:
        if source.endswith("feed.xml"):  # the last file carried before the swap
            raise error
        os.link(source, target, follow_symlinks=False)

    monkeypatch.setattr(tree, "link_into", fail)
    with pytest.raises(type(error)):
        build(out, {**SITE, "index.html": b"new home"}, keep=set(SITE), record=first.record)
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
    first = build(out, SITE)
    with OutputWriter(out, record=first.record) as writer:
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
    with OutputWriter(out, record=first.record) as writer:
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
def test_an_older_sitegens_output_is_written_again_whole(tmp_path: Path, version: int) -> None:
    """An older sitegen's output (its manifest's version, no record in the store) is
    sitegen's, so it is not refused; but nothing in it is trusted: written again."""
    out = tmp_path / "_site"
    build(out, SITE)
    (out / MANIFEST_NAME).write_text(
        f'{{"generator": "sitegen", "version": {version}, "files": {{\n'
        + ",\n".join(f'  "{p}": ["{sha(d)}", 1, 2]' for p, d in SITE.items()) + "\n}}\n")
    with OutputWriter(out) as writer:  # (an older sitegen's store holds no record)
        assert writer.previous_paths() == frozenset()
        assert not writer.keep("index.html")
        writer.write("index.html", SITE["index.html"])  # the same bytes: carried
        writer.write("feed.xml", b"new")
        result = writer.commit()
    assert result == WriteResult(["feed.xml"], ["index.html"], ["a/index.html", "b/index.html"],
                                 touched_output=True,
                                 stats=on_disk(out, ["feed.xml", "index.html"]))
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == [
        MANIFEST_NAME, "feed.xml", "index.html"]
    assert Manifest.from_bytes((out / MANIFEST_NAME).read_bytes()) == Manifest(
        {"feed.xml": FileEntry(sha(b"new")), "index.html": FileEntry(sha(SITE["index.html"]))})


def test_an_output_with_a_foreign_manifest_and_no_record_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    first = build(out, SITE)
    (out / MANIFEST_NAME).write_text('{"generator": "other"}')
    before = snapshot(out)
    with pytest.raises(ConfigError, match="not written by sitegen"):
        build(out, {"new.html": b"n"})
    assert snapshot(out) == before
    build(out, {"new.html": b"n"}, record=first.record)  # the store's record says whose it is
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == [
        MANIFEST_NAME, "new.html"]


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
    result = build(out, SITE, record=first.record)
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
        if out.exists():
            (out / "CNAME").write_text("x")
        with OutputWriter(out) as writer:
            for path, data in files.items():
                if previous.get(path) != data or not writer.keep(path):
                    writer.write(path, data)
            writer.commit()
            assert beside(out) == ["._site.sitegen-lock", "_site"]  # the commit's own doing
        previous = files
        assert {p: (out / p).read_bytes() for p in files} == files
        assert not (out / "CNAME").exists()
        assert beside(out) == ["._site.sitegen-lock", "_site"]


def test_the_output_must_be_a_folder_and_not_the_root_or_home(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(ConfigError, match="is a file"):
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
        first = writer.commit()
        for late in (lambda: writer.write("a.html", b"a"), writer.commit):
            with pytest.raises(BuildError, match="not open"):
                late()

    def fail(output: Path) -> None:
        raise OSError(errno.EACCES, os.strerror(errno.EACCES), str(output))

    monkeypatch.setattr(tree, "recover_leftovers", fail)
    with pytest.raises(BuildError, match="interrupted build"), OutputWriter(out):
        pass
    monkeypatch.undo()
    with OutputWriter(out, lock_timeout=0.2, record=first.record) as writer:  # released
        assert writer.previous_paths() == {"index.html"}
