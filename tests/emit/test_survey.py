"""The output survey: its pictures equal a walk, and a changed output is never missed."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from sitegen.emit import survey as sv
from sitegen.emit.manifest import MANIFEST_NAME
from sitegen.emit.stamprecord import STAMP_FORMAT
from sitegen.emit.writer import OutputWriter

OLD_NS = 1_600_000_000_123_456_789  # a past mtime with a sub-second part (not racy)


def make_tree(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)


def age(root: Path) -> None:
    """Give every folder under *root* (and itself) an old, non-racy mtime."""
    for folder in [root, *(p for p in root.rglob("*") if p.is_dir() and not p.is_symlink())]:
        os.utime(folder, ns=(OLD_NS, OLD_NS))


def walked(root: Path) -> tuple[dict[str, tuple[int, int, int]], set[str]]:
    """Every non-folder entry's (size, mtime_ns, inode) and every folder, by a plain walk."""
    files: dict[str, tuple[int, int, int]] = {}
    folders = {""}
    for path in root.rglob("*"):
        rel = path.relative_to(root).as_posix()
        st = path.lstat()
        if path.is_dir() and not path.is_symlink():
            folders.add(rel)
        else:
            files[rel] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return files, folders


SITE = {"index.html": b"home", "a/index.html": b"a", "a/b/c/index.html": b"deep",
        "feed.xml": b"<feed/>", "tags/x/page/2/index.html": b"x2"}


