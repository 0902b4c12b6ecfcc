"""The writer's spare tree: a recycled staging folder gives exactly the tree a fresh one gives."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitegen.emit import survey as survey_module
from sitegen.emit import writer as writer_module
from sitegen.emit.manifest import MANIFEST_NAME
from sitegen.emit.writer import OutputWriter, WriteResult
from sitegen.errors import BuildError

#: Whether `build` has the writer survey its trees in a child process (both ways tested).
SURVEYED = {"on": False}


@pytest.fixture(autouse=True)
def _survey_small_sites(monkeypatch: pytest.MonkeyPatch) -> None:
    """These sites are tiny: let the writer survey them all the same when asked, and wait
    for the child however slow this machine is now (so the surveyed path is the one run)."""
    monkeypatch.setattr(writer_module, "SURVEY_MIN_MANIFEST", 0)
    monkeypatch.setattr(survey_module, "WAIT_SECONDS", 30.0)


@pytest.fixture(params=[False, True], ids=["walked", "surveyed"])
def either_way(request: pytest.FixtureRequest) -> Iterator[None]:
    """Run the test with the writer walking its trees, then with a survey."""
    SURVEYED["on"] = request.param
    yield
    SURVEYED["on"] = False


def build(output: Path, files: dict[str, bytes], *, keep: set[str] | None = None,
          spare: bool = True, survey: bool | None = None) -> WriteResult:
    """Write *files* (reusing those in *keep* by input hash) with the spare tree on."""
    survey = SURVEYED["on"] if survey is None else survey
    with OutputWriter(output, keep_spare=spare) as writer:
        if survey and (output / MANIFEST_NAME).exists():
            assert writer.start_survey(), "the survey did not start"
        for path, data in files.items():
            input_hash = "h-" + hashlib.sha1(data).hexdigest()
            if keep is not None and path in keep and writer.keep(path, input_hash):
                continue
            writer.write(path, data, input_hash=input_hash)
        return writer.commit()


def tree(root: Path) -> dict[str, str]:
    """Every entry under *root*: a file's bytes (hashed), a symlink's target, or a folder."""
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[rel] = "-> " + os.readlink(path)
        elif path.is_dir():
            found[rel] = "dir"
        else:
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def spare_of(out: Path) -> Path:
    return out.parent / f".{out.name}.sitegen-spare"


SITE = {
    "index.html": b"<h1>home</h1>",
    "a/index.html": b"<h1>a</h1>",
    "b/deep/index.html": b"<h1>b</h1>",
    "feed.xml": b"<feed/>",
}


def test_the_swapped_out_tree_becomes_the_spare_and_is_recycled(tmp_path: Path,
                                                                either_way: None) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    assert not spare_of(out).exists()  # the first build had no previous tree
    build(out, {**SITE, "index.html": b"v2"}, keep=set(SITE))
    assert spare_of(out).is_dir()
    kept = (out / "a" / "index.html").stat()
    assert (spare_of(out) / "a" / "index.html").stat().st_ino == kept.st_ino
    build(out, {**SITE, "index.html": b"v3"}, keep=set(SITE))
    assert (out / "index.html").read_bytes() == b"v3"
    after = (out / "a" / "index.html").stat()
    assert (after.st_ino, after.st_mtime_ns) == (kept.st_ino, kept.st_mtime_ns)
    pictures = ["._site.sitegen-pictures"] if SURVEYED["on"] else []  # a surveyed commit's
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "._site.sitegen-lock", *pictures, "._site.sitegen-spare", "_site"]


def test_stale_spare_files_and_folders_are_pruned(tmp_path: Path, either_way: None) -> None:
    out = tmp_path / "_site"
    build(out, {**SITE, "old/page/index.html": b"old"})
    build(out, {**SITE, "old/page/index.html": b"old2"}, keep=set(SITE))
    build(out, {**SITE, "index.html": b"v3"}, keep=set(SITE))
    assert not (out / "old").exists()
    build(out, {**SITE, "index.html": b"v4"}, keep=set(SITE))
    fresh = tmp_path / "fresh"
    build(fresh, {**SITE, "index.html": b"v4"}, spare=False)
    assert tree(out) == tree(fresh)


def test_user_files_and_empty_folders_survive_and_symlinks_are_never_followed(
        tmp_path: Path, either_way: None) -> None:
    out, outside = tmp_path / "_site", tmp_path / "outside"
    outside.mkdir()
    build(out, SITE)
    (out / "CNAME").write_text("example.test\n")
    (out / "keep-me").mkdir()
    (out / "evil").symlink_to(outside, target_is_directory=True)
    build(out, {**SITE, "index.html": b"v2"}, keep=set(SITE))
    # the spare now holds the user's symlink; the site then claims that path
    (out / "evil").unlink()
    build(out, {**SITE, "evil/index.html": b"page"}, keep=set(SITE))
    build(out, {**SITE, "evil/index.html": b"page2"}, keep=set(SITE))
    assert list(outside.iterdir()) == []
    assert (out / "evil").is_dir() and not (out / "evil").is_symlink()
    assert (out / "CNAME").read_text() == "example.test\n"
    assert (out / "keep-me").is_dir()


def test_a_spare_file_where_a_folder_goes_and_the_reverse(tmp_path: Path, either_way: None) -> None:
    out = tmp_path / "_site"
    first = {"x": b"file", "y/index.html": b"folder"}
    second = {"x/index.html": b"now a folder", "y": b"now a file"}
    build(out, first)
    build(out, {**first, "z": b"1"})
    build(out, second)  # the spare is `first`'s tree: both shapes are in the way
    assert tree(out) == {"x": "dir", "x/index.html": hashlib.sha256(b"now a folder").hexdigest(),
                         "y": hashlib.sha256(b"now a file").hexdigest(),
                         MANIFEST_NAME: tree(out)[MANIFEST_NAME]}


def test_a_tampered_spare_is_repaired_not_trusted(tmp_path: Path, either_way: None) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    build(out, {**SITE, "index.html": b"v2"}, keep=set(SITE))
    spare = spare_of(out)
    (spare / "a" / "index.html").unlink()
    (spare / "a" / "index.html").write_bytes(b"defaced")  # a new inode with other bytes
    (spare / "junk.html").write_bytes(b"junk")
    (spare / "feed.xml").unlink()
    (spare / "feed.xml").symlink_to("/etc/passwd")
    build(out, {**SITE, "index.html": b"v3"}, keep=set(SITE))
    assert (out / "a" / "index.html").read_bytes() == SITE["a/index.html"]
    assert (out / "feed.xml").read_bytes() == SITE["feed.xml"]
    assert not (out / "feed.xml").is_symlink() and not (out / "junk.html").exists()


def test_a_killed_builds_staging_is_recycled_safely(tmp_path: Path, either_way: None) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    staging = tmp_path / "._site.sitegen-staging"
    (staging / "a").mkdir(parents=True)
    (staging / "a" / "index.html").write_bytes(b"half-writ")
    (staging / "stale.html").write_bytes(b"stale")
    build(out, {**SITE, "index.html": b"v2"}, keep=set(SITE))
    assert not staging.exists()
    fresh = tmp_path / "fresh"
    build(fresh, {**SITE, "index.html": b"v2"}, spare=False)
    assert tree(out) == tree(fresh)


def test_a_failed_build_keeps_the_output_and_returns_the_staging_to_spare(
        tmp_path: Path, either_way: None) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    build(out, {**SITE, "index.html": b"v2"}, keep=set(SITE))
    before = tree(out)
    with pytest.raises(BuildError), OutputWriter(out, keep_spare=True) as writer:
        writer.write("index.html", b"v3")
        writer.write("index.html", b"twice")
    assert tree(out) == before
    assert spare_of(out).is_dir() and not (tmp_path / "._site.sitegen-staging").exists()


PATHS = st.sampled_from(["index.html", "a/index.html", "a", "a/b/index.html", "b/index.html",
                         "c/d/e.html", "c", "feed.xml", "c/d"])
SITES = st.dictionaries(PATHS, st.sampled_from([b"1", b"2", b"3"]), min_size=1, max_size=6)


def _consistent(files: dict[str, bytes]) -> bool:
    """No path is both a file and a folder of the same site."""
    return not any(other.startswith(path + "/") for path in files for other in files)


@settings(max_examples=40, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(SITES.filter(_consistent), min_size=1, max_size=5), st.booleans())
def test_any_sequence_of_builds_equals_a_fresh_build(sites: list[dict[str, bytes]],
                                                     survey: bool) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        out = root / "_site"
        for files in sites:
            build(out, files, keep=set(files), survey=survey)
            fresh = root / "fresh"
            build(fresh, files, spare=False, survey=False)
            assert tree(out) == tree(fresh)
            shutil.rmtree(fresh)


def test_the_spare_is_ignored_by_git_and_the_marker_never_reaches_the_output(
        tmp_path: Path, either_way: None) -> None:
    out = tmp_path / "_site"
    build(out, SITE)
    build(out, {**SITE, "index.html": b"v2"}, keep=set(SITE))
    assert (spare_of(out) / ".gitignore").read_text().splitlines()[-1] == "*"
    build(out, {**SITE, "index.html": b"v3"}, keep=set(SITE))
    assert not (out / ".gitignore").exists()
    # a user's own .gitignore in the output is carried, and never written through
    (out / ".gitignore").write_text("mine\n")
    build(out, {**SITE, "index.html": b"v4"}, keep=set(SITE))
    build(out, {**SITE, "index.html": b"v5"}, keep=set(SITE))
    assert (out / ".gitignore").read_text() == "mine\n"
    assert (spare_of(out) / ".gitignore").read_text() == "mine\n"
