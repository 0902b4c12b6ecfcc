"""Benchmark of the sync over real HTTP: request counts and wall time against their targets.

Runs `sitegen emulate` (uvicorn) on a free loopback port in a subprocess with a
simulated latency, over a generated workspace (about 1,000 published articles by
default), and measures:

- a cold sync: requests vs published + ceil(N/100) x list endpoints walked + 10, and
  wall time vs requests x latency / concurrency (target within 1.3x);
- a no-change re-sync: zero detail requests, requests <= ceil(N/100) + clusters +
  authors + 10;
- one article changed: exactly one detail request;
- loading the content store of a larger workspace (4,000 articles by default).

It prints a table; it is not a test and asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sitegen.config import Config, parse_config
from sitegen.emulator.generator import generate_workspace
from sitegen.fetch.records import Agent, Article, AuthorIdentity, Cluster, WorkspaceInfo
from sitegen.fetch.stored import load_workspace, open_config_store, save_workspace
from sitegen.fetch.sync import SyncResult, sync
from sitegen.workspace import Workspace

KEY = "bench-key"


class Server:
    """`sitegen emulate` in a subprocess on a free loopback port (no GIL shared with the client)."""

    def __init__(self, data: dict[str, Any], folder: Path, latency: float, port: int) -> None:
        self.file = folder / "workspace.json"
        self.file.write_text(json.dumps(data), encoding="utf-8")
        self.latency = latency
        self.port = port
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> str:
        port = self.port
        self.process = subprocess.Popen(
            [sys.executable, "-m", "sitegen", "emulate", "--data", str(self.file),
             "--port", str(port), "--latency", str(self.latency), "-q"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    return f"http://127.0.0.1:{port}"
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the emulator did not start")

    def cpu(self) -> float:
        """User + system CPU seconds the emulator process has used so far (Linux /proc)."""
        if self.process is None:
            return 0.0
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def site_config(root: Path, url: str, workspace: str, concurrency: int) -> Config:
    return parse_config({"site": {"title": "Bench", "url": "https://bench.test/"},
                         "api": {"url": url, "workspace": workspace,
                                 "concurrency": concurrency}}, root)


def timed_sync(config: Config, **options: Any) -> tuple[SyncResult, float]:
    start, cpu = time.perf_counter(), time.process_time()
    with open_config_store(config) as store:
        result = sync(config, store, key=KEY, **options)
    CPU[id(result)] = time.process_time() - cpu
    return result, time.perf_counter() - start


CPU: dict[int, float] = {}


def list_endpoints(result: SyncResult) -> int:
    calls = result.ledger.by_endpoint()
    return sum(1 for name in calls if not name.endswith("{id}") and not name.endswith("digest"))


def cache_load_figures(count: int, runs: int, folder: Path) -> tuple[int, float, float, int]:
    data = generate_workspace(count, seed=1)
    workspace = Workspace(
        api_version="v2", info=WorkspaceInfo.model_validate(data["workspace"]),
        agents=[Agent.model_validate(a) for a in data["agents"]],
        articles=[Article.model_validate(a) for a in data["articles"]
                  if a.get("status") == "published"],
        clusters=[Cluster.model_validate(c) for c in data["clusters"]],
        authors=[AuthorIdentity.model_validate(a) for a in data["authorIdentities"]],
        social_posts=[],
    )
    config = site_config(folder, "http://bench.test", workspace.info.id, 8)
    times = []
    with open_config_store(config) as store:
        save_workspace(store, workspace)
        for _ in range(runs):
            start = time.perf_counter()
            loaded = load_workspace(store)
            times.append(time.perf_counter() - start)
            assert loaded is not None
        size = store.path.stat().st_size
    return len(workspace.articles), statistics.median(times), min(times), size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=1180,
                        help="articles generated (about 85%% published; default 1180)")
    parser.add_argument("--latency", type=float, default=50.0, help="emulator latency, ms")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--cache-articles", type=int, default=4700,
                        help="articles generated for the store-load figure (≈4,000 published)")
    parser.add_argument("--runs", type=int, default=5, help="store-load runs")
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args(argv)

    load_before = f"{os.getloadavg()[0]:.2f}"
    data = generate_workspace(options.articles, seed=options.seed)
    published = sum(1 for a in data["articles"] if a.get("status") == "published")
    pages = math.ceil(published / 100)
    rtt = options.latency / 1000.0
    rows: list[tuple[str, str, str, str]] = []

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        port = free_port()
        server = Server(data, folder, options.latency, port)
        with server as url:
            config = site_config(folder, url, data["workspace"]["id"], options.concurrency)
            before = server.cpu()
            cold, cold_wall = timed_sync(config)
            cold_server = server.cpu() - before
            warm, warm_wall = timed_sync(config)
            warm_server = server.cpu() - before - cold_server
        walked = list_endpoints(cold)
        target = published + pages * walked + 10
        ideal = cold.ledger.total * rtt / options.concurrency
        rows.append(("cold sync: requests", str(cold.ledger.total),
                     f"<= {target}", _ok(cold.ledger.total <= target)))
        rows.append(("cold sync: detail requests", str(cold.stats.details_made),
                     f"= {published}", _ok(cold.stats.details_made == published)))
        rows.append(("cold sync: wall time", f"{cold_wall:.2f} s",
                     f"<= {ideal * 1.3:.2f} s (1.3 x {ideal:.2f})",
                     _ok(cold_wall <= ideal * 1.3)))
        clusters, authors = len(data["clusters"]), len(data["authorIdentities"])
        warm_target = pages + clusters + authors + 10
        rows.append(("cold sync: client CPU time", f"{CPU[id(cold)]:.2f} s", "", ""))
        rows.append(("cold sync: emulator CPU time", f"{cold_server:.2f} s",
                     "same cores as the client", ""))
        rows.append(("no-change re-sync: detail requests", str(warm.stats.details_made), "= 0",
                     _ok(warm.stats.details_made == 0)))
        rows.append(("no-change re-sync: requests", str(warm.ledger.total),
                     f"<= {warm_target}", _ok(warm.ledger.total <= warm_target)))
        rows.append(("no-change re-sync: wall time", f"{warm_wall:.2f} s",
                     f"CPU client {CPU[id(warm)]:.2f} s, emulator {warm_server:.2f} s", ""))

        changed = next(a for a in data["articles"] if a.get("status") == "published")
        changed.update(title="Changed for the benchmark", updatedAt="2099-01-01T00:00:00.000Z")
        with Server(data, folder, options.latency, port) as url:
            config = site_config(folder, url, data["workspace"]["id"], options.concurrency)
            one, one_wall = timed_sync(config)
        rows.append(("one article changed: detail requests", str(one.stats.details_made), "= 1",
                     _ok(one.stats.details_made == 1)))
        rows.append(("one article changed: requests / wall", str(one.ledger.total),
                     f"{one_wall:.2f} s", ""))

        count, median, best, size = cache_load_figures(options.cache_articles, options.runs,
                                                       folder / "cache")
        rows.append((f"store load, {count} articles ({size / 1e6:.1f} MB)",
                     f"{median:.3f} s (min {best:.3f})", "< 0.3 s", _ok(median < 0.3)))

    print(f"load average before/after: {load_before} / {os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} CPUs")
    print(f"workspace: {options.articles} articles generated, {published} published; "
          f"latency {options.latency:.0f} ms; concurrency {options.concurrency}; "
          f"list endpoints walked {walked}")
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'figure':>22}  {'target':<30}  ok")
    for name, figure, goal, ok in rows:
        print(f"{name:<{width}}  {figure:>22}  {goal:<30}  {ok}")
    print("calls of the cold sync:")
    for endpoint, number in cold.ledger.by_endpoint().items():
        print(f"  {number:>6}  {endpoint}")
    return 0


def _ok(flag: bool) -> str:
    return "yes" if flag else "NO"


if __name__ == "__main__":
    sys.exit(main())
