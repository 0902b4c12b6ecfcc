"""Benchmark `sitegen serve`: from saving a template to the change being served and shown.

For the demo site (`--demo`) and for a generated N-article workspace (default 1,000; its store
filled once in-process through the emulator, then served with `--offline`), this starts a real
`sitegen serve --port 0` process, copies the theme's base template into the site's
`templates/`, listens on the live-reload event stream like a page open at the home page does
(its stream reports the path `/`, so the preview renders that page first), and for each run
saves a new marker into the template and records these moments:

  event    the first `reload` event for the home page arrived (rendered ahead, or committed)
  served   a GET of the home page returns the marker (first try after that event; one
           keep-alive client, as a browser has)
  browser  an open Chromium page shows the marker by itself, as Playwright's polling sees it
           (only with --browser; includes Playwright re-attaching after the page's reload)
  painted  that page's first contentful paint, from its own Performance timeline (the
           moment the user sees the new page; only with --browser)
  complete the rebuild committed: every page of the site is the new one (its final `reload`)

The first edit is a warm-up and not counted. Prints median and min–max per size, with the
targets (0.5 s demo; 0.3 s at 4,000 articles, issue #23's floor, else 3 s) beside them.
Nothing is written in the repository.

    .venv/bin/python benchmarks/bench_preview.py [--articles 1000] [--runs 5] [--browser]
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
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
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
ANCHOR = '<body class="kind-{{ page.kind }}">'
# The epoch second the shown document first painted (or, without paint timing, was ready).
PAINTED = """() => {
  const paint = performance.getEntriesByName('first-contentful-paint')[0];
  const nav = performance.getEntriesByType('navigation')[0];
  const at = paint ? paint.startTime : nav.domContentLoadedEventEnd;
  return (performance.timeOrigin + at) / 1000;
}"""


def prepare_generated(folder: Path, articles: int) -> Path:
    """A site folder with a warm content store of *articles* generated articles."""
    import httpx

    from sitegen.config import load_config
    from sitegen.emulator.app import create_app
    from sitegen.emulator.generator import generate_workspace
    from sitegen.fetch.stored import open_config_store
    from sitegen.fetch.sync import sync

    data = generate_workspace(articles, seed=1)
    config_path = folder / "site.toml"
    config_path.write_text(SITE_TOML.format(workspace=data["workspace"]["id"]), encoding="utf-8")
    config = load_config(config_path)
    with open_config_store(config) as store:
        sync(config, store, key="bench", transport=httpx.ASGITransport(app=create_app(data)))
    return config_path


def base_template() -> str:
    from sitegen.render.themes import builtin_themes_root

    return (builtin_themes_root() / "default" / "templates" / "base.html").read_text("utf-8")


def save_marker(site: Path, marker: str) -> None:
    head, sep, tail = base_template().partition(ANCHOR)
    temporary = site / "templates" / ".base.html.tmp"
    temporary.write_text(f"{head}{sep}\n<!-- {marker} -->{tail}", encoding="utf-8")
    os.replace(temporary, site / "templates" / "base.html")


class Stream:
    """Reads the preview's event stream in a thread and timestamps every `reload` event."""

    def __init__(self, url: str) -> None:
        self.url = url + "__sitegen/events?path=%2F"
        self.reloads: list[float] = []
        self.completes: list[float] = []
        self.arrived = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        import httpx

        try:
            with httpx.stream("GET", self.url, timeout=None) as response:
                name = ""
                for line in response.iter_lines():
                    if line.startswith("event: "):
                        name = line[7:]
                    elif line.startswith("data: ") and name == "reload":
                        now = time.perf_counter()
                        paths = json.loads(line[6:]).get("paths")
                        if paths is None or "/" in paths:
                            self.reloads.append(now)
                        if paths is None:
                            self.completes.append(now)
                        self.arrived.set()
        except httpx.HTTPError:
            return

    def wait(self, after: float, timeout: float = 120.0, *, complete: bool = False) -> float:
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            later = [t for t in (self.completes if complete else self.reloads) if t >= after]
            if later:
                return later[0]
            self.arrived.wait(0.05)
            self.arrived.clear()
        raise SystemExit("no reload event arrived")


@contextmanager
def serving(site: Path, *extra: str) -> Iterator[str]:
    command = [sys.executable, "-m", "sitegen", "serve", "--port", "0", "--refresh-every", "0",
               *extra]
    process = subprocess.Popen(command, cwd=site, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    url = process.stdout.readline().split()[2]
    try:
        import httpx

        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                if httpx.get(url, timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=60)
        process.stdout.close()


@contextmanager
def browser_page(url: str, enabled: bool) -> Iterator[Any]:
    if not enabled:
        yield None
        return
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run"])
        page = browser.new_page()
        page.goto(url)
        page.wait_for_function("() => window.__sitegenPreview !== undefined")
        try:
            yield page
        finally:
            browser.close()


def measure(site: Path, runs: int, use_browser: bool, *extra: str) -> dict[str, list[float]]:
    import httpx

    (site / "templates").mkdir(exist_ok=True)
    save_marker(site, "start")
    figures: dict[str, list[float]] = {"event": [], "served": [], "browser": [], "painted": [],
                                       "complete": []}
    with serving(site, *extra) as url, httpx.Client(timeout=30) as client:
        stream = Stream(url)
        time.sleep(0.5)  # let the stream connect before the first save (not a figure)
        with browser_page(url, use_browser) as page:
            for run in range(runs + 1):
                marker = f"bench-{run}-{time.time_ns()}"
                saved, saved_epoch = time.perf_counter(), time.time()
                save_marker(site, marker)
                event = stream.wait(saved)
                while marker not in client.get(url).text:
                    time.sleep(0.005)
                served = time.perf_counter()
                shown = painted = None
                if page is not None:
                    page.wait_for_function(
                        "m => document.documentElement.outerHTML.includes(m)", arg=marker,
                        timeout=120_000, polling="raf")
                    shown = time.perf_counter()
                    painted = float(page.evaluate(PAINTED)) - saved_epoch
                complete = stream.wait(saved, complete=True)
                if run == 0:
                    continue  # warm-up
                figures["event"].append(event - saved)
                figures["served"].append(served - saved)
                if shown is not None:
                    figures["browser"].append(shown - saved)
                if painted is not None:
                    figures["painted"].append(painted)
                figures["complete"].append(complete - saved)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--articles", type=int, default=1000, help="0: the demo only")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--browser", action="store_true", help="also time a Chromium page")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="sitegen-bench-preview-"))
    results: dict[str, dict[str, list[float]]] = {}
    sized = 0.3 if args.articles >= 4000 else 3.0  # (#23's floor at 4,000 articles)
    targets = {"demo": 0.5, f"{args.articles} articles": sized}
    try:
        demo = folder / "demo"
        demo.mkdir()
        results["demo"] = measure(demo, args.runs, args.browser, "--demo")
        if args.articles > 0:
            generated = folder / "generated"
            generated.mkdir()
            prepare_generated(generated, args.articles)
            results[f"{args.articles} articles"] = measure(generated, args.runs, args.browser,
                                                           "--offline")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"\nsitegen serve: template save → ..., {args.runs} run(s) after a warm-up, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    print(f"{'site':<16} {'moment':<8} {'median s':>9} {'min–max s':>14} {'target':>7}")
    for name, figures in results.items():
        for moment, values in figures.items():
            if not values:
                continue
            print(f"{name:<16} {moment:<8} {statistics.median(values):>9.3f} "
                  f"{min(values):>6.3f}–{max(values):<7.3f} "
                  f"{'' if moment == 'complete' else f'{targets[name]:.2f}':>7}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
