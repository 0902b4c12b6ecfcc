"""Benchmark sitegen against its targets and against Hugo, as whole processes.

Role: the one command (`python benchmarks/run.py --articles 4000`) that generates
workspaces with the emulator's generator in a temporary folder (on /dev/shm when there is
one), runs each step (cold sync over HTTP with latency, warm full build, cold render,
rebuilds, preview, Hugo A/B, CI rebuilds from a tar-restored cache beside Hugo and Hugo +
Pagefind, memory and model time at two sizes) several times, prints one table of medians
with min–max beside each target, and writes the same as JSON with a description of the
machine. A step that fails prints one line naming it and the others still run. It must
never write generated data inside the repository (only the JSON results file), and never
leave a process running.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # `python benchmarks/run.py` puts benchmarks/ first, not the repo
    sys.path.insert(0, str(REPO))

from benchmarks.harness.ci import step_ci  # noqa: E402
from benchmarks.harness.machine import (  # noqa: E402
    PROBE_STEPS,
    cpu_probe,
    hugo_binary,  # noqa: E402
    load_average,
    machine_info,
)
from benchmarks.harness.measure import StepFailed  # noqa: E402
from benchmarks.harness.preview import step_preview  # noqa: E402
from benchmarks.harness.scale import step_scale  # noqa: E402
from benchmarks.harness.sites import Bench  # noqa: E402
from benchmarks.harness.stats import Row, Target, format_table, row_json  # noqa: E402
from benchmarks.harness.steps import step_full, step_hugo, step_rebuild, step_sync  # noqa: E402

#: Steps in the order they run (the Hugo A/B before the rebuilds edit the 4,000 cache; `ci`
#: and `scale` build their own sites).
STEPS: dict[str, Callable[[Bench], None]] = {
    "sync": step_sync,
    "full": step_full,
    "hugo": step_hugo,
    "rebuild": step_rebuild,
    "preview": step_preview,
    "ci": step_ci,
    "scale": step_scale,
}
QUICK = {"articles": 300, "sync_articles": 100, "runs": 1, "scale_articles": 1200}
# 1,180 generated articles are ~1,000 published (the cold-sync target is stated for 1,000
# published articles); 4,000 generated are ~3,400 published, as in the render target.
DEFAULTS = {"articles": 4000, "sync_articles": 1180, "runs": 3, "scale_articles": 16000}
NO_CHANGE_SPEEDUP = 10.0
COLD_RENDER_RATIO = 1.7


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="benchmarks/run.py", description=__doc__.split("\n")[0])
    parser.add_argument("--articles", type=int, help="articles for full/rebuild/Hugo (4000)")
    parser.add_argument("--sync-articles", type=int,
                        help="articles for the cold sync, the small full build and preview "
                        "(1180: about 1,000 published)")
    parser.add_argument("--scale-articles", type=int,
                        help="the scale step's large size, beside --articles (16000)")
    parser.add_argument("--runs", type=int, help="runs per measurement (3)")
    parser.add_argument("--only", metavar="NAMES",
                        help=f"comma-separated steps among {', '.join(STEPS)}")
    parser.add_argument("--json", metavar="FILE", default=str(REPO / "benchmarks" / "results"
                                                              / "latest.json"))
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run of about a minute (300/100 articles, 1 run)")
    parser.add_argument("--latency", type=float, default=50.0, metavar="MS",
                        help="latency the emulator adds in the cold-sync step (50)")
    parser.add_argument("--concurrency", type=int, default=8, help="[api] concurrency (8)")
    parser.add_argument("--seed", type=int, default=0, help="generator seed (0)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--work-dir", metavar="DIR", default=default_work_dir(),
                        help="where the temporary work folder goes (/dev/shm when it exists: "
                        "a tmpfs, as the issue's measurements; else the system's temporary "
                        "folder)")
    parser.add_argument("--no-search", action="store_true",
                        help="[search] enabled = false in every site (Hugo indexes nothing)")
    options = parser.parse_args(argv)
    for key, value in (QUICK if options.quick else DEFAULTS).items():
        if getattr(options, key) is None:
            setattr(options, key, value)
    if min(options.runs, options.articles, options.sync_articles, options.scale_articles) < 1:
        parser.error("--runs, --articles, --sync-articles and --scale-articles must be at "
                     "least 1")
    options.steps = parse_only(options.only, parser)
    return options


def default_work_dir(shm: str = "/dev/shm") -> str:
    """*shm* when it is a writable folder (a tmpfs on Linux), else the system's temporary
    folder: the figures then leave the disk out, as the issue's measurements did."""
    if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK):
        return shm
    return tempfile.gettempdir()


def parse_only(only: str | None, parser: argparse.ArgumentParser) -> list[str]:
    """The steps to run, in run order."""
    if not only:
        return list(STEPS)
    wanted = {name.strip() for name in only.split(",") if name.strip()}
    unknown = wanted - set(STEPS)
    if unknown:
        parser.error(f"unknown step(s) {', '.join(sorted(unknown))}; choose among "
                     f"{', '.join(STEPS)}")
    return [name for name in STEPS if name in wanted]


