"""The pictures a commit leaves: the next survey from them equals a walk, and misses nothing."""

from __future__ import annotations

import hashlib
import marshal
import os
import shutil
import time
from pathlib import Path

import pytest

from sitegen.emit import pictures
from sitegen.emit import survey as sv
from sitegen.emit import writer as writer_module
from sitegen.emit.manifest import MANIFEST_NAME
from sitegen.emit.writer import OutputWriter

SITE = {"index.html": b"home", "a/index.html": b"a", "a/b/c/index.html": b"deep",
        "feed.xml": b"<feed/>", "tags/x/page/2/index.html": b"x2"}


@pytest.fixture(autouse=True)
def _surveyed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Survey these tiny sites, wait for the child however slow the machine is, and call
    no folder racy that was written before the record was taken (the builds here follow
    one another within milliseconds; `test_a_racy_folder_is_listed_again` covers racy)."""
    monkeypatch.setattr(writer_module, "SURVEY_MIN_MANIFEST", 0)
    monkeypatch.setattr(sv, "WAIT_SECONDS", 30.0)
    monkeypatch.setattr(sv, "RACY_NS", 0)


def build(output: Path, files: dict[str, bytes], keep: bool = True,
          survey: bool = True) -> None:
    with OutputWriter(output, keep_spare=True) as writer:
        if survey and (output / MANIFEST_NAME).exists():
            assert writer.start_survey(), "the survey did not start"
        for path, data in files.items():
            input_hash = "h-" + hashlib.sha1(data).hexdigest()
            if keep and writer.keep(path, input_hash):
                continue
            writer.write(path, data, input_hash=input_hash)
        writer.commit()


def built_three_times(tmp_path: Path) -> tuple[Path, Path]:
    """An output and its spare after three surveyed builds (the last two recorded)."""
    out = tmp_path / "_site"
    build(out, SITE)
    build(out, {**SITE, "index.html": b"v2"})
    build(out, {**SITE, "index.html": b"v3", "new/index.html": b"n"})
    time.sleep(0.03)  # later changes get later mtimes, whatever the clock's granularity
    return out, tmp_path / "._site.sitegen-spare"


def walked(root: Path) -> tuple[dict[str, tuple[int, int, int]], dict[str, tuple[int, int]]]:
    """Every non-folder entry's (size, mtime_ns, inode), every folder's (mtime_ns, inode)."""
    files: dict[str, tuple[int, int, int]] = {}
    top = root.lstat()
    folders = {"": (top.st_mtime_ns, top.st_ino)}
    for path in root.rglob("*"):
        rel = path.relative_to(root).as_posix()
        st = path.lstat()
        if path.is_dir() and not path.is_symlink():
            folders[rel] = (st.st_mtime_ns, st.st_ino)
        else:
            files[rel] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return files, folders


def no_walks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any whole-tree walk of the survey fail the test."""
    def refuse(*args: object) -> None:
        raise AssertionError("the survey walked a whole tree")

    monkeypatch.setattr(sv, "picture_output", refuse)
    monkeypatch.setattr(sv, "picture_spare", refuse)


def surveyed(out: Path, spare: Path) -> sv.Survey:
    return sv.take_survey(os.fspath(out), os.fspath(spare), None)


def test_a_surveyed_commit_records_both_trees_as_they_are(tmp_path: Path) -> None:
    out, spare = built_three_times(tmp_path)
    live, spared = pictures.load_records(os.fspath(out))
    assert live is not None and spared is not None
    files, folders = walked(out)
    assert live.folders == folders
    assert set(live.files) == set(files)
    top = out.lstat()
    assert live.identity == (top.st_dev, top.st_ino)
    files, folders = walked(spare)
    assert set(spared.folders) == set(folders)
    regular = {rel: st[2] for rel, st in files.items() if rel != ".gitignore"}
    assert {rel: ino for rel, ino in spared.files.items() if rel != ".gitignore"} == regular


