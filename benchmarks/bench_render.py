"""Benchmark: build_site + render every page of a generated workspace (not a test).

Role: time the model and render stages on `generate_workspace(N, seed=0)`
(default 4,000 articles, about 3,400 published) and print wall time, ms per page
and peak RSS (this process and its children, from resource.getrusage). Pages
are rendered to memory through `sitegen.render.pool.render_all`, their reads
recorded as in a build (their bytes are counted, not written); no body comes
from a store: every body is rendered. Usage:

    .venv/bin/python benchmarks/bench_render.py [--articles 4000] [--workers 2]

It must never write inside the repository or reach the network.
"""

from __future__ import annotations

import argparse
import logging
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from sitegen.config import parse_config
from sitegen.emulator.generator import generate_workspace
from sitegen.fetch.records import (
    Agent,
    Article,
    AuthorIdentity,
    Cluster,
    SocialPost,
    WorkspaceInfo,
)
from sitegen.model import build_site
from sitegen.render.pages import Renderer
from sitegen.render.pool import render_all
from sitegen.render.themes import ThemeSet
from sitegen.workspace import Workspace


def workspace_from_raw(raw: dict[str, object]) -> Workspace:
    """A v2 Workspace snapshot from the emulator's JSON format."""
    def items(key: str) -> list[dict[str, object]]:
        value = raw.get(key)
        return list(value) if isinstance(value, list) else []

    return Workspace(
        api_version="v2",
        info=WorkspaceInfo.model_validate(raw["workspace"]),
        agents=[Agent.model_validate(a) for a in items("agents")],
        articles=[Article.model_validate(a) for a in items("articles")],
        clusters=[Cluster.model_validate(c) for c in items("clusters")],
        authors=[AuthorIdentity.model_validate(a) for a in items("authorIdentities")],
        social_posts=[SocialPost.model_validate(s) for s in items("socialPosts")],
    )


def _cpu_seconds() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def _peak_rss_mb() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return own, children


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=4000)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--per-page", type=int, default=10)
    options = parser.parse_args(argv)
    logging.getLogger("sitegen").setLevel(logging.ERROR)

    raw = generate_workspace(options.articles, seed=0)
    workspace = workspace_from_raw(raw)
    root = Path(tempfile.mkdtemp(prefix="sitegen-bench-"))
    config = parse_config({
        "site": {"title": "Benchmark", "url": "https://bench.example.test/",
                 "per_page": options.per_page},
        "api": {"url": "https://api.example.test", "workspace": "65f0c0ffee0123456789abcd"},
    }, root)

    cpu_before = _cpu_seconds()
    start = time.perf_counter()
    site = build_site(config, workspace)
    model_done = time.perf_counter()
    renderer = Renderer(config, site, ThemeSet(config))
    setup_done = time.perf_counter()
    total_bytes = 0
    count = 0
    reads = 0
    for _, data, page_reads in render_all(renderer, site.pages, workers=options.workers):
        total_bytes += len(data)
        count += 1
        reads += len(page_reads)
    end = time.perf_counter()
    own, children = _peak_rss_mb()
    cpu_after = _cpu_seconds()
    cpu_own = cpu_after[0] - cpu_before[0]
    cpu_children = cpu_after[1] - cpu_before[1]
    wall = end - start
    print(f"articles in workspace : {len(workspace.articles)}")
    print(f"published articles    : {len(site.articles)}")
    print(f"pages rendered        : {count} ({total_bytes / 1e6:.1f} MB of HTML, "
          f"{reads / max(count, 1):.0f} recorded reads per page)")
    print(f"build_site            : {model_done - start:.2f} s")
    print(f"theme + renderer setup: {setup_done - model_done:.2f} s")
    print(f"render all pages      : {end - setup_done:.2f} s")
    print(f"total wall time       : {wall:.2f} s ({wall * 1000 / max(count, 1):.2f} ms per page)")
    print(f"CPU time              : {cpu_own:.2f} s (parent) + {cpu_children:.2f} s (workers)"
          f" = {cpu_own + cpu_children:.2f} s; load average {os.getloadavg()[0]:.1f}")
    print(f"peak RSS              : {own:.0f} MB (parent), {children:.0f} MB (largest child)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
