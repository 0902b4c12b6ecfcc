"""What sealing the store costs: warm builds with every row's MAC, and without it.

A generated workspace (default 4,000 articles) is synced once from the emulator; then, in
alternated runs, each build is measured as a child process's CPU time (user + system):

- `warm`: `build --offline` into an empty output, as CI with the store restored: every
  stored body, link scan and the search bundle is read and its seal verified;
- `force`: `build --offline --force`: everything derived again and sealed when stored.

"without" runs the same build with `sitegen.cachekey`'s tag made a constant (every row of
the store keeps its shape and is "verified" against it: the same bytes moved, nothing hashed), on
its own copy of the site folder (each mode reads only what it stored: a store sealed by one
is not read by the other). The first build of each copy is not counted. The machine is
shared: medians of alternated runs.

    python -m benchmarks.bench_seal [--articles N] [--runs N]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.harness.sites import bench_env, emulator, free_port, sitegen, write_site

_WITHOUT = ("import sys, sitegen.cachekey as c; "
            "c._tag = lambda key, kind, name, value: bytes(32); "
            "from sitegen.cli import main; sys.exit(main(sys.argv[1:]))")


def _cpu(command: list[str], cwd: Path) -> float:
    """The CPU seconds (user + system) of *command* run to its end in *cwd*."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, cwd=cwd, env=bench_env(), check=True, timeout=3600,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=4000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-seal-") as scratch:
        root = Path(scratch)
        data = root / "workspace.json"
        subprocess.run([sys.executable, "-m", "sitegen.emulator.generator", "--articles",
                        str(args.articles), "-o", str(data)], check=True, timeout=600)
        site = root / "site"
        with emulator(data, port=free_port(), latency_ms=0, log=root / "emulator.log") as url:
            write_site(site, api_url=url, workspace_id=_workspace_id(data), concurrency=8)
            subprocess.run(sitegen("build", "-q"), cwd=site, env=bench_env(), check=True,
                           timeout=3600, stdout=subprocess.DEVNULL)
        figures: dict[str, list[float]] = {}
        for mode in ("with", "without"):
            shutil.copytree(site, root / mode, symlinks=True)
        for run in range(args.runs + 1):
            for mode in ("with", "without") if run % 2 == 0 else ("without", "with"):
                head = sitegen() if mode == "with" else [sys.executable, "-c", _WITHOUT]
                for name, extra in (("warm", ["-o", "empty"]), ("force", ["--force"])):
                    shutil.rmtree(root / mode / "empty", ignore_errors=True)
                    seconds = _cpu([*head, "build", "-q", "--offline", *extra], root / mode)
                    if run:  # (the first: each copy's own seals stored)
                        figures.setdefault(f"{name} {mode}", []).append(seconds)
                    print(f"{name:5} {mode:7} {seconds:6.2f} s CPU", flush=True)
        for name in ("warm", "force"):
            with_, without = (statistics.median(figures[f"{name} {m}"])
                              for m in ("with", "without"))
            print(f"{name}: median {with_:.2f} s with the MAC, {without:.2f} s without: "
                  f"{(with_ - without) / without:+.1%}")


def _workspace_id(data: Path) -> str:
    return str(json.loads(data.read_text(encoding="utf-8"))["workspace"]["id"])


if __name__ == "__main__":
    main()
