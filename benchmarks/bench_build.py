"""Benchmark `sitegen build` as whole processes: full, no-change, one-article and forced.

Generates an N-article workspace (default 4,000) with the emulator's generator in a
temporary folder, fills the content store once through the in-process emulator (the
same sync code path as a real one), then times `sitegen build --offline` in fresh
processes: a warm full build (the store kept, the output set aside first), a rebuild
with no change, a rebuild after one article's body changed in the store, and a cold
render (`--force`: every body and page rendered again, into an empty output). Prints
wall time, CPU time (user + system of the build and its workers) and peak RSS of each
build process (from os.wait4, the per-child form of getrusage RUSAGE_CHILDREN), with
the targets beside them and the load average. Nothing is written inside the
repository; `--folder DIR` keeps the prepared site (and its warm store) in DIR for later
runs.

    .venv/bin/python benchmarks/bench_build.py [--articles 4000] [--runs 3] [--folder DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.harness.sites import set_aside  # noqa: E402

#: Seconds each step should stay under (None: no target in seconds; see benchmarks/README.md).
TARGETS: dict[str, float | None] = {"full": 5.75, "no-change": 0.6, "one-changed": 1.0,
                                    "force": None}
SITE_TOML = """\
[site]
title = "Bench"
url = "https://bench.example.test/"

[api]
url = "https://cas.example.test"
workspace = "{workspace}"
"""


def prepare(folder: Path, articles: int, seed: int = 0) -> Path:
    """A site folder with a warm content store of *articles* generated articles."""
    import httpx

    from sitegen.config import load_config
    from sitegen.emulator.app import create_app
    from sitegen.emulator.generator import generate_workspace
    from sitegen.fetch.stored import open_config_store
    from sitegen.fetch.sync import sync
    from sitegen.store import STORE_FILE

    config_path = folder / "site.toml"
    marker = folder / f".prepared-{articles}-{seed}"
    if marker.exists() and (folder / ".sitegen" / STORE_FILE).exists():
        return config_path
    data = generate_workspace(articles, seed=seed)
    config_path.write_text(SITE_TOML.format(workspace=data["workspace"]["id"]))
    config = load_config(config_path)
    started = time.perf_counter()
    with open_config_store(config) as store:
        sync(config, store, key="bench", transport=httpx.ASGITransport(app=create_app(data)))
    print(f"filled the store with {articles} articles in {time.perf_counter() - started:.1f} s")
    marker.write_text("")
    return config_path


Run = tuple[float, float, float]  # wall seconds, CPU seconds, peak RSS MiB


def run_build(config: Path, output: Path, *flags: str) -> tuple[Run, dict[str, object]]:
    """One `sitegen build --offline` process: ((wall s, CPU s, peak RSS MiB), its report)."""
    report = output.parent / "report.json"
    command = [sys.executable, "-m", "sitegen", "build", "-q", "--offline", "-c", str(config),
               "-o", str(output), "--report", str(report), *flags]
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=config.parent)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"the build failed with exit status {process.returncode}")
    cpu = usage.ru_utime + usage.ru_stime
    return (wall, cpu, usage.ru_maxrss / 1024), json.loads(report.read_text())


def touch_one_article(config: Path) -> None:
    """Change the body of one published article in the content store (as a sync would)."""
    from sitegen.config import load_config
    from sitegen.fetch.stored import load_workspace, open_config_store, save_workspace

    loaded = load_config(config)
    with open_config_store(loaded) as store:
        workspace = load_workspace(store)
        assert workspace is not None, "the content store is empty"
        articles = list(workspace.articles)
        index = next(i for i, a in enumerate(articles) if a.status == "published")
        article = articles[index]
        articles[index] = article.model_copy(update={
            "content": (article.content or "") + f"\n\nEdit {time.time_ns()}.\n",
            "blocks": None})
        save_workspace(store, workspace.model_copy(update={"articles": articles}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--articles", type=int, default=4000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--folder", type=Path, default=None,
                        help="prepare (or reuse) the site here and keep it afterwards")
    parser.add_argument("--only", default=",".join(TARGETS),
                        help="comma-separated steps among full, no-change, one-changed, "
                        "force")
    args = parser.parse_args()
    steps = [name for name in TARGETS if name in args.only.split(",")]
    keep = args.folder is not None
    folder = args.folder or Path(tempfile.mkdtemp(prefix="sitegen-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()[0]
    try:
        config = prepare(folder, args.articles, args.seed)
        output = folder / "_site"
        results: dict[str, list[Run]] = {name: [] for name in steps}
        last: dict[str, dict[str, object]] = {}
        for _ in range(args.runs):
            if "full" in steps or not output.exists():
                set_aside(output, folder / "set-aside")
                run, last["full"] = run_build(config, output)
                if "full" in steps:
                    results["full"].append(run)
            if "no-change" in steps:
                run, last["no-change"] = run_build(config, output)
                results["no-change"].append(run)
            if "one-changed" in steps:
                touch_one_article(config)
                run, last["one-changed"] = run_build(config, output)
                results["one-changed"].append(run)
            if "force" in steps:
                set_aside(output, folder / "set-aside")
                run, last["force"] = run_build(config, output, "--force")
                results["force"].append(run)
        print(f"\nsitegen build --offline, {args.articles} articles, {args.runs} run(s), "
              f"{os.cpu_count()} CPUs, load average {load_before:.1f} before, "
              f"{os.getloadavg()[0]:.1f} after")
        print(f"{'step':<12} {'wall s':>6} {'min–max':>12} {'CPU s':>6} {'min–max':>12} "
              f"{'target':>6} {'peak RSS':>9}  files written/unchanged")
        for name, runs in results.items():
            walls = [w for w, _, _ in runs]
            cpus = [c for _, c, _ in runs]
            pages = last[name].get("pages", {})
            assert isinstance(pages, dict)
            target = TARGETS[name]
            print(f"{name:<12} {statistics.median(walls):>6.2f} "
                  f"{min(walls):>5.2f}–{max(walls):<6.2f} {statistics.median(cpus):>6.2f} "
                  f"{min(cpus):>5.2f}–{max(cpus):<6.2f} "
                  f"{'-' if target is None else f'{target:.2f}':>6} "
                  f"{max(r for _, _, r in runs):>5.0f} MiB  "
                  f"{pages.get('written')}/{pages.get('unchanged')}, "
                  f"{pages.get('rendered')} rendered")
        for name in steps:
            print(f"stages of the last {name}: {last[name].get('timings')}")
    finally:
        shutil.rmtree(folder / "set-aside", ignore_errors=True)
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
