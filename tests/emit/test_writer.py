"""The output writer: staging, reuse, removal of only sitegen's files, refusal, locking."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from sitegen.emit import writer as writer_module
from sitegen.emit.manifest import MANIFEST_NAME, Manifest
from sitegen.emit.writer import OutputWriter
from sitegen.errors import BuildError


def snapshot(root: Path) -> dict[str, tuple[str, int, int]]:
    """Every file under *root*: (sha256, mtime_ns, inode)."""
    result: dict[str, tuple[str, int, int]] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            info = path.stat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            result[path.relative_to(root).as_posix()] = (digest, info.st_mtime_ns, info.st_ino)
    return result


def build(output: Path, files: dict[str, bytes], **kwargs: float) -> writer_module.WriteResult:
    with OutputWriter(output, **kwargs) as writer:
        for path, data in files.items():
            writer.write(path, data, input_hash="h-" + hashlib.sha1(data).hexdigest())
        return writer.commit()


SITE = {
    "index.html": b"<h1>home</h1>",
    "a/index.html": b"<h1>a</h1>",
    "b/index.html": b"<h1>b</h1>",
    "feed.xml": b"<feed/>",
}


def test_first_build_writes_every_file_and_a_manifest(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    result = build(out, SITE)
    assert result.written == sorted(SITE)
    assert result.unchanged == [] and result.removed == []
    for path, data in SITE.items():
        assert (out / path).read_bytes() == data
    manifest = Manifest.from_bytes((out / MANIFEST_NAME).read_bytes())
    assert manifest is not None and sorted(manifest.files) == sorted(SITE)
    assert not list(tmp_path.glob("*staging*")) and not list(tmp_path.glob("*-old"))


def test_no_change_rebuild_leaves_the_output_untouched(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    before = snapshot(out)
    dir_inode = out.stat().st_ino
    result = build(out, SITE)
    assert result.written == [] and result.removed == []
    assert result.unchanged == sorted(SITE)
    assert not result.touched_output
    assert snapshot(out) == before
    assert out.stat().st_ino == dir_inode


def test_one_changed_file_is_the_only_one_written(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    before = snapshot(out)
    changed = {**SITE, "a/index.html": b"<h1>a, edited</h1>"}
    result = build(out, changed)
    assert result.written == ["a/index.html"]
    assert result.touched_output
    after = snapshot(out)
    for path in SITE:
        if path != "a/index.html":
            assert after[path] == before[path], path
    assert after["a/index.html"][0] != before["a/index.html"][0]


def test_keep_reuses_by_input_hash_and_verifies_the_bytes(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    key = "h-" + hashlib.sha1(SITE["a/index.html"]).hexdigest()
    with OutputWriter(out) as writer:
        assert writer.keep("a/index.html", key)
        assert not writer.keep("b/index.html", "another-input-hash")
    (out / "a/index.html").write_bytes(b"edited by hand")
    with OutputWriter(out) as writer:
        assert not writer.keep("a/index.html", key)


def test_stale_files_are_removed_but_user_files_survive(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    (out / "CNAME").write_text("notes.acme.test\n")
    (out / ".nojekyll").write_text("")
    (out / ".git" / "objects").mkdir(parents=True)
    (out / ".git" / "config").write_text("[core]\n")
    (out / ".well-known").mkdir()
    (out / "a" / "notes.txt").write_text("mine")
    (out / "link").symlink_to("/etc/hostname")
    user = {p: v for p, v in snapshot(out).items() if p not in SITE and p != MANIFEST_NAME}
    smaller = {k: v for k, v in SITE.items() if k not in ("a/index.html", "b/index.html")}
    result = build(out, smaller)
    assert result.removed == ["a/index.html", "b/index.html"]
    assert not (out / "b").exists()
    after = snapshot(out)
    for path, (digest, mtime, _inode) in user.items():
        assert after[path][:2] == (digest, mtime), path
    assert (out / ".git" / "objects").is_dir() and (out / ".well-known").is_dir()
    assert (out / "link").is_symlink() and os.readlink(out / "link") == "/etc/hostname"
    # and they survive a further build that changes things again
    build(out, SITE)
    assert (out / "CNAME").read_text() == "notes.acme.test\n"
    assert (out / ".git" / "config").exists() and (out / "a" / "notes.txt").exists()


def test_a_first_build_into_a_folder_keeps_whatever_was_there(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    out.mkdir()
    (out / "old.html").write_text("someone else's")
    build(out, SITE)
    assert (out / "old.html").read_text() == "someone else's"
    build(out, {"index.html": b"x"})
    assert (out / "old.html").exists()


def test_an_exception_before_commit_keeps_the_previous_output(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    before = snapshot(out)
    for error in (RuntimeError("boom"), KeyboardInterrupt()):
        with pytest.raises(type(error)), OutputWriter(out) as writer:
            writer.write("index.html", b"new home")
            writer.write("c/index.html", b"new page")
            raise error
        assert snapshot(out) == before
        assert not list(tmp_path.glob(".*staging*"))


@pytest.mark.parametrize(
    "path",
    ["/etc/passwd", "../escape.html", "a/../../x", "a\\b.html", "a\x00b", "", "a//b",
     "./a", "a/", MANIFEST_NAME, "a/\x07b"],
)
def test_unsafe_paths_are_refused(tmp_path: Path, path: str) -> None:
    with OutputWriter(tmp_path / "_site") as writer, pytest.raises(BuildError, match="refusing"):
        writer.write(path, b"x")
    assert not (tmp_path / "escape.html").exists()


def test_a_path_written_twice_is_refused_by_name(tmp_path: Path) -> None:
    with OutputWriter(tmp_path / "_site") as writer:
        writer.write("tag/x/index.html", b"1")
        with pytest.raises(BuildError, match="tag/x/index.html"):
            writer.write("tag/x/index.html", b"2")


def test_a_kept_path_of_the_previous_build_is_refused_the_second_time(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    path = "a/index.html"
    with OutputWriter(out) as writer:
        assert writer.keep(path, "h-" + hashlib.sha1(SITE[path]).hexdigest())
        with pytest.raises(BuildError, match="a/index.html"):
            writer.write(path, b"again")
        with pytest.raises(BuildError, match="a/index.html"):
            writer.keep(path, "h-" + hashlib.sha1(SITE[path]).hexdigest())


def test_a_file_and_a_folder_of_the_same_name_are_refused(tmp_path: Path) -> None:
    with OutputWriter(tmp_path / "_site") as writer:
        writer.write("x", b"1")
        with pytest.raises(BuildError, match="x/index.html"):
            writer.write("x/index.html", b"2")


def test_a_tampered_manifest_cannot_reach_outside(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    data = (out / MANIFEST_NAME).read_text()
    data = data.replace('"feed.xml"', '"../victim.txt"')
    (out / MANIFEST_NAME).write_text(data)
    build(out, {"index.html": b"x"})
    assert victim.read_text() == "keep me"


def test_a_second_build_waits_for_the_lock_then_fails_clearly(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    with OutputWriter(out):
        with pytest.raises(BuildError, match="another sitegen build"):
            OutputWriter(out, lock_timeout=0.2).open()
    with OutputWriter(out, lock_timeout=0.2) as writer:  # released: free again
        writer.write("index.html", b"ok")
        writer.commit()


def test_leftovers_of_a_killed_build_are_cleaned(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    staging = tmp_path / "._site.sitegen-staging"
    (staging / "half").mkdir(parents=True)
    build(out, SITE)
    assert not staging.exists()
    # killed between the two renames of the fallback swap: the old output comes back
    old = tmp_path / "._site.sitegen-old"
    out.rename(old)
    build(out, SITE)
    assert not old.exists()
    assert (out / "a/index.html").read_bytes() == SITE["a/index.html"]


def test_the_fallback_swap_without_renameat2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sitegen.emit import tree

    monkeypatch.setattr(tree, "_renameat2_exchange", lambda first, second: False)
    out = tmp_path / "_site"
    build(out, SITE)
    (out / "CNAME").write_text("x")
    result = build(out, {**SITE, "index.html": b"changed"})
    assert result.written == ["index.html"]
    assert (out / "index.html").read_bytes() == b"changed" and (out / "CNAME").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["._site.sitegen-lock", "_site"]


def test_same_content_gives_identical_trees_wherever_they_live(tmp_path: Path) -> None:
    first, second = tmp_path / "one" / "_site", tmp_path / "elsewhere" / "deep" / "out"
    build(first, SITE)
    build(second, dict(reversed(list(SITE.items()))))
    assert {p: v[0] for p, v in snapshot(first).items()} == {
        p: v[0] for p, v in snapshot(second).items()
    }


def test_the_output_must_be_a_folder_and_not_the_root(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(BuildError, match="is a file"):
        OutputWriter(target).open()
    with pytest.raises(BuildError, match="refusing"):
        OutputWriter(Path("/"))


def test_background_cleanup_removes_the_old_tree(tmp_path: Path) -> None:
    import time

    out = tmp_path / "_site"
    build(out, SITE)
    with OutputWriter(out, background_cleanup=True) as writer:
        for path, data in SITE.items():
            writer.write(path, data + b"!")
        result = writer.commit()
    assert result.written == sorted(SITE)
    assert all((out / p).read_bytes() == d + b"!" for p, d in SITE.items())
    for _ in range(200):
        if not [p for p in tmp_path.iterdir() if "trash" in p.name]:
            break
        time.sleep(0.05)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["._site.sitegen-lock", "_site"]


def test_a_user_symlink_in_the_output_is_never_written_through(tmp_path: Path) -> None:
    out, outside = tmp_path / "_site", tmp_path / "outside"
    outside.mkdir()
    build(out, SITE)
    (out / "evil").symlink_to(outside, target_is_directory=True)
    build(out, {**SITE, "evil/index.html": b"page"})
    assert list(outside.iterdir()) == []
    assert (out / "evil").is_dir() and not (out / "evil").is_symlink()
    assert (out / "evil" / "index.html").read_bytes() == b"page"


def test_write_hashed_records_the_given_digest_and_makes_nested_folders(tmp_path: Path) -> None:
    output = tmp_path / "site"
    files = {"index.html": b"home", "a/index.html": b"a", "a/b/c/index.html": b"abc",
             "a/b/d/index.html": b"abd", "e/f/index.html": b"ef"}
    with OutputWriter(output) as writer:
        for path, data in files.items():
            writer.write_hashed(path, data, hashlib.sha256(data).hexdigest(), input_hash="i")
        writer.commit()
    assert {path: (output / path).read_bytes() for path in files} == files
    manifest = Manifest.from_bytes((output / MANIFEST_NAME).read_bytes())
    assert manifest is not None
    for path, data in files.items():
        entry = manifest.get(path)
        assert entry is not None and entry.sha256 == hashlib.sha256(data).hexdigest()


def test_a_folder_that_cannot_be_made_is_one_line_and_the_output_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    out = tmp_path / "_site"
    build(out, SITE)
    before = {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    real_mkdir, real_makedirs = os.mkdir, os.makedirs

    def no_space(path: str | os.PathLike[str]) -> None:
        if "deep" in os.fspath(path):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def mkdir(path: str, mode: int = 0o777, **kwargs: object) -> None:
        no_space(path)
        real_mkdir(path, mode)

    def makedirs(path: str, mode: int = 0o777, exist_ok: bool = False) -> None:
        no_space(path)
        real_makedirs(path, mode, exist_ok)

    monkeypatch.setattr(os, "mkdir", mkdir)
    monkeypatch.setattr(os, "makedirs", makedirs)
    with pytest.raises(BuildError) as caught:
        build(out, {**SITE, "deep/er/index.html": b"x"})
    monkeypatch.undo()
    message = str(caught.value)
    assert "\n" not in message and "'deep/er/index.html'" in message
    assert os.strerror(errno.ENOSPC) in message
    assert {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
