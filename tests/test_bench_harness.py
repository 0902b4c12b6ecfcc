"""The benchmark harness's pure parts: Hugo content, statistics, the table, process measurement.

These are fast checks that `benchmarks/run.py` measures and reports what it claims;
the benchmark itself is a script that prints figures, never a timed test.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.harness.machine import cpu_probe  # noqa: E402
from benchmarks.harness.measure import StepFailed, last_line, run_process  # noqa: E402
from benchmarks.harness.preview import tail, with_marker  # noqa: E402
from benchmarks.harness.stats import Row, Target, format_table, row_json, summarize  # noqa: E402
from benchmarks.hugo.content import (  # noqa: E402
    assign_slugs,
    front_matter,
    is_published,
    toml_string,
    write_hugo_site,
)
from benchmarks.run import derived_rows, parse_only  # noqa: E402


def _article(i: int, **changes: Any) -> dict[str, Any]:
    article: dict[str, Any] = {
        "id": f"{i:024x}", "title": f"Article {i}", "slug": f"article-{i}",
        "description": f"About {i}", "content": f"# Heading {i}\n\nBody *{i}*.\n",
        "status": "published", "tags": ["common", f"tag-{i}"],
        "createdAt": f"2024-03-{i + 1:02d}T08:00:00.000Z",
        "updatedAt": f"2024-04-{i + 1:02d}T08:00:00.000Z",
    }
    article.update(changes)
    return article


def _five() -> dict[str, Any]:
    return {"articles": [
        _article(0),
        _article(1, slug="article-0", title='Quote " and \\ backslash'),
        _article(2, status="draft"),
        _article(3, slug="../../etc", tags=[], meta={"tags": ["from-meta"]}),
        _article(4, slug="", title="", content="only a body"),
        _article(5, status="archived"),
    ]}


def _front(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    head = text.split("+++\n")[1]
    return tomllib.loads(head)


def test_hugo_content_has_only_published_articles_with_front_matter(tmp_path: Path) -> None:
    written = write_hugo_site(_five(), tmp_path / "site", per_page=10)
    posts = sorted((tmp_path / "site" / "content" / "posts").glob("*.md"))
    assert written == 4
    assert [p.stem for p in posts] == [f"{i:024x}" for i in (0, 1, 3, 4)]
    first = _front(posts[0])
    assert first == {"title": "Article 0", "date": "2024-03-01T08:00:00.000Z",
                     "lastmod": "2024-04-01T08:00:00.000Z", "slug": "article-0",
                     "description": "About 0", "tags": ["common", "tag-0"]}
    assert posts[0].read_text(encoding="utf-8").endswith("# Heading 0\n\nBody *0*.\n\n")
    second = _front(posts[1])
    assert second["title"] == 'Quote " and \\ backslash'
    assert second["slug"] == "article-0-2"  # duplicate slug resolved as sitegen does
    assert _front(posts[2])["slug"] == "etc" and _front(posts[2])["tags"] == ["from-meta"]
    assert _front(posts[3])["slug"] == f"{4:024x}"  # no slug, no title: from the id
    config = tomllib.loads((tmp_path / "site" / "config.toml").read_text(encoding="utf-8"))
    assert config["paginate"] == 10 and config["permalinks"] == {"posts": "/:slug/"}
    assert (tmp_path / "site" / "layouts" / "_default" / "single.html").is_file()


@pytest.mark.parametrize("value", ["plain", 'q"uote', "back\\slash", "line\nbreak\ttab",
                                   "bell\x07del\x7f", "ünïcødé ✓ 😀"])
def test_toml_string_round_trips(value: str) -> None:
    assert tomllib.loads(f"x = {toml_string(value)}")["x"] == value


def test_slugs_are_unique_and_avoid_reserved_names() -> None:
    articles = [_article(i, slug=s) for i, s in enumerate(["tags", "a", "a", "A!", "page"])]
    slugs = [slug for slug, _ in assign_slugs(articles)]
    assert slugs == ["tags-2", "a", "a-2", "a-3", "page-2"]
    assert not is_published(_article(9, title="", content="  "))
    assert "tags = []" in front_matter(_article(8, tags=None), "x")


@pytest.mark.skipif(shutil.which("hugo") is None, reason="hugo is not installed")
def test_hugo_builds_the_minimal_layout_set(tmp_path: Path) -> None:
    articles = [_article(i, slug=f"post-{i}") for i in range(12)]
    write_hugo_site({"articles": articles}, tmp_path / "src", per_page=10)
    subprocess.run(["hugo", "--quiet", "--source", str(tmp_path / "src"), "--destination",
                    str(tmp_path / "out")], check=True, timeout=120, capture_output=True)
    out = tmp_path / "out"
    assert (out / "post-11" / "index.html").is_file()
    assert (out / "page" / "2" / "index.html").is_file()  # 12 articles at 10 per page
    assert (out / "tags" / "common" / "page" / "2" / "index.html").is_file()
    assert (out / "tags" / "index.html").is_file() and (out / "404.html").is_file()
    assert (out / "index.xml").read_text(encoding="utf-8").count("<item>") == 12
    assert not (out / "tags" / "common" / "index.xml").exists()  # RSS only at the root
    home = (out / "index.html").read_text(encoding="utf-8")
    assert home.count('<li><a href="/post-') == 10


def test_summary_is_median_with_min_and_max() -> None:
    summary = summarize([3.0, 1.0, 2.0, 10.0])
    assert (summary.median, summary.low, summary.high, summary.n) == (2.5, 1.0, 10.0, 4)
    assert summarize([7.0]).median == 7.0
    with pytest.raises(ValueError):
        summarize([])


def test_targets_and_table() -> None:
    assert Target("<=", 1.0).met(1.0) and not Target("<", 1.0).met(1.0)
    assert Target(">=", 10.0).met(12.0) and not Target(">=", 10.0).met(9.9)
    rows = [Row("full", "full build: wall", "s", [2.0, 1.5, 4.0], Target("<", 3.0, " s")),
            Row("full", "full build: peak RSS", "MB", [512.0, 530.0, 500.0],
                Target("<", 400.0, " MB")),
            Row("sync", "requests", "", [1234.0])]
    table = format_table(rows, [("hugo", "hugo is not on the PATH")])
    lines = table.splitlines()
    assert lines[0].split()[:3] == ["step", "measure", "median"]
    assert "2.00 s" in lines[2] and "1.50–4.00" in lines[2] and lines[2].rstrip().endswith("pass")
    assert "512 MB" in lines[3] and "MISS" in lines[3] and "< 400 MB" in lines[3]
    assert "1234" in lines[4] and "–" not in lines[4]
    assert lines[-1] == "FAILED hugo: hugo is not on the PATH"
    data = row_json(rows[1])
    assert data["pass"] is False and data["median"] == 512.0 and data["values"] == [512.0, 530.0,
                                                                                    500.0]


def test_derived_no_change_speedup_row() -> None:
    rows = [Row("hugo", "hugo build 4000 art.: wall", "s", [3.0, 2.0, 4.0]),
            Row("rebuild", "no-change rebuild --offline 4000 art.", "s", [0.5, 0.1])]
    (row,) = derived_rows(rows)
    assert row.values == [6.0, 30.0] and row.verdict == "pass"
    assert derived_rows(rows[1:]) == []


def test_derived_cold_render_row_divides_by_hugo_of_the_same_size() -> None:
    rows = [Row("hugo", "hugo build 4000 art.: wall", "s", [3.0, 2.0, 4.0]),
            Row("full", "cold render (--offline --force) 1180 art.: wall", "s", [1.0]),
            Row("full", "cold render (--offline --force) 4000 art.: wall", "s", [4.5, 6.0])]
    (row,) = derived_rows(rows)
    assert row.label == "cold render ÷ hugo full build, 4000 art."
    assert row.values == [1.5, 2.0] and row.target is not None
    assert [row.target.met(v) for v in row.values] == [True, False]
    assert derived_rows(rows[1:]) == [] and derived_rows(rows[:2]) == []


def test_only_keeps_run_order_and_refuses_unknown_steps() -> None:
    parser = argparse.ArgumentParser()
    assert parse_only("preview,sync", parser) == ["sync", "preview"]
    assert parse_only(None, parser)[0] == "sync"
    with pytest.raises(SystemExit):
        parse_only("sync,nope", parser)


def test_run_process_measures_the_child_and_reports_failures() -> None:
    sample = run_process([sys.executable, "-c", "b = bytearray(64 * 1024 * 1024); print('hi')"],
                         label="alloc")
    assert sample.output.strip() == "hi"
    assert sample.rss_mb > 64 and sample.wall > 0 and sample.cpu > 0
    with pytest.raises(StepFailed, match=r"^boom: exited with status 3: error: the cause$"):
        run_process([sys.executable, "-c",
                     "import sys; print('noise'); print('error: the cause', file=sys.stderr); "
                     "sys.exit(3)"], label="boom")
    with pytest.raises(StepFailed, match="timed out"):
        run_process([sys.executable, "-c", "import time; time.sleep(30)"], label="slow",
                    timeout=0.5)
    assert last_line("a\n\nb \n\n") == "b"


def test_marker_goes_before_body_end() -> None:
    assert with_marker("<body>x</body>", "m1") == "<body>x<!-- bench m1 --></body>"
    assert with_marker("{% block x %}{% endblock %}", "m2").endswith("<!-- bench m2 -->")
    assert tail(["a\n", "b\n", "\n", "c\n"]) == "b | c" and tail([]) == "no output"


def test_edited_copy_changes_one_published_article(tmp_path: Path) -> None:
    from benchmarks.harness.steps import edited_copy

    source = tmp_path / "ws.json"
    workspace = _five()
    source.write_text(json.dumps(workspace), encoding="utf-8")
    changed = edited_copy(source, tmp_path / "edit.json", 1)
    edited = json.loads((tmp_path / "edit.json").read_text(encoding="utf-8"))
    differing = [(a, b) for a, b in zip(workspace["articles"], edited["articles"], strict=True)
                 if a != b]
    assert len(differing) == 1
    before, after = differing[0]
    assert after["id"] == changed and after["status"] == "published"
    assert after["content"].startswith(before["content"]) and "edit number 2" in after["content"]
    newest = max(a["updatedAt"] for a in workspace["articles"])
    assert after["updatedAt"] > newest and after["updatedAt"].endswith("Z")


def test_fetch_call_count_is_read_from_the_fetch_summary() -> None:
    from benchmarks.harness.steps import _fetch_calls

    summary = ("Works: 3 agents, 997 published articles through API v2\n"
               "1013 calls; 997 detail requests made, 0 saved by the cache\n")
    assert _fetch_calls(summary) == 1013
    assert _fetch_calls("W: 0 published articles through API v2\n1 call; 0 detail requests") == 1
    with pytest.raises(StepFailed):
        _fetch_calls("W: 3 agents from the cache (no request)\n")


def test_set_aside_moves_the_output_keeping_every_file(tmp_path: Path) -> None:
    from benchmarks.harness.sites import set_aside

    output = tmp_path / "site" / "_site"
    (output / "a").mkdir(parents=True)
    (output / "a" / "index.html").write_text("page")
    lock = tmp_path / "site" / "._site.sitegen-lock"
    lock.write_text("")
    trash = tmp_path / "aside"
    set_aside(output, trash)
    set_aside(output, trash)  # nothing left to move: no error
    assert not output.exists() and lock.exists()  # the store and sitegen's own files stay
    moved = sorted(p.relative_to(trash).as_posix() for p in trash.rglob("*") if p.is_file())
    assert moved == ["0000-_site/a/index.html"]
    hugo = tmp_path / "hugo-out"
    hugo.mkdir()
    set_aside(hugo, trash)
    assert not hugo.exists() and (trash / "0001-hugo-out").is_dir()


def test_the_cpu_probe_times_its_loop() -> None:
    short, long = cpu_probe(steps=300_000, tries=2), cpu_probe(steps=3_000_000, tries=1)
    assert 0 < short < long < 60


def test_the_ab_rebuild_runs_both_versions(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks.ab_rebuild import main as ab_rebuild

    assert ab_rebuild(["--base", "HEAD", "--articles", "60", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "1 interleaved pairs, base HEAD" in out and "with re-sync" in out
    assert "base medians" in out and "new  medians" in out


def test_the_ab_rebuild_names_a_revision_git_does_not_know(
        capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks.ab_rebuild import main as ab_rebuild

    assert ab_rebuild(["--base", "no-such-revision-x", "--articles", "20"]) == 1
    assert "git archive no-such-revision-x failed" in capsys.readouterr().err


def test_the_rebuild_step_measures_both_one_changed_rebuilds(tmp_path: Path) -> None:
    from benchmarks.harness.sites import Bench
    from benchmarks.harness.steps import step_rebuild

    bench = Bench(work=tmp_path, runs=1, articles=40, sync_articles=0, latency_ms=0,
                  concurrency=4)
    step_rebuild(bench)
    rows = {row.label: row for row in bench.rows}
    synced, offline = rows["one-changed rebuild + re-sync 40 art."], \
        rows["one-changed rebuild --offline 40 art."]
    assert synced.target is not None and synced.target.limit == 2.0  # issue #23's floor
    assert offline.target is None and rows["no-change rebuild --offline 40 art."].target is not None
    # The change reached each build: the re-sync's through the sync, the offline one's
    # through the `sitegen fetch` before it (no page written would mean it did not).
    assert bench.details["rebuild_pages_written"]["changed"][0] > 0
    assert bench.details["rebuild_pages_written"]["fetched"][0] > 0
    assert bench.details["rebuild_pages_written"]["offline"] == [0]


def test_the_full_step_measures_warm_builds_and_the_cold_render(tmp_path: Path) -> None:
    from benchmarks.harness.sites import Bench
    from benchmarks.harness.steps import step_full

    bench = Bench(work=tmp_path, runs=2, articles=40, sync_articles=40, latency_ms=0,
                  concurrency=4)
    step_full(bench)
    rows = {row.label: row for row in bench.rows}
    assert len(rows["full build 40 art.: wall"].values) == 2
    assert len(rows["cold render (--offline --force) 40 art.: wall"].values) == 2
    assert "full build 40 art., first (bodies not yet stored)" in rows
    assert set(bench.details["cold_render_timings"]["40"]) >= {"render", "commit"}
    site = bench.warm_site(40)
    assert (site.output / "index.html").is_file()  # the last build's output, whole
    aside = sorted(p.name for p in (tmp_path / "set-aside").iterdir())
    assert len(aside) == 4 and all(name.endswith("-_site") for name in aside)  # one a build


def test_the_ab_rebuild_can_time_the_offline_build(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks.ab_rebuild import main as ab_rebuild

    assert ab_rebuild(["--base", "HEAD", "--articles", "60", "--rounds", "1", "--offline"]) == 0
    out = capsys.readouterr().out
    assert "rebuild offline (after an untimed fetch)" in out and "1 interleaved pairs" in out


def test_stop_ends_a_server_and_whatever_it_left_in_its_group() -> None:
    """A server that ignores SIGINT and SIGTERM, with a child that does too: nothing survives."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from benchmarks.harness.sites import start_server, stop

    stubborn = ("import os, signal, sys, time\n"
                "for s in (signal.SIGINT, signal.SIGTERM): signal.signal(s, signal.SIG_IGN)\n"
                "child = os.fork()\n"
                "if child: print(child, flush=True)\n"
                "time.sleep(600)\n")
    server = start_server([sys.executable, "-c", stubborn], stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    child = int(server.stdout.readline())
    server.stdout.close()
    stop(server, grace=0.5)
    assert server.poll() is not None
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)  # the child is the server's, not ours: it is gone once killed
        except ProcessLookupError:
            break
        if _reaped_zombie(child):
            break
        time.sleep(0.05)
    else:
        os.kill(child, signal.SIGKILL)
        raise AssertionError("the server's child outlived stop()")


def _reaped_zombie(pid: int) -> bool:
    """True when *pid* is a zombie (killed, waiting for init to reap it)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().split(") ", 1)[1].startswith("Z")
    except (OSError, IndexError):
        return True


def test_the_hostile_benchmark_runs_at_a_small_size() -> None:
    """bench_hostile.py (#25: 10,000 tags, 16,000 equal slugs) at a tiny size, so it cannot
    rot unseen (it stopped with a TypeError when the sync began taking the store)."""
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_hostile.py"), "--small", "5",
         "--tags", "60", "--articles", "30"],
        capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.strip().splitlines()[-4:]]
    assert [row[0] for row in rows] == ["normal", "one", "normal", "30"]
    assert int(rows[1][-1]) > int(rows[0][-1])  # the 50 tags kept each have a page
    assert rows[2][-1] == rows[3][-1]  # equal slugs: as many pages, under other names
