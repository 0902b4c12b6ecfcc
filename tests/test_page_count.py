"""One count of pages: `build`'s summary, `serve`'s line and the `--report` say the same number.

A page is an HTML file of the site; feeds, assets, images and the search index are files,
counted apart. `build` said "built 312 pages" where `serve` said "117 pages" for the demo
(the first counted every file, Pagefind's included), and `--force` said "0 written, 312
unchanged", as if nothing had happened.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from importlib import resources
from pathlib import Path
from typing import Any

TIMEOUT = 300  # a demo build on a loaded machine
ENV = {**os.environ, "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}


def demo_articles() -> list[dict[str, Any]]:
    """The demo workspace's articles, as the package holds them."""
    data = resources.files("sitegen.emulator").joinpath("data", "demo-workspace.json")
    articles: list[dict[str, Any]] = json.loads(data.read_text(encoding="utf-8"))["articles"]
    return articles


def sitegen(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sitegen", *argv], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=TIMEOUT, check=False)


def summary(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return done.stderr.strip().splitlines()[-1]


def served_count(cwd: Path) -> int:
    """The page count `sitegen serve --demo` gives when its first build is done."""
    process = subprocess.Popen([sys.executable, "-m", "sitegen", "serve", "--demo", "--port",
                                "0"], cwd=cwd, env=ENV, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.put(line)
        lines.put("")

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        while True:
            line = lines.get(timeout=TIMEOUT)
            assert line, "serve ended before its first build"
            found = re.match(r"built ([\d,]+) pages in ", line)
            if found:
                return int(found.group(1).replace(",", ""))
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        reader.join(timeout=60)
        for stream in (process.stdout, process.stderr):
            assert stream is not None
            stream.close()


def test_build_serve_and_report_give_one_page_count(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    line = summary(sitegen("build", "--demo", "-o", "out", "--report", str(report),
                           cwd=tmp_path))
    found = re.match(r"built ([\d,]+) pages from \d+ articles \(([\d,]+) written, 0 unchanged, "
                     r"0 removed; ([\d,]+) files in all", line)
    assert found, line
    built, written, files = (int(group.replace(",", "")) for group in found.groups())
    pages = json.loads(report.read_text(encoding="utf-8"))
    html = sorted(p for p in (tmp_path / "out").rglob("*.html"))
    assert built == written == pages["pages"]["count"] == pages["pages"]["written"] == len(html)
    assert files == pages["files"]["count"] > built  # (feeds, assets, images, the index)
    assert served_count(tmp_path) == built
    assert served_count(tmp_path) == built  # (a second preview, its folder already built)


def test_a_forced_build_of_the_same_content_says_it_rendered_every_page(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    summary(sitegen("build", "--demo", "-o", "out", cwd=tmp_path))
    line = summary(sitegen("build", "--demo", "--offline", "--force", "-o", "out", "--report",
                           str(report), cwd=tmp_path))
    pages = json.loads(report.read_text(encoding="utf-8"))["pages"]
    assert pages["rendered"] == pages["count"] > 100 and pages["written"] == 0
    published = sum(a["status"] == "published" for a in demo_articles())
    assert line.startswith(f"rendered {pages['count']:,} pages from {published} articles, all "
                           "identical "
                           "to the previous output ("), line