def test_the_survey_from_the_records_equals_a_walk_and_walks_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out, spare = built_three_times(tmp_path)
    expected_output = sv.picture_output(os.fspath(out), time.time_ns())
    expected_spare = sv.picture_spare(os.fspath(spare))
    assert expected_output is not None and expected_spare is not None
    no_walks(monkeypatch)
    found = surveyed(out, spare)
    assert found.output is not None and found.spare is not None
    assert found.output.files == expected_output.files
    assert found.output.folders == expected_output.folders
    assert found.spare.files == expected_spare.files
    assert sorted(found.spare.folders) == sorted(expected_spare.folders)
    assert found.spare.odd == expected_spare.odd == []


def test_every_change_made_since_the_commit_is_found(tmp_path: Path) -> None:
    out, spare = built_three_times(tmp_path)
    # the user works in the output between two builds
    (out / "CNAME").write_text("example.test\n")
    (out / "a" / "b" / "c" / "note.txt").write_text("deep")
    (out / ".well-known" / "acme").mkdir(parents=True)
    (out / ".well-known" / "acme" / "token").write_bytes(b"t")
    (out / "feed.xml").write_bytes(b"edited in place")  # same folder listing, new stat
    shutil.rmtree(out / "tags")
    (out / "empty").mkdir()
    # and something (never sitegen) puts things in the spare
    (spare / "a" / "stray.html").write_bytes(b"stray")
    (spare / "odd").symlink_to("/etc")
    found = surveyed(out, spare)
    assert found.output is not None and found.spare is not None
    files, folders = walked(out)
    assert found.output.files == files
    assert found.output.folders == folders
    expected_spare = sv.picture_spare(os.fspath(spare))
    assert expected_spare is not None
    assert found.spare.files == expected_spare.files
    assert sorted(found.spare.folders) == sorted(expected_spare.folders)
    assert found.spare.odd == ["odd"]


def test_a_racy_folder_is_listed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out, spare = built_three_times(tmp_path)
    live, _ = pictures.load_records(os.fspath(out))
    assert live is not None
    # A file added within the same timestamp as the recorded one: the folder's mtime
    # does not move. Only the racy rule can catch it.
    mtime, _ = live.folders["a"]
    (out / "a" / "same-tick.txt").write_text("x")
    os.utime(out / "a", ns=(mtime, mtime))
    monkeypatch.setattr(sv, "RACY_NS", live.checked_ns - mtime + 1)  # "a" is racy now
    found = surveyed(out, spare)
    assert found.output is not None
    assert "a/same-tick.txt" in found.output.files


