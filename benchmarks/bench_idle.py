"""The one-article-changed rebuild after the machine sat idle, as a person rebuilds.

Role: `run.py` times its rebuilds back to back, with every folder of the output in
the page cache. A person edits, waits, then builds; on the development VM the page
cache no longer holds the output's folder listings after about a minute (an `lstat`
stays cheap: the inodes stay cached), and a one-article rebuild that listed every
folder took 0.8-1.3 s instead of 0.4 s (session 11); the writer now `lstat`s the
files its manifest lists instead. This script makes one generated workspace
(`--articles`, 4,000 by default), fills its content store, builds it twice and
rebuilds it once after an edit (untimed, as any earlier rebuild), then for each round
changes one article in the emulator, brings the change in with an untimed
`sitegen fetch`, sits idle for `--idle` seconds, and times
`sitegen build --offline` as a whole process, printing wall, CPU and the build's own
stage timings. With `--idle 0` it gives the back-to-back figure for comparison.
Usage:

    .venv/bin/python benchmarks/bench_idle.py [--articles 4000] [--rounds 3] [--idle 70]

It must never write inside the repository (everything lives in a temporary folder)
or reach beyond loopback.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # `python benchmarks/bench_idle.py` puts benchmarks/ first
    sys.path.insert(0, str(REPO))

from benchmarks.harness.measure import run_process  # noqa: E402
from benchmarks.harness.sites import Bench, bench_env, emulator, read_report, sitegen  # noqa: E402
from benchmarks.harness.steps import edited_copy  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--articles", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--idle", type=float, default=70.0,
                        help="seconds of idleness before each timed build (default 70)")
    options = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="sitegen-bench-idle-"))
    try:
        bench = Bench(work=work, runs=options.rounds, articles=options.articles,
                      sync_articles=options.articles, latency_ms=0, concurrency=8)
        site = bench.warm_site(options.articles)
        report = site.config.parent / "report.json"
        for label in ("first build", "second build"):
            run_process(sitegen("build", "-c", str(site.config), "--offline", "-q"),
                        label=label, env=bench_env(), timeout=900)
        walls: list[float] = []
        print(f"{options.articles} articles, {options.idle:g} s idle before each build")
        for run in range(-1, options.rounds):  # round -1: untimed, as any earlier rebuild
            edited = work / f"edit-{run + 1}.json"
            edited_copy(site.data, edited, run + 1)
            with emulator(edited, port=site.port, latency_ms=0, log=bench.log("emulator")):
                run_process(sitegen("fetch", "-c", str(site.config), "-q"),
                            label="fetch the change", env=bench_env(), timeout=900)
            if run < 0:
                run_process(sitegen("build", "-c", str(site.config), "--offline", "-q"),
                            label="an earlier rebuild", env=bench_env(), timeout=900)
                continue
            time.sleep(options.idle)
            sample = run_process(sitegen("build", "-c", str(site.config), "--offline", "-q",
                                         "--report", str(report)),
                                 label=f"rebuild #{run + 1}", env=bench_env(), timeout=900)
            data = read_report(report)
            walls.append(sample.wall)
            stages = ", ".join(f"{k} {v:.3f}" for k, v in sorted(data.get("timings", {}).items()))
            print(f"round {run + 1}: {sample.wall:.3f} s wall, CPU {sample.cpu:.3f} s, "
                  f"{data.get('pages', {}).get('written')} written; stages: {stages}")
        print(f"median {statistics.median(walls):.3f} s (min {min(walls):.3f}, "
              f"max {max(walls):.3f}) over {len(walls)} rounds")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
