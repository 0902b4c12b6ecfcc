"""The `scale` step: peak memory and the model's time at two sizes, against Hugo's.

Role: at the run's size and the scale size (4,000 and 16,000 articles by default), time a
full build (`sitegen build --offline`: the store warm, the output empty, search on) as a
whole process, alternated run by run with Hugo's full build of the same articles and
Pagefind over Hugo's output. Peak RSS comes from `os.wait4`, which for a process gives the
largest of it and every child it waited for: Pagefind runs as sitegen's child and the render
workers are joined, so the figure is the build's largest process, Pagefind included. The
model's time is the `model` stage of each build's `--report`; each run builds both sizes
back to back. It must never compare sizes or tools across runs of different hosts' speed:
every ratio is taken within one run.
"""

from __future__ import annotations

import statistics

from benchmarks.harness.ci import hugo_and_pagefind, pages_rendered, process_row, require_hugo
from benchmarks.harness.measure import Sample, StepFailed
from benchmarks.harness.sites import Bench, Site
from benchmarks.harness.stats import Row, Target
from benchmarks.harness.steps import _build

#: The issue's must-hold limits (and goals) at the large size.
RSS_RATIO, RSS_GOAL = 0.45, 0.35
MODEL_RATIO, MODEL_GOAL = 4.5, 4.0


def model_seconds(report: dict[str, object], label: str) -> float:
    """The `model` stage's seconds in a build report, or StepFailed naming the build."""
    timings = report.get("timings")
    value = timings.get("model") if isinstance(timings, dict) else None
    if not isinstance(value, int | float):
        raise StepFailed(f"{label}: the build report has no `model` timing")
    return float(value)


def _full_build(bench: Bench, site: Site, run: int) -> tuple[Sample, float]:
    """One full build of *site* into an empty output: its sample and the model's seconds."""
    bench.discard(site.output)
    label = f"full build of {site.articles} articles #{run + 1}"
    report = bench.work / f"report-scale-{site.articles}.json"
    sample, data = _build(site.config, label, "--offline", report=report)
    if run >= 0 and pages_rendered(data) == 0:
        raise StepFailed(f"{label} rendered no page: the output was not empty")
    return sample, model_seconds(data, label)


def step_scale(bench: Bench) -> None:
    """Full builds at two sizes, alternated with Hugo (+ Pagefind): memory and model time.

    Each run builds every size, back to back (the smaller first in even runs, the larger
    first in odd ones), so the model's ratio compares two timings of one moment of the
    host, not of two moments minutes apart."""
    require_hugo()  # before any workspace is generated
    sizes = sorted({bench.articles, bench.scale_articles})
    sites = {n: bench.warm_site(n, search=True, name=f"scale-{n}") for n in sizes}
    for site in sites.values():
        _full_build(bench, site, -1)  # fills the stored bodies, as CI's first build did
    ours: dict[int, list[Sample]] = {n: [] for n in sizes}
    hugo: dict[int, list[Sample]] = {n: [] for n in sizes}
    pagefind: dict[int, list[Sample]] = {n: [] for n in sizes}
    models: dict[int, list[float]] = {n: [] for n in sizes}
    for run in range(bench.runs):
        for n in sizes if run % 2 == 0 else reversed(sizes):
            if run % 2 == 1:
                _append(hugo_and_pagefind(bench, n, run), hugo[n], pagefind[n])
            sample, model = _full_build(bench, sites[n], run)
            ours[n].append(sample)
            models[n].append(model)
            if run % 2 == 0:
                _append(hugo_and_pagefind(bench, n, run), hugo[n], pagefind[n])
    for n in sizes:
        _size_rows(bench, n, ours[n], hugo[n], pagefind[n], models[n], large=n == sizes[-1])
    if len(sizes) == 2:
        small, large = sizes
        bench.rows.append(Row(
            "scale", f"model, {large} ÷ {small} art.", "×",
            [b / a for a, b in zip(models[small], models[large], strict=True)],
            Target("<=", MODEL_RATIO, "×"),
            note=f"per run, both sizes built back to back; goal {MODEL_GOAL:g}× "
                 f"(linear: {large / small:g}×)"))


def _append(pair: tuple[Sample, Sample], hugo: list[Sample], pagefind: list[Sample]) -> None:
    hugo.append(pair[0])
    pagefind.append(pair[1])


def _size_rows(bench: Bench, n: int, ours: list[Sample], hugo: list[Sample],
               pagefind: list[Sample], models: list[float], *, large: bool) -> None:
    size = f"{n} art."
    rows = bench.rows
    rows.append(process_row("scale", f"full build {size}, search on", ours))
    rows.append(Row("scale", f"full build {size}: peak RSS", "MB", [s.rss_mb for s in ours],
                    note="the largest process, Pagefind included"))
    rows.append(process_row("scale", f"hugo full build {size}", hugo))
    rows.append(Row("scale", f"hugo + pagefind {size}: peak RSS", "MB",
                    [max(h.rss_mb, p.rss_mb) for h, p in zip(hugo, pagefind, strict=True)],
                    note=f"the larger process; pagefind alone "
                         f"{statistics.median(p.rss_mb for p in pagefind):.0f} MB"))
    rows.append(Row("scale", f"peak RSS, sitegen ÷ hugo, {size}", "×",
                    [a.rss_mb / b.rss_mb for a, b in zip(ours, hugo, strict=True)],
                    Target("<=", RSS_RATIO, "×") if large else None,
                    note=f"per run; goal ≤ {RSS_GOAL:g}×" if large else "per run"))
    rows.append(Row("scale", f"model stage, {size}", "s", models,
                    note="`timings.model` of each full build's report"))
