"""Benchmark: the site model alone, cold and with what an earlier build kept (not a test).

Role: time `build_site` on `generate_workspace(N, seed=0)` (default 4,000 articles,
about 3,400 published) three ways, interleaved run by run so a shared host's swings
hit each alike: from nothing, with the body facts of an earlier build, and with the
body facts and the related-links memo (what `sitegen build` hands `build_site` from
`.sitegen/body-facts.bin`). One article's body is edited between the earlier build
and the timed ones, as in a one-article-changed rebuild. Every way must give the
same page digests (checked), and the figures are medians with min–max. Usage:

    .venv/bin/python benchmarks/bench_model.py [--articles 4000] [--runs 7]

It must never write inside the repository or reach the network.
"""

from __future__ import annotations

import argparse
import gc
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # `python benchmarks/bench_model.py` puts benchmarks/ first
    sys.path.insert(0, str(REPO))

from benchmarks.bench_render import workspace_from_raw  # noqa: E402
from sitegen.config import parse_config  # noqa: E402
from sitegen.emulator.generator import generate_workspace  # noqa: E402
from sitegen.heap import collector_paused  # noqa: E402
from sitegen.model import Site, build_site  # noqa: E402


def _edited(raw: dict[str, object]) -> dict[str, object]:
    """*raw* with one published article's body one paragraph longer."""
    articles = [dict(a) for a in raw["articles"]]  # type: ignore[union-attr]
    published = [a for a in articles if a.get("status") == "published"]
    target = published[len(published) // 2]
    target["content"] = str(target.get("content") or "") + "\n\nOne more paragraph.\n"
    return {**raw, "articles": articles}


def _timed(build: Callable[[], Site]) -> tuple[float, Site]:
    """Seconds of one build, with the cyclic collector paused as `sitegen build` runs it."""
    gc.collect()
    started = time.perf_counter()
    with collector_paused():
        site = build()
    return time.perf_counter() - started, site


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=4000)
    parser.add_argument("--runs", type=int, default=7)
    options = parser.parse_args(argv)
    logger = logging.getLogger("sitegen")
    level = logger.level
    logger.setLevel(logging.ERROR)  # the generated workspace's repairs are not the point
    try:
        return _run(options)
    finally:
        logger.setLevel(level)


def _run(options: argparse.Namespace) -> int:
    raw = generate_workspace(options.articles, seed=0)
    before, after = workspace_from_raw(raw), workspace_from_raw(_edited(raw))
    with tempfile.TemporaryDirectory(prefix="sitegen-bench-") as root:
        config = parse_config({
            "site": {"title": "Benchmark", "url": "https://bench.example.test/"},
            "api": {"url": "https://api.example.test", "workspace": "65f0c0ffee0123456789abcd"},
        }, Path(root))
        earlier = build_site(config, before)
        ways: dict[str, Callable[[], Site]] = {
            "from nothing": lambda: build_site(config, after),
            "with body facts": lambda: build_site(config, after, earlier.body_facts),
            "with body facts and related memo": lambda: build_site(
                config, after, earlier.body_facts, earlier.related_memo),
        }
        times: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(options.runs):
            digests = []
            for name, build in ways.items():
                seconds, site = _timed(build)
                times[name].append(seconds)
                digests.append([page.input_digest for page in site.pages])
            if any(d != digests[0] for d in digests):
                print("the three ways gave different page digests: this is a bug",
                      file=sys.stderr)
                return 1
    print(f"build_site, {len(after.articles)} articles ({len(earlier.articles)} published), "
          f"one body edited, {options.runs} interleaved runs, same page digests each way")
    for name, values in times.items():
        print(f"  {name:34s} {statistics.median(values):.3f} s "
              f"({min(values):.3f}–{max(values):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
