"""Benchmark the build's internal link check against the build it is part of.

Generates an N-article workspace (default 4,000, seed 0: the site of
`python -m sitegen.emulator.generator --articles 4000 --seed 0`) through
`benchmarks/bench_build.py`'s preparation, then runs `sitegen build --offline` in fresh
processes: a full build into an empty output, a rebuild with no change and a rebuild
after one article's body changed. For each it prints the build's wall time and the link
check's own time in the build's main process (the report's `links` timing: taking the
scans, loading the kept pages' stored scans, checking every link, storing the new scans),
and the share. The scans themselves run in the render workers, beside the rendering:
the last line gives their cost, scanning and checking every HTML page of the output in
this one process from bytes in memory.

    .venv/bin/python benchmarks/bench_links.py [--articles 4000] [--runs 3] [--folder DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.bench_build import prepare, run_build, touch_one_article  # noqa: E402
from benchmarks.harness.sites import set_aside  # noqa: E402


def in_memory_check(output: Path, base_url: str) -> tuple[int, int, float, int]:
    """(pages, bytes, seconds, broken) of scanning and checking the whole *output*."""
    from sitegen.emit.links import LinkScanner

    files = {path.relative_to(output).as_posix(): path.read_bytes()
             for path in output.rglob("*") if path.is_file()}
    pages = {path: data for path, data in files.items() if path.endswith(".html")}
    started = time.perf_counter()
    scanner = LinkScanner(base_url)
    scans = {path: scanner.scan(path, data) for path, data in pages.items()}
    broken = scanner.find_broken(scans, frozenset(files), files.get)
    seconds = time.perf_counter() - started
    return len(pages), sum(map(len, pages.values())), seconds, len(broken)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--articles", type=int, default=4000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--folder", type=Path, default=None,
                        help="prepare (or reuse) the site here and keep it afterwards")
    args = parser.parse_args()
    keep = args.folder is not None
    folder = args.folder or Path(tempfile.mkdtemp(prefix="sitegen-bench-links-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        config = prepare(folder, args.articles, args.seed)
        output = folder / "_site"
        figures: dict[str, list[tuple[float, float]]] = {
            "full": [], "no-change": [], "one-changed": []}
        for _ in range(args.runs):
            set_aside(output, folder / "set-aside")
            for step in figures:
                if step == "one-changed":
                    touch_one_article(config)
                _, report = run_build(config, output)
                timings = report["timings"]
                assert isinstance(timings, dict)
                figures[step].append((float(report["seconds"]),  # type: ignore[arg-type]
                                      float(timings.get("links", 0.0))))
        print(f"{args.articles} articles, {args.runs} run(s), median; load "
              f"{os.getloadavg()[0]:.2f}")
        print(f"{'step':<12} {'build s':>8} {'links s':>8} {'share':>7}")
        for step, runs in figures.items():
            build = statistics.median(b for b, _ in runs)
            links = statistics.median(c for _, c in runs)
            print(f"{step:<12} {build:8.2f} {links:8.3f} {links / build:7.1%}")
        from sitegen.config import load_config

        pages, size, seconds, broken = in_memory_check(
            output, load_config(config).site.base_url + "/")
        print(f"whole check in memory: {pages} pages, {size / 1e6:.1f} MB in {seconds:.3f} s "
              f"({broken} broken)")
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
        else:
            shutil.rmtree(folder / "set-aside", ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