def test_the_output_picture_is_what_a_walk_sees(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    make_tree(out, SITE)
    (out / "empty").mkdir()
    (out / "link").symlink_to(out / "a", target_is_directory=True)
    picture = sv.picture_output(os.fspath(out), time.time_ns())
    assert picture is not None
    files, folders = walked(out)
    assert picture.files == files
    assert set(picture.folders) == folders
    assert "link" in picture.files and "link/index.html" not in picture.files  # not followed
    assert sv.picture_output(os.fspath(tmp_path / "missing"), time.time_ns()) is None


def test_recheck_finds_every_change_made_after_the_survey(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    make_tree(out, SITE)
    (out / "gone").mkdir()
    (out / "gone" / "deep").mkdir()
    (out / "gone" / "deep" / "f").write_bytes(b"f")
    (out / "becomes-file").mkdir()
    age(out)
    picture = sv.picture_output(os.fspath(out), time.time_ns())
    assert picture is not None
    # the user works in the output while the build runs
    (out / "CNAME").write_text("example.test\n")
    (out / "a" / "b" / "c" / "note.txt").write_text("deep")
    make_tree(out, {".well-known/acme/token": b"t", ".git/objects/ab/cd": b"obj"})
    (out / "feed.xml").unlink()
    os.rename(out / "gone", tmp_path / "elsewhere")
    (out / "becomes-file").rmdir()
    (out / "becomes-file").write_bytes(b"now a file")
    checked = sv.recheck(picture, os.fspath(out))
    assert checked is not None
    files, folders = walked(out)
    assert checked.files == files
    assert set(checked.folders) == folders


def test_an_unchanged_old_output_is_not_listed_again(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "_site"
    make_tree(out, SITE)
    age(out)
    picture = sv.picture_output(os.fspath(out), time.time_ns())
    assert picture is not None
    listed: list[str] = []
    monkeypatch.setattr(sv, "_relist", lambda pic, root, rel: listed.append(rel))
    assert sv.recheck(picture, os.fspath(out)) is picture
    assert listed == []


def test_a_racy_folder_is_listed_again_even_when_its_mtime_did_not_move(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    make_tree(out, SITE)
    age(out)
    recent = time.time_ns() + 1_000_000_000  # not older than the survey: racy
    os.utime(out / "a", ns=(recent, recent))
    picture = sv.picture_output(os.fspath(out), time.time_ns())
    assert picture is not None
    # a change in the same timestamp tick: the folder's mtime ends up where it was
    (out / "a" / "user.txt").write_text("mine")
    os.utime(out / "a", ns=(recent, recent))
    checked = sv.recheck(picture, os.fspath(out))
    assert checked is not None and "a/user.txt" in checked.files


@pytest.mark.parametrize(("sub_second", "before_ns", "racy"), [
    (123_456_789, 30_000_000, True), (123_456_789, 80_000_000, False),
    (0, 1_500_000_000, True), (0, 2_500_000_000, False),  # whole seconds: a coarse clock
])
def test_which_folders_are_racy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                sub_second: int, before_ns: int, racy: bool) -> None:
    out = tmp_path / "_site"
    make_tree(out, SITE)
    age(out)
    mtime = 1_700_000_000_000_000_000 + sub_second
    os.utime(out / "a", ns=(mtime, mtime))
    picture = sv.picture_output(os.fspath(out), mtime + before_ns)
    assert picture is not None
    listed: list[str] = []
    monkeypatch.setattr(sv, "_relist", lambda pic, root, rel: listed.append(rel))
    sv.recheck(picture, os.fspath(out))
    assert listed == (["a"] if racy else [])


def test_many_changed_folders_mean_one_new_walk(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    make_tree(out, {f"p{n}/index.html": b"x" for n in range(sv.MAX_RELISTS + 5)})
    age(out)
    picture = sv.picture_output(os.fspath(out), time.time_ns())
    assert picture is not None
    for n in range(sv.MAX_RELISTS + 5):
        (out / f"p{n}" / "extra").write_bytes(b"e")
    checked = sv.recheck(picture, os.fspath(out))
    assert checked is not None and checked is not picture
    assert checked.files == walked(out)[0]


def written_site(out: Path) -> None:
    """SITE written at *out* by the writer (so it has a manifest)."""
    with OutputWriter(out) as writer:
        for rel, data in SITE.items():
            writer.write(rel, data)
        writer.commit()


def test_output_entries_match_the_writers_own_walk(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    written_site(out)
    make_tree(out, {"CNAME": b"c", "a/user.txt": b"u", ".git/HEAD": b"ref"})
    (out / "empty" / "nested").mkdir(parents=True)
    with OutputWriter(out) as writer:
        expected = writer._scan_output()
        picture = sv.picture_output(os.fspath(out), time.time_ns())
        assert picture is not None
        live, users, empties = sv.output_entries(picture, os.fspath(out), writer.previous,
                                                 MANIFEST_NAME)
    assert live == expected[0]
    assert sorted(users) == sorted(expected[1])
    assert sorted(empties) == sorted(expected[2]) == ["empty/nested"]


def test_the_findings_survive_the_trip_and_damage_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    written_site(out)
    files, _ = walked(out)
    stamp = tmp_path / "stamp.json"
    stamp.write_text(json.dumps({"format": STAMP_FORMAT, "output": os.fspath(out),
                                 "files": {rel: list(st) for rel, st in files.items()}}))
    found = sv.take_survey(os.fspath(out), os.fspath(tmp_path / "spare"), os.fspath(stamp))
    assert found.manifest is not None and set(found.manifest) == set(SITE)
    assert found.trusted == files
    assert found.output is not None and found.spare is None
    again = sv._load(sv._dump(found))
    assert again == found
    # one string per path on the writer's side too (marshal's back-references)
    assert again is not None and again.manifest is not None and again.output is not None
    live = {rel: rel for rel in again.output.files}
    assert all(live[rel] is rel for rel in again.manifest)
    assert all(live[rel] is rel for rel in again.trusted)
    data = sv._dump(found)
    assert sv._load(data[:-7]) is None
    assert sv._load(b"") is None
    import marshal
    assert sv._load(marshal.dumps((sv.SURVEY_FORMAT + 1, None, None, None, None, {}))) is None
    assert sv._load(marshal.dumps((sv.SURVEY_FORMAT, None, None, ("x", {}, {}), None, {}))) \
        is None


def test_the_spare_picture_lists_odd_entries_for_removal(tmp_path: Path) -> None:
    spare = tmp_path / "spare"
    make_tree(spare, {"a/index.html": b"a", "b.html": b"b"})
    (spare / "a" / "evil").symlink_to("/etc/passwd")
    picture = sv.picture_spare(os.fspath(spare))
    assert picture is not None
    assert set(picture.files) == {"a/index.html", "b.html"}
    assert picture.folders == ["a"] and picture.odd == ["a/evil"]
    assert picture.identity == (spare.stat().st_dev, spare.stat().st_ino)


def test_a_child_process_survey_gives_what_an_in_process_one_gives(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    make_tree(out, SITE)
    spare = tmp_path / "spare"
    make_tree(spare, {"x/index.html": b"x"})
    ahead = sv.SurveyAhead.start(os.fspath(out), os.fspath(spare), None)
    assert ahead is not None
    found = ahead.result(wait=30)
    here = sv.take_survey(os.fspath(out), os.fspath(spare), None)
    assert found is not None and here.output is not None and found.output is not None
    assert found.output.files == here.output.files
    assert found.output.folders == here.output.folders
    assert found.spare == here.spare
    assert ahead.result() is found  # collected once


def test_the_child_imports_only_what_it_needs(tmp_path: Path) -> None:
    """The child races the build from its start: it must not load what it does not use."""
    import subprocess

    out = tmp_path / "_site"
    written_site(out)
    stamp = tmp_path / "stamp.json"
    stamp.write_text(json.dumps({"format": STAMP_FORMAT, "output": os.fspath(out), "files": {}}))
    command = sv._command(os.fspath(out), os.fspath(tmp_path / "spare"), os.fspath(stamp))
    flags, program = command[1:command.index("-c") + 1], command[command.index("-c") + 1]
    probe = program.replace("sys.exit(main(sys.argv[1:]))",
                            "main(sys.argv[1:]); sys.stderr.write(' '.join(sys.modules))")
    done = subprocess.run([sys.executable, *flags, probe, *command[-3:]], capture_output=True,
                          env=sv._child_env(), check=True)
    assert sv._load(done.stdout) is not None
    loaded = set(done.stderr.decode().split())
    assert {"sitegen.emit.survey", "sitegen.emit.manifest", "json"} <= loaded
    assert not loaded & {"dataclasses", "typing", "hashlib", "runpy", "pathlib",
                         "sitegen.emit.stamp", "pydantic", "jinja2"}


def test_a_child_that_never_answers_is_given_up(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sv, "_command", lambda *args: [
        sys.executable, "-c", "import time; time.sleep(60)"])
    ahead = sv.SurveyAhead.start(os.fspath(tmp_path), os.fspath(tmp_path / "spare"), None)
    assert ahead is not None
    started = time.monotonic()
    assert ahead.result(wait=0.3) is None
    assert time.monotonic() - started < 5


def test_a_failed_or_garbled_child_means_no_survey(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    for code in ("import sys; sys.exit(3)", "import sys; sys.stdout.write('garbage')"):
        monkeypatch.setattr(sv, "_command", lambda *args, code=code: [
            sys.executable, "-c", code])
        ahead = sv.SurveyAhead.start(os.fspath(tmp_path), os.fspath(tmp_path / "spare"), None)
        assert ahead is not None and ahead.result(wait=30) is None
    monkeypatch.setattr(sv, "_command", lambda *args: [os.fspath(tmp_path / "no-such")])
    assert sv.SurveyAhead.start(os.fspath(tmp_path), os.fspath(tmp_path), None) is None


def test_a_file_the_user_adds_during_a_surveyed_build_is_carried(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sitegen.emit import writer as writer_module

    monkeypatch.setattr(writer_module, "SURVEY_MIN_MANIFEST", 0)  # survey this small site
    monkeypatch.setattr(sv, "WAIT_SECONDS", 30.0)  # however slow this machine is now
    out = tmp_path / "_site"
    _two_builds(out)
    age(out)
    with OutputWriter(out, keep_spare=True) as writer:
        assert writer.start_survey()
        assert not writer.start_survey()  # once
        assert writer._survey_result() is not None  # the picture predates what follows
        (out / "CNAME").write_text("example.test\n")
        (out / "a" / "b" / "c" / "notes.txt").write_text("mine")
        kept = [rel for rel in SITE if rel != "index.html" and writer.keep(rel, "h" + rel)]
        assert sorted(kept) == sorted(set(SITE) - {"index.html"})
        writer.write("index.html", b"v3", input_hash="hindex.html")
        writer.commit()
    assert (out / "CNAME").read_text() == "example.test\n"
    assert (out / "a" / "b" / "c" / "notes.txt").read_text() == "mine"
    assert (out / "index.html").read_bytes() == b"v3"
    assert (out / "feed.xml").read_bytes() == SITE["feed.xml"]


def test_the_surveyed_stamp_stats_are_only_those_still_on_disk(tmp_path: Path) -> None:
    import json

    out = tmp_path / "_site"
    make_tree(out, SITE)
    stats = {rel: list(sv.picture_output(os.fspath(out), 0).files[rel])  # type: ignore[union-attr]
             for rel in SITE}
    stats["feed.xml"][0] += 1  # the file changed since that build
    stamp = tmp_path / "stamp.json"
    stamp.write_text(json.dumps({"format": STAMP_FORMAT, "output": os.fspath(out), "files": stats}))
    found = sv.take_survey(os.fspath(out), os.fspath(tmp_path / "spare"), os.fspath(stamp))
    assert set(found.trusted) == set(SITE) - {"feed.xml"}
    other = sv.take_survey(os.fspath(tmp_path / "elsewhere"), os.fspath(tmp_path / "s"),
                           os.fspath(stamp))
    assert other.trusted == {}


def test_the_child_runs_this_very_sitegen(monkeypatch: pytest.MonkeyPatch) -> None:
    import sitegen

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["/elsewhere", "", "/more"]))
    path = sv._child_env()["PYTHONPATH"].split(os.pathsep)
    assert path == [os.path.dirname(os.path.dirname(os.path.abspath(sitegen.__file__))),
                    "/elsewhere", "/more"]


def test_no_survey_without_a_previous_build_or_for_a_small_one(tmp_path: Path) -> None:
    from sitegen.emit import writer as writer_module

    out = tmp_path / "_site"
    with OutputWriter(out) as writer:
        assert not writer.start_survey()  # nothing built here yet
        for rel, data in SITE.items():
            writer.write(rel, data)
        writer.commit()
    assert (out / MANIFEST_NAME).stat().st_size < writer_module.SURVEY_MIN_MANIFEST
    with OutputWriter(out) as writer:
        assert not writer.start_survey()  # five files: walked here
        assert writer.keep("index.html", "") is False
    big = {f"p{n}/index.html": b"x" * 10 for n in range(1000)}
    with OutputWriter(out) as writer:
        for rel, data in big.items():
            writer.write(rel, data)
        writer.commit()
    with OutputWriter(out) as writer:
        assert (out / MANIFEST_NAME).stat().st_size >= writer_module.SURVEY_MIN_MANIFEST
        assert writer.start_survey()  # 1,000 files


def test_a_child_still_at_work_is_given_up_and_the_writer_walks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sitegen.emit import writer as writer_module

    monkeypatch.setattr(writer_module, "SURVEY_MIN_MANIFEST", 0)
    out = tmp_path / "_site"
    written_site(out)
    (out / "CNAME").write_text("mine\n")
    monkeypatch.setattr(sv, "_command", lambda *args: [
        sys.executable, "-c", "import time; time.sleep(60)"])
    with OutputWriter(out, keep_spare=True) as writer:
        assert writer.start_survey()
        started = time.monotonic()
        kept = [rel for rel in SITE if writer.keep(rel, "")]  # needs the previous manifest
        assert time.monotonic() - started < 5 and writer._survey_result() is None
        assert kept == []
        for rel, data in SITE.items():
            writer.write(rel, data if rel != "index.html" else b"v2")
        writer.commit()
    assert (out / "index.html").read_bytes() == b"v2"
    assert (out / "CNAME").read_text() == "mine\n"


def _two_builds(out: Path) -> None:
    for version in (b"v1", b"v2"):  # the second build leaves a spare tree
        with OutputWriter(out, keep_spare=True) as writer:
            for rel, data in {**SITE, "index.html": version}.items():
                if not writer.keep(rel, "h" + rel):
                    writer.write(rel, data, input_hash="h" + rel)
            writer.commit()


def test_an_early_survey_is_taken_over_for_its_own_output_and_stamp(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A survey started before the writer opened serves the build (and a file added between
    its start and the commit is still carried over)."""
    from sitegen.emit import writer as writer_module

    monkeypatch.setattr(writer_module, "SURVEY_MIN_MANIFEST", 0)
    monkeypatch.setattr(sv, "WAIT_SECONDS", 30.0)
    out = tmp_path / "_site"
    _two_builds(out)
    age(out)
    early = writer_module.survey_early(out, "stamp.json")
    assert early is not None
    (out / "CNAME").write_text("example.test\n")  # after the survey began
    with OutputWriter(out, keep_spare=True) as writer:
        assert writer.start_survey("stamp.json", early)
        assert writer._survey is early.ahead
        assert writer._survey_result() is not None
        assert all(writer.keep(rel, "h" + rel) for rel in SITE if rel != "index.html")
        writer.write("index.html", b"v3", input_hash="hindex.html")
        writer.commit()
    early.close()  # as build_command does: a collected survey is not ended twice
    assert (out / "CNAME").read_text() == "example.test\n"
    assert (out / "index.html").read_bytes() == b"v3"


@pytest.mark.parametrize("case", ["another output", "another stamp", "a killed build"])
def test_an_early_survey_of_anything_else_is_ended(tmp_path: Path, case: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from sitegen.emit import writer as writer_module

    monkeypatch.setattr(writer_module, "SURVEY_MIN_MANIFEST", 0)
    out, other = tmp_path / "_site", tmp_path / "other"
    _two_builds(out)
    _two_builds(other)
    early = writer_module.survey_early(other if case == "another output" else out, "stamp.json")
    assert early is not None
    if case == "a killed build":  # its staging folder appears before this build opens
        (tmp_path / "._site.sitegen-staging").mkdir()
    with OutputWriter(out, keep_spare=True) as writer:
        started = writer.start_survey("other.json" if case == "another stamp" else "stamp.json",
                                      early)
        assert writer._survey is not early.ahead
        assert started == (writer._survey is not None)
    assert early.ahead._process is None  # ended, not left running


def test_no_early_survey_over_a_killed_build_or_a_small_site(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sitegen.emit import writer as writer_module

    out = tmp_path / "_site"
    _two_builds(out)
    assert writer_module.survey_early(out, None) is None  # five files: walked by the writer
    monkeypatch.setattr(writer_module, "SURVEY_MIN_MANIFEST", 0)
    (tmp_path / "._site.sitegen-old").mkdir()
    assert writer_module.survey_early(out, None) is None
    (tmp_path / "._site.sitegen-old").rmdir()
    early = writer_module.survey_early(out, None)
    assert early is not None
    early.close()


def test_keep_all_decides_every_path_as_keep_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole-site loop's fast path (a surveyed file with its trusted stat) keeps exactly
    what `keep` keeps, one path at a time and without a survey."""
    from sitegen.emit import writer as writer_module
    from sitegen.errors import BuildError

    monkeypatch.setattr(writer_module, "SURVEY_MIN_MANIFEST", 0)  # survey this small site
    monkeypatch.setattr(sv, "WAIT_SECONDS", 30.0)  # however slow this machine is now
    out = tmp_path / "_site"
    _two_builds(out)
    age(out)
    picture = sv.picture_output(os.fspath(out), 0)
    assert picture is not None
    trusted = {rel: picture.files[rel] for rel in SITE}
    (out / "feed.xml").write_bytes(b"<feed>changed by hand</feed>")  # not the trusted stat
    wanted = [(rel, "h" + rel) for rel in SITE if rel != "index.html"]
    wanted += [("index.html", "another input"), ("new/index.html", "hnew")]
    with OutputWriter(out, keep_spare=True) as writer:
        assert writer.start_survey()
        writer.trust_stats(trusted)
        missed = writer.keep_all(wanted)
        confirmed = writer.confirmed_stats()
    with OutputWriter(out, keep_spare=True) as writer:
        writer.trust_stats(trusted)
        one_by_one = [rel for rel, input_hash in wanted if not writer.keep(rel, input_hash)]
    assert missed == one_by_one == ["feed.xml", "index.html", "new/index.html"]
    assert set(confirmed) == set(SITE) - {"feed.xml", "index.html"}
    with OutputWriter(out, keep_spare=True) as writer:
        assert writer.start_survey()
        writer.trust_stats(trusted)
        with pytest.raises(BuildError, match="a/index.html"):
            writer.keep_all([("a/index.html", "ha/index.html")] * 2)
