"""Benchmark hostile sizes: one article with 10,000 tags, 16,000 articles with one slug.

Each hostile workspace is built beside a normal one of the same size (the emulator's
generator, same seed), so the figures compare like with like:

- `tags`: a workspace of `--small` articles (default 100), one of them carrying
  `--tags` distinct tags (default 10,000), against the same workspace untouched;
- `slugs`: `--articles` articles (default 16,000) all asking for the slug `same`,
  against the same workspace untouched.

Each workspace fills a content cache through the in-process emulator (the same fetch
code path as a real sync, not timed), then `sitegen build --offline` runs as a fresh
process into an empty output; its wall time, CPU time and peak RSS (os.wait4) are
printed, with the pages written. Nothing is written inside the repository.

    .venv/bin/python benchmarks/bench_hostile.py [--small 100] [--tags 10000]
                                                 [--articles 16000] [--only tags,slugs]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

SITE_TOML = """\
[site]
title = "Bench"
url = "https://bench.example.test/"

[api]
url = "https://cas.example.test"
workspace = "{workspace}"
"""

Workspace = dict[str, Any]
Row = tuple[str, int, float, float, float, int]  # label, articles, wall, CPU, RSS MiB, pages


def many_tags(count: int) -> Callable[[Workspace], Workspace]:
    def change(data: Workspace) -> Workspace:
        published = [a for a in data["articles"] if a.get("status") == "published"]
        published[0]["tags"] = [f"tag number {n}" for n in range(count)]
        return data

    return change


def one_slug(data: Workspace) -> Workspace:
    for article in data["articles"]:
        article["slug"] = "same"
    return data


def prepare(folder: Path, articles: int, change: Callable[[Workspace], Workspace] | None
            ) -> Path:
    """A site folder whose content cache holds the (changed) generated workspace."""
    import httpx

    from sitegen.config import load_config
    from sitegen.emulator.app import create_app
    from sitegen.emulator.generator import generate_workspace
    from sitegen.fetch.stored import open_config_store
    from sitegen.fetch.sync import sync

    folder.mkdir(parents=True)
    data = generate_workspace(articles, seed=0)
    if change is not None:
        data = change(data)
    config_path = folder / "site.toml"
    config_path.write_text(SITE_TOML.format(workspace=data["workspace"]["id"]))
    config = load_config(config_path)
    with open_config_store(config) as store:
        sync(config, store, key="bench", transport=httpx.ASGITransport(app=create_app(data)))
    return config_path


def run_build(config: Path) -> tuple[float, float, float, int]:
    """`sitegen build --offline` in a fresh process: wall s, CPU s, peak RSS MiB, pages."""
    output = config.parent / "_site"
    report = config.parent / "report.json"
    command = [sys.executable, "-m", "sitegen", "build", "-q", "--offline", "-c", str(config),
               "-o", str(output), "--report", str(report)]
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=config.parent, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"the build of {config.parent.name} failed "
                         f"(exit {os.waitstatus_to_exitcode(status)})")
    pages = json.loads(report.read_text()).get("pages", {}).get("written", 0)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, int(pages)


def measure(root: Path, label: str, articles: int,
            change: Callable[[Workspace], Workspace] | None) -> Row:
    folder = root / label.replace(" ", "-").replace(",", "")
    config = prepare(folder, articles, change)
    wall, cpu, rss, pages = run_build(config)
    shutil.rmtree(folder, ignore_errors=True)
    return label, articles, wall, cpu, rss, pages


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--tags", type=int, default=10_000)
    parser.add_argument("--articles", type=int, default=16_000)
    parser.add_argument("--only", default="tags,slugs")
    args = parser.parse_args()
    only = args.only.split(",")
    root = Path(tempfile.mkdtemp(prefix="sitegen-bench-hostile-"))
    load_before = os.getloadavg()[0]
    rows: list[Row] = []
    try:
        if "tags" in only:
            rows.append(measure(root, "normal", args.small, None))
            rows.append(measure(root, f"one article with {args.tags:,} tags", args.small,
                                many_tags(args.tags)))
        if "slugs" in only:
            rows.append(measure(root, "normal", args.articles, None))
            rows.append(measure(root, f"{args.articles:,} with one slug", args.articles,
                                one_slug))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"\nsitegen build --offline, full build into an empty output; {os.cpu_count()} CPUs, "
          f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
    print(f"{'workspace':<32} {'articles':>8} {'wall s':>7} {'CPU s':>7} {'peak RSS':>9} "
          f"{'pages':>7}")
    for label, articles, wall, cpu, rss, pages in rows:
        print(f"{label:<32} {articles:>8,} {wall:>7.2f} {cpu:>7.2f} {rss:>5.0f} MiB "
              f"{pages:>7,}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
