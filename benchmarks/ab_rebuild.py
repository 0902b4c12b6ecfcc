"""A/B: the one-article-changed rebuild of this checkout against an earlier commit.

Role: on a shared host whose speed swings 1.5–2× within minutes, two whole benchmark
runs taken an hour apart cannot show a 10–20 % change. This script interleaves the
two versions instead: one generated workspace, one site folder per version (same
content store, same output), and for each round a new edit in the emulator
(`steps.edited_copy`), then both versions' `sitegen build` (re-sync and rebuild)
back to back, in alternating order. It prints the per-pair differences of wall and
CPU time, how many pairs the new code won, and both versions' medians, with the
build's own stage timings. The earlier commit's `sitegen/` is taken with
`git archive` and run from a temporary folder through `PYTHONPATH` (its dependencies
are this environment's). Usage:

    .venv/bin/python benchmarks/ab_rebuild.py --base 1894ab4 [--new REV] [--articles 4000]
        [--rounds 10] [--offline]

With `--new REV` the new side is that commit's `sitegen/` too (exported the same way),
so the working tree may change while the rounds run.

With `--offline` each round's change is brought in by `sitegen fetch` (not timed) and
`sitegen build --offline` is timed: the build alone, without the sync.

It must never write inside the repository (everything lives in a temporary folder)
or reach beyond loopback.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # `python benchmarks/ab_rebuild.py` puts benchmarks/ first
    sys.path.insert(0, str(REPO))

from benchmarks.harness.measure import StepFailed, run_process  # noqa: E402
from benchmarks.harness.sites import (  # noqa: E402
    Bench,
    bench_env,
    emulator,
    read_report,
    sitegen,
)
from benchmarks.harness.steps import edited_copy  # noqa: E402

#: The build's stages as its report names them (a stage a version lacks counts 0).
STAGES = ("fetch", "model", "plan", "render", "files", "commit")


def _export(rev: str, dest: Path) -> None:
    """The `sitegen/` package of *rev* under *dest* (raises StepFailed)."""
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", rev, "sitegen"],
                             capture_output=True, check=False)
    if archive.returncode != 0:
        raise StepFailed(f"git archive {rev} failed: "
                         f"{archive.stderr.decode(errors='replace').strip()}")
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)


def _env(pythonpath: Path | None) -> dict[str, str]:
    env = bench_env()
    env.pop("PYTHONPATH", None)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return env


def _check_code(pythonpath: Path | None, work: Path, expected: Path) -> None:
    """Make sure the version's processes import the sitegen they are meant to."""
    found = run_process([sys.executable, "-c", "import sitegen; print(sitegen.__file__)"],
                        label="locate sitegen", cwd=work, env=_env(pythonpath)).output.strip()
    if not Path(found).resolve().is_relative_to(expected.resolve()):
        raise StepFailed(f"the build would import {found}, not the code under {expected}")


def _build(config: Path, pythonpath: Path | None, work: Path, label: str,
           offline: bool = False) -> dict[str, Any]:
    env = _env(pythonpath)
    report = config.parent / "ab-report.json"
    extra = ["--offline"] if offline else []
    sample = run_process(sitegen("build", "-c", str(config), "-q", "--report", str(report),
                                 *extra),
                         label=label, cwd=work, env=env, timeout=900)
    timings = read_report(report).get("timings", {})
    return {"wall": sample.wall, "cpu": sample.cpu, **{k: timings.get(k, 0.0) for k in STAGES}}


def main(argv: list[str] | None = None) -> int:
    """Run the interleaved rounds and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the earlier commit (any git revision)")
    parser.add_argument("--new", help="the later commit (default: this checkout as it is)")
    parser.add_argument("--articles", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--offline", action="store_true",
                        help="bring each change in with `sitegen fetch` (not timed) and time "
                             "`sitegen build --offline`: the build alone")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="sitegen-ab-") as tmp:
        work = Path(tmp)
        try:
            return _run(options, work)
        except StepFailed as error:
            print(f"ab_rebuild: {error}", file=sys.stderr)
            return 1


def _run(options: argparse.Namespace, work: Path) -> int:
    base_code = work / "base-code"
    _export(options.base, base_code)
    bench = Bench(work=work, runs=1, articles=options.articles, sync_articles=0,
                  latency_ms=0, concurrency=8, seed=options.seed)
    site = bench.warm_site(options.articles)
    folders = {"new": site.config.parent, "base": work / "site-base"}
    shutil.copytree(folders["new"], folders["base"], symlinks=True)
    new_code = None
    if options.new:
        new_code = work / "new-code"
        _export(options.new, new_code)
    paths = {"new": new_code, "base": base_code}
    _check_code(new_code, work, new_code or REPO / "sitegen")
    _check_code(base_code, work, base_code)
    rounds: list[dict[str, dict[str, Any]]] = []
    for number in range(options.rounds + 1):  # round 0 warms both sites up, unmeasured
        edited = work / "edited.json"
        edited_copy(site.data, edited, 1000 + number)
        order = ("base", "new") if number % 2 else ("new", "base")
        with emulator(edited, port=site.port, latency_ms=0, log=bench.log("emulator")):
            if options.offline:
                for which in order:
                    run_process(sitegen("fetch", "-c", str(folders[which] / "site.toml"), "-q"),
                                label=f"{which} fetch, round {number}", cwd=work,
                                env=_env(paths[which]), timeout=900)
            else:
                results = {which: _build(folders[which] / "site.toml", paths[which], work,
                                         f"{which} build, round {number}") for which in order}
        if options.offline:
            results = {which: _build(folders[which] / "site.toml", paths[which], work,
                                     f"{which} offline build, round {number}", offline=True)
                       for which in order}
        if number:
            rounds.append(results)
    _print(options, rounds)
    return 0


def _print(options: argparse.Namespace, rounds: list[dict[str, dict[str, Any]]]) -> None:
    def median(which: str, key: str) -> float:
        return statistics.median(r[which][key] for r in rounds)

    walls = [r["base"]["wall"] - r["new"]["wall"] for r in rounds]
    cpus = [r["base"]["cpu"] - r["new"]["cpu"] for r in rounds]
    how = "offline (after an untimed fetch)" if options.offline else "with re-sync"
    print(f"one-article-changed rebuild {how}, {options.articles} articles, {len(rounds)} "
          f"interleaved pairs, base {options.base} against this checkout")
    print(f"  wall: base − new per pair, median {statistics.median(walls):+.3f} s "
          f"(new faster in {sum(d > 0 for d in walls)} of {len(walls)})")
    print(f"  CPU:  base − new per pair, median {statistics.median(cpus):+.3f} s "
          f"(new cheaper in {sum(d > 0 for d in cpus)} of {len(cpus)})")
    for which in ("base", "new"):
        stages = ", ".join(f"{k} {median(which, k):.3f}" for k in STAGES)
        print(f"  {which:4s} medians: wall {median(which, 'wall'):.2f} s, "
              f"CPU {median(which, 'cpu'):.2f} s; stages {stages}")


if __name__ == "__main__":
    sys.exit(main())