def test_a_user_file_added_between_builds_is_carried_into_the_next_output(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out, spare = built_three_times(tmp_path)
    (out / "a" / "b" / "c" / "keep-me.txt").write_text("mine")
    (out / "CNAME").write_text("example.test\n")
    no_walks(monkeypatch)
    build(out, {**SITE, "index.html": b"v4", "new/index.html": b"n"})
    assert (out / "a" / "b" / "c" / "keep-me.txt").read_text() == "mine"
    assert (out / "CNAME").read_text() == "example.test\n"
    assert (out / "index.html").read_bytes() == b"v4"
    assert not (out / "tags" / "x" / "page" / "2" / "stray").exists()


def test_pages_removed_by_the_next_build_go_and_the_spare_is_pruned(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out, spare = built_three_times(tmp_path)
    no_walks(monkeypatch)
    smaller = {k: v for k, v in SITE.items() if not k.startswith("tags/")}
    build(out, smaller)
    build(out, {**smaller, "index.html": b"v5"})
    files, _ = walked(out)
    assert set(files) == {*smaller, MANIFEST_NAME}
    assert (out / "index.html").read_bytes() == b"v5"


@pytest.mark.parametrize("damage", ["garbage", "wrong format", "path outside", "cut short"])
def test_a_damaged_record_is_no_record(tmp_path: Path, damage: str) -> None:
    out, spare = built_three_times(tmp_path)
    path = Path(pictures.record_path(os.fspath(out)))
    data = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"\x00not marshal data")
    elif damage == "wrong format":
        _, live, spared = marshal.loads(data)
        path.write_bytes(marshal.dumps((pictures.RECORD_FORMAT + 1, live, spared)))
    elif damage == "path outside":
        form, live, spared = marshal.loads(data)
        live[3]["../outside.txt"] = 0
        spared[2]["a/../../x"] = (1, 2)
        path.write_bytes(marshal.dumps((form, live, spared)))
    else:
        path.write_bytes(data[: len(data) // 2])
    assert pictures.load_records(os.fspath(out)) == (None, None)
    found = surveyed(out, spare)  # walks instead
    assert found.output is not None
    assert found.output.files == walked(out)[0]


def test_a_record_of_another_folder_is_not_used(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    out, spare = built_three_times(tmp_path)
    moved = tmp_path / "moved"
    os.rename(out, moved)
    shutil.copytree(moved, out, symlinks=True)  # same names, other folders
    (out / "extra.txt").write_text("x")
    os.utime(out, ns=(1, 1))
    walks: list[str] = []
    real = sv.picture_output

    def counted(output: str, started_ns: int) -> sv.OutputPicture | None:
        walks.append(output)
        return real(output, started_ns)

    monkeypatch.setattr(sv, "picture_output", counted)
    found = surveyed(out, spare)
    assert walks == [os.fspath(out)]
    assert found.output is not None and "extra.txt" in found.output.files


def test_a_commit_without_pictures_forgets_the_old_ones(tmp_path: Path) -> None:
    out, _ = built_three_times(tmp_path)
    path = Path(pictures.record_path(os.fspath(out)))
    assert path.exists()
    build(out, {**SITE, "index.html": b"walked"}, survey=False)
    assert not path.exists()
    assert (out / "index.html").read_bytes() == b"walked"


def test_the_commit_takes_the_spare_folders_from_the_survey_and_stale_ones_are_relisted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out, spare = built_three_times(tmp_path)
    looked: list[str] = []
    recording = {"on": False}
    real_lstat = os.lstat
    real_record = OutputWriter._staging_record

    def counting(path: str, *args: object, **kwargs: object) -> os.stat_result:
        if recording["on"]:
            looked.append(path)
        return real_lstat(path, *args, **kwargs)  # type: ignore[arg-type]

    def record(writer: OutputWriter, *args: set[str]) -> pictures.TreeRecord | None:
        recording["on"] = True
        try:
            return real_record(writer, *args)
        finally:
            recording["on"] = False

    monkeypatch.setattr(os, "lstat", counting)
    monkeypatch.setattr(OutputWriter, "_staging_record", record)
    build(out, {**SITE, "a/b/c/index.html": b"deeper", "index.html": b"v3",
                "new/index.html": b"n"})
    monkeypatch.setattr(os, "lstat", real_lstat)
    live, _ = pictures.load_records(os.fspath(out))
    assert live is not None
    files, folders = walked(out)
    assert set(live.folders) == set(folders)
    stale = {rel for rel in folders if live.folders[rel] != folders[rel]}
    assert stale == {"a/b/c"}  # written into by this build, recorded as the survey saw it
    # an lstat for the top folder and for "new", which the spare (the first build's
    # output) did not have; none for the rest, which the survey checked in the spare
    staging = tmp_path / "._site.sitegen-staging"
    assert sorted(looked) == [os.fspath(staging), os.fspath(staging / "new")]
    (out / "a" / "b" / "c" / "later.txt").write_text("mine")
    no_walks(monkeypatch)
    found = surveyed(out, spare)
    assert found.output is not None
    files, folders = walked(out)
    assert found.output.files == files
    assert found.output.folders == folders
