"""Render workers staging fresh files themselves (OutputWriter.worker_staging / FreshStager)."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
from pathlib import Path

import pytest

from sitegen.emit.tree import FreshStager, stage_new_file
from sitegen.emit.writer import OutputWriter
from sitegen.errors import BuildError


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def stage(stager: FreshStager, writer: OutputWriter, path: str, data: bytes) -> bool:
    """What a worker and then the parent do for one page."""
    if stager.stage(path, data, digest(data)):
        writer.record_staged(path, digest(data), input_hash="i")
        return True
    writer.write_hashed(path, data, digest(data), input_hash="i")
    return False


def test_staged_files_are_committed_as_if_the_writer_wrote_them(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    files = {"index.html": b"home", "a/b/c/index.html": b"deep", "a/x.html": b"x"}
    with OutputWriter(out, keep_spare=True) as writer:
        stager = writer.worker_staging()
        assert stager is not None
        assert all(stage(stager, writer, path, data) for path, data in files.items())
        writer.write("a/b/late.txt", b"parent")  # the parent writes into a worker's folder
        result = writer.commit()
    assert result.written == sorted([*files, "a/b/late.txt"])
    for path, data in files.items():
        assert (out / path).read_bytes() == data
    with OutputWriter(out) as again:
        entry = again.previous.get("a/b/c/index.html")
        assert entry is not None and entry.sha256 == digest(b"deep")
        assert entry.input_hash == "i"
    assert not list(tmp_path.glob(".*staging*"))


def test_unchanged_bytes_and_claimed_paths_go_back_to_the_parent(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    with OutputWriter(out) as writer:
        writer.write("same.html", b"same")
        writer.write("kept.html", b"kept", input_hash="k")
        writer.commit()
    inode = (out / "same.html").stat().st_ino
    with OutputWriter(out) as writer:
        assert writer.keep("kept.html", "k")
        stager = writer.worker_staging()
        assert stager is not None
        assert not stager.stage("same.html", b"same", digest(b"same"))
        assert not stager.stage("kept.html", b"other", digest(b"other"))
        assert stager.stage("new.html", b"new", digest(b"new"))
        writer.record_staged("new.html", digest(b"new"))
        writer.write_hashed("same.html", b"same", digest(b"same"))
        result = writer.commit()
    assert result.written == ["new.html"]
    assert result.unchanged == ["kept.html", "same.html"]
    assert (out / "same.html").stat().st_ino == inode


def test_no_worker_staging_over_an_adopted_spare_tree(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    for text in (b"one", b"two"):
        with OutputWriter(out, keep_spare=True) as writer:
            writer.write("index.html", text)
            writer.commit()
    assert (tmp_path / "._site.sitegen-spare").is_dir()
    with OutputWriter(out, keep_spare=True) as writer:
        assert writer.worker_staging() is None
        writer.write("index.html", b"three")
        writer.commit()
    assert (out / "index.html").read_bytes() == b"three"


def test_a_path_staged_twice_fails_by_name(tmp_path: Path) -> None:
    with OutputWriter(tmp_path / "_site") as writer:
        stager = writer.worker_staging()
        assert stager is not None
        assert stager.stage("tag/x/index.html", b"1", digest(b"1"))
        with pytest.raises(BuildError, match="'tag/x/index.html' was produced twice"):
            stager.stage("tag/x/index.html", b"2", digest(b"2"))


@pytest.mark.parametrize(("first", "second"), [("x", "x/index.html"), ("x/index.html", "x")])
def test_a_file_and_a_folder_of_the_same_name_fail(tmp_path: Path, first: str,
                                                   second: str) -> None:
    with OutputWriter(tmp_path / "_site") as writer:
        stager = writer.worker_staging()
        assert stager is not None
        assert stager.stage(first, b"1", digest(b"1"))
        with pytest.raises(BuildError, match=f"{second!r}"):
            stager.stage(second, b"2", digest(b"2"))


def test_unsafe_paths_are_refused_in_the_worker_too(tmp_path: Path) -> None:
    with OutputWriter(tmp_path / "_site") as writer:
        stager = writer.worker_staging()
        assert stager is not None
        with pytest.raises(BuildError, match="refusing"):
            stager.stage("../escape.html", b"x", digest(b"x"))
    assert not (tmp_path / "escape.html").exists()


def test_a_failed_build_leaves_the_output_and_no_staging(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    with OutputWriter(out) as writer:
        writer.write("index.html", b"old")
        writer.commit()
    with pytest.raises(RuntimeError), OutputWriter(out) as writer:
        stager = writer.worker_staging()
        assert stager is not None
        stage(stager, writer, "index.html", b"new")
        stage(stager, writer, "fresh/index.html", b"new")
        raise RuntimeError("a worker failed")
    assert (out / "index.html").read_bytes() == b"old"
    assert not (out / "fresh").exists()
    assert not list(tmp_path.glob(".*staging*"))


def _stage_in_child(stager: FreshStager, path: str) -> str:
    try:
        stager.stage(path, path.encode(), digest(path.encode()))
    except BuildError as error:
        return str(error)
    return "ok"


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork")
def test_forked_workers_share_folders_and_catch_duplicates(tmp_path: Path) -> None:
    paths = [f"t/{n % 7}/p{n}/index.html" for n in range(60)] + ["t/1/p1/index.html"]
    with OutputWriter(tmp_path / "_site") as writer:
        stager = writer.worker_staging()
        assert stager is not None
        with multiprocessing.get_context("fork").Pool(3) as pool:
            outcomes = pool.starmap(_stage_in_child, [(stager, p) for p in paths])
    assert outcomes.count("ok") == 60
    failures = [o for o in outcomes if o != "ok"]
    assert failures == ["the output path 't/1/p1/index.html' was produced twice in one build"]


def test_stage_new_file_makes_folders_once_and_records_them(tmp_path: Path) -> None:
    staging = tmp_path / "s"
    staging.mkdir()
    made = {os.fspath(staging)}
    stage_new_file(os.fspath(staging), "a/b/c.html", b"c", made)
    assert (staging / "a/b/c.html").read_bytes() == b"c"
    assert {os.fspath(staging / "a"), os.fspath(staging / "a/b")} <= made
    stage_new_file(os.fspath(staging), "a/b/d.html", b"d", made)
    assert sorted(os.listdir(staging / "a/b")) == ["c.html", "d.html"]