def derived_rows(rows: Sequence[Row]) -> list[Row]:
    """Rows computed from other rows: Hugo's full build ÷ sitegen's no-change rebuild, and
    sitegen's cold render ÷ Hugo's full build of the same articles."""
    hugo = next((r for r in rows if r.step == "hugo" and r.label.startswith("hugo build")
                 and r.label.endswith(": wall")), None)
    if hugo is None:
        return []
    hugo_median = hugo.summary.median
    derived: list[Row] = []
    rebuild = next((r for r in rows if r.label.startswith("no-change rebuild --offline")), None)
    if rebuild is not None:
        derived.append(Row("rebuild", "hugo full ÷ no-change rebuild", "×",
                           [hugo_median / value for value in rebuild.values],
                           Target(">=", NO_CHANGE_SPEEDUP, "×"), note="per rebuild run"))
    size = hugo.label.removeprefix("hugo build ").removesuffix(": wall")  # "4000 art."
    cold = next((r for r in rows if r.label == f"cold render (--offline --force) {size}: wall"),
                None)
    if cold is not None:
        derived.append(Row("full", f"cold render ÷ hugo full build, {size}", "×",
                           [value / hugo_median for value in cold.values],
                           Target("<=", COLD_RENDER_RATIO, "×"),
                           note="per cold render, over Hugo's median"))
    return derived


def run_steps(bench: Bench, steps: Sequence[str]) -> list[tuple[str, str]]:
    """Run *steps*; a failing step is reported in one line and the next one still runs."""
    failures: list[tuple[str, str]] = []
    for name in steps:
        started = time.perf_counter()
        print(f"== {name} ...", file=sys.stderr, flush=True)
        try:
            STEPS[name](bench)
        except StepFailed as error:
            failures.append((name, str(error)))
        except Exception as error:  # noqa: BLE001 (a harness bug must not lose the table)
            detail = traceback.format_exception_only(type(error), error)[-1].strip()
            failures.append((name, f"unexpected error: {detail}"))
        status = "FAILED: " + failures[-1][1] if failures and failures[-1][0] == name else "ok"
        print(f"== {name} {status} ({time.perf_counter() - started:.1f} s)", file=sys.stderr,
              flush=True)
    return failures


def results_json(options: argparse.Namespace, bench: Bench, failures: Sequence[tuple[str, str]],
                 elapsed: float, machine: dict[str, Any]) -> dict[str, Any]:
    return {
        "machine": machine,
        "options": {"articles": options.articles, "sync_articles": options.sync_articles,
                    "scale_articles": options.scale_articles, "runs": options.runs,
                    "work_dir": options.work_dir, "latency_ms": options.latency,
                    "concurrency": options.concurrency, "seed": options.seed,
                    "steps": options.steps, "quick": options.quick},
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - elapsed)),
        "elapsed_s": round(elapsed, 1),
        "rows": [row_json(row) for row in bench.rows],
        "failures": [{"step": step, "message": message} for step, message in failures],
        "details": bench.details,
    }


def _loads(loads: list[float] | None) -> str:
    return "/".join(f"{value:.1f}" for value in loads) if loads else "unknown"


def report(options: argparse.Namespace, bench: Bench, failures: list[tuple[str, str]],
           started: float, load_at_start: list[float] | None, probe_at_start: float) -> None:
    """Print the table and write the JSON results file."""
    bench.rows.extend(derived_rows(bench.rows))
    elapsed = time.perf_counter() - started
    print(format_table(bench.rows, failures))
    calls = bench.details.get("sync_calls_by_endpoint")
    if calls:
        print("cold-sync requests by endpoint: " + ", ".join(f"{k} {v}" for k, v in calls.items()))
    machine = machine_info(REPO)
    machine["load_average_at_start"] = load_at_start
    machine["cpu_probe_s"] = [probe_at_start, cpu_probe()]
    print(f"total {elapsed:.0f} s on {machine['nproc']} CPUs ({machine['cpu_model']}); "
          f"load average {_loads(load_at_start)} at start, {_loads(machine['load_average'])} "
          "at end (other work on the host inflates wall times; CPU times are steadier)")
    print(f"CPU probe ({PROBE_STEPS:,}-step Python loop, best of 3): "
          f"{machine['cpu_probe_s'][0]:.3f} s at start, {machine['cpu_probe_s'][1]:.3f} s at end "
          "(the host's speed now: compare tables only at a similar figure)")
    target = Path(options.json)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(results_json(options, bench, failures, elapsed, machine),
                                 indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"results written to {target}", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    options = parse_args(sys.argv[1:] if argv is None else argv)
    started = time.perf_counter()
    load_at_start = load_average()
    probe_at_start = cpu_probe()
    Path(options.work_dir).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="sitegen-bench-", dir=options.work_dir) as tmp:
        work = Path(tmp)
        bench = Bench(work=work, runs=options.runs, articles=options.articles,
                      sync_articles=options.sync_articles, latency_ms=options.latency,
                      scale_articles=options.scale_articles,
                      concurrency=options.concurrency, seed=options.seed,
                      ab_with_hugo="hugo" in options.steps and hugo_binary() is not None,
                      search=not options.no_search)
        try:
            failures = run_steps(bench, options.steps)
        except KeyboardInterrupt:
            failures = [("run", "interrupted; the table is partial")]
        report(options, bench, failures, started, load_at_start, probe_at_start)
        if options.keep:
            kept = Path(tempfile.mkdtemp(prefix="sitegen-bench-kept-"))
            shutil.copytree(work, kept, dirs_exist_ok=True, symlinks=True)
            print(f"kept the work folder as {kept}", file=sys.stderr)
        print("removing the temporary work folder ...", file=sys.stderr, flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
