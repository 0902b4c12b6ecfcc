"""Benchmark the search stage: builds with `[search]` on and off, the index's size, and the
network one search costs in Chromium.

Generates an N-article workspace (default 4,000, seed 0: the site of
`python -m sitegen.emulator.generator --articles 4000 --seed 0`) through
`benchmarks/bench_build.py`'s preparation, then runs `sitegen build --offline` in fresh
processes, with search on (`site.toml`) and off (`site-nosearch.toml`, the same store): a
full build into an empty output, a rebuild with no change, and a rebuild after one article's
body changed. It prints each build's wall and CPU time (Pagefind's process included) and the
report's `search` stage (absent: Pagefind did not run), then the `pagefind/` folder's files
and bytes, and what a reader's browser fetches for one search: the built site is served on
loopback (no compression: Pagefind's index files are gzip already, its scripts are not, so
a host that compresses sends less), `/search/` is opened in Chromium (/usr/bin/chromium), a
word of one article's title is typed, and the bodies of every response are summed, apart for
the page itself and for Pagefind's files.

    .venv/bin/python benchmarks/bench_search.py [--articles 4000] [--runs 1] [--folder DIR]
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.bench_build import prepare, run_build, touch_one_article  # noqa: E402
from benchmarks.harness.sites import set_aside  # noqa: E402

STEPS = ("full", "no-change", "one-changed")


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass


def query_word(output: Path) -> tuple[str, str]:
    """(word, article URL): the longest word of the title of the first article page found."""
    for page in sorted(output.glob("*/index.html")):
        html = page.read_text(encoding="utf-8")
        title = re.search(r'<h1 class="article__title" data-pagefind-body>([^<]+)</h1>', html)
        if title is not None and '<html lang="en"' in html:
            word = max(re.findall(r"[A-Za-z]+", title.group(1)), key=len).lower()
            return word, f"/{page.parent.name}/"
    raise SystemExit("no English article page in the output")


def network_of_one_search(output: Path, word: str) -> dict[str, tuple[int, int]]:
    """Bytes (count, sum) of the responses for /search/ and one query, by kind."""
    from playwright.sync_api import sync_playwright

    server = ThreadingHTTPServer(("127.0.0.1", 0),
                                 functools.partial(_Quiet, directory=str(output)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    sizes: dict[str, list[int]] = {"page (HTML, theme CSS/JS)": [], "pagefind: UI scripts/css": [],
                                   "pagefind: wasm, entry, meta": [],
                                   "pagefind: index chunks": [], "pagefind: fragments": []}
    seen: list[tuple[str, int]] = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                        args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            page.on("requestfinished", lambda request: seen.append(
                (request.url, len(request.response().body()))))  # type: ignore[union-attr]
            page.goto(base + "/search/", wait_until="networkidle")
            page.locator(".pagefind-ui__search-input").fill(word)
            page.locator(".pagefind-ui__result-link").first.wait_for(timeout=60_000)
            page.wait_for_load_state("networkidle")
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    for url, size in seen:
        path = url.removeprefix(base)
        if not path.startswith("/pagefind/"):
            kind = "page (HTML, theme CSS/JS)"
        elif "/fragment/" in path:
            kind = "pagefind: fragments"
        elif "/index/" in path:
            kind = "pagefind: index chunks"
        elif path.endswith((".js", ".css")):
            kind = "pagefind: UI scripts/css"
        else:
            kind = "pagefind: wasm, entry, meta"
        sizes[kind].append(size)
    return {kind: (len(found), sum(found)) for kind, found in sizes.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--articles", type=int, default=4000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--folder", type=Path, default=None,
                        help="prepare (or reuse) the site here and keep it afterwards")
    args = parser.parse_args()
    keep = args.folder is not None
    folder = args.folder or Path(tempfile.mkdtemp(prefix="sitegen-bench-search-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        on = prepare(folder, args.articles, args.seed)
        off = folder / "site-nosearch.toml"
        off.write_text(on.read_text() + "\n[search]\nenabled = false\n")
        output = folder / "_site"
        figures: dict[tuple[str, str], list[tuple[float, float, float | None]]] = {}
        for _ in range(args.runs):
            for name, config in (("off", off), ("on", on)):
                set_aside(output, folder / "set-aside")
                for step in STEPS:
                    if step == "one-changed":
                        touch_one_article(config)
                    (wall, cpu, _), report = run_build(config, output)
                    timings = report["timings"]
                    assert isinstance(timings, dict)
                    search = timings.get("search")
                    figures.setdefault((name, step), []).append(
                        (wall, cpu, None if search is None else float(search)))
        print(f"{args.articles} articles, {args.runs} run(s), median; load "
              f"{os.getloadavg()[0]:.2f}; {os.cpu_count()} CPUs")
        print(f"{'search':<7} {'step':<12} {'wall s':>7} {'CPU s':>7} {'search s':>9}")
        for (name, step), runs in figures.items():
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            stage = [r[2] for r in runs if r[2] is not None]
            shown = f"{statistics.median(stage):9.2f}" if stage else f"{'not run':>9}"
            print(f"{name:<7} {step:<12} {wall:7.2f} {cpu:7.2f} {shown}")
        bundle = [path for path in (output / "pagefind").rglob("*") if path.is_file()]
        pages = [path for path in output.rglob("*.html")]
        print(f"pagefind/: {len(bundle)} files, {sum(p.stat().st_size for p in bundle):,} "
              f"bytes (the output's HTML pages: {len(pages)}, "
              f"{sum(p.stat().st_size for p in pages):,} bytes)")
        word, url = query_word(output)
        network = network_of_one_search(output, word)
        print(f"one search in Chromium for {word!r} (in the title of {url}), bytes received:")
        for kind, (count, size) in network.items():
            print(f"  {kind:<30} {count:3d} responses {size:10,} bytes")
        total = sum(size for kind, (_, size) in network.items() if kind.startswith("pagefind"))
        print(f"  {'Pagefind in all':<30} {'':17} {total:10,} bytes")
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
