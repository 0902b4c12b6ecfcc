"""The preview step: save a template, time until the served page shows the change.

Role: drive `sitegen serve --port 0` as a subprocess (its URL is read from its
output), override the theme's base template in the site's `templates/`, keep the home
page "open" (its live-reload event stream, reporting the path `/` as the page's script
does, so the preview renders that page first), then, for each run, write a new marker into
that template and poll the served home page until the marker appears; the same edit's
whole rebuild (the commit's `reload` event) is reported beside it. Measured at the demo
size (`--demo`) and on a warm site of the sync size (`--offline`). It must never leave a
server running.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

from benchmarks.harness.measure import StepFailed
from benchmarks.harness.sites import Bench, bench_env, sitegen, start_server, stop
from benchmarks.harness.stats import Row, Target

URL_PATTERN = re.compile(r"http://(?:127\.0\.0\.1|localhost|\[::1\]):(\d+)")
TEMPLATE_CANDIDATES = ("base.html", "layout.html", "index.html")
POLL_SECONDS = 0.01


def theme_template() -> tuple[str, str]:
    """(name, text) of the built-in default theme's base template."""
    folder = resources.files("sitegen") / "themes" / "default" / "templates"
    for name in TEMPLATE_CANDIDATES:
        candidate = folder / name
        if candidate.is_file():
            return name, candidate.read_text(encoding="utf-8")
    raise StepFailed("the built-in default theme has no base template "
                     f"({', '.join(TEMPLATE_CANDIDATES)}) to edit")


def with_marker(template: str, marker: str) -> str:
    """*template* with an HTML comment carrying *marker* just before `</body>`."""
    comment = f"<!-- bench {marker} -->"
    if "</body>" in template:
        return template.replace("</body>", comment + "</body>", 1)
    return template + comment


def fetch(url: str) -> str:
    """The body of *url*, or '' when the server is not answering (yet)."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 (loopback)
            return str(response.read().decode("utf-8", "replace"))
    except (urllib.error.URLError, OSError, ValueError):
        return ""


def wait_for(url: str, marker: str, start: float, timeout: float) -> float:
    """Seconds from *start* (a perf_counter) until the page at *url* contains *marker*."""
    while time.perf_counter() - start < timeout:
        if marker in fetch(url):
            return time.perf_counter() - start
        time.sleep(POLL_SECONDS)
    raise StepFailed(f"the served page did not show the template change within {timeout:.0f} s")


@contextmanager
def serving(args: list[str], cwd: Path, timeout: float) -> Iterator[tuple[str, list[str]]]:
    """`sitegen serve ARGS --port 0` in *cwd*; yields its base URL and its output lines."""
    process = start_server(sitegen("serve", *args, "--host", "127.0.0.1", "--port", "0"),
                           cwd=cwd, env=bench_env(), stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines: list[str] = []
    found = threading.Event()

    def _read() -> None:
        assert process.stdout is not None
        for raw in process.stdout:
            lines.append(raw.decode("utf-8", "replace"))
            if URL_PATTERN.search(lines[-1]):
                found.set()

    threading.Thread(target=_read, daemon=True).start()
    try:
        if not found.wait(timeout):
            raise StepFailed(f"sitegen serve printed no http://127.0.0.1:PORT URL within "
                             f"{timeout:.0f} s ({tail(lines)})")
        match = next(m for m in map(URL_PATTERN.search, lines) if m)
        url = f"http://127.0.0.1:{match.group(1)}/"
        deadline = time.monotonic() + timeout
        while not fetch(url):
            if process.poll() is not None or time.monotonic() > deadline:
                raise StepFailed(f"sitegen serve stopped answering ({tail(lines)})")
            time.sleep(0.05)
        yield url, lines
    finally:
        stop(process)


class OpenPage:
    """The event stream of a page open at `/`: timestamps of each rebuild's final `reload`."""

    def __init__(self, url: str) -> None:
        self.commits: list[float] = []
        self.connected = threading.Event()
        self._changed = threading.Condition()
        request = url + "__sitegen/events?path=%2F"
        threading.Thread(target=self._read, args=(request,), daemon=True).start()

    def _read(self, url: str) -> None:
        try:
            with urllib.request.urlopen(url, timeout=600) as response:  # noqa: S310 (loopback)
                name = ""
                for raw in response:
                    line = raw.decode("utf-8", "replace").rstrip("\r\n")
                    if line.startswith("event: "):
                        name = line[7:]
                    elif line.startswith("data: "):
                        self.connected.set()
                        if name == "reload" and "paths" not in json.loads(line[6:]):
                            with self._changed:
                                self.commits.append(time.perf_counter())
                                self._changed.notify_all()
        except (urllib.error.URLError, OSError, ValueError):
            return

    def committed(self, start: float, timeout: float) -> float:
        """Seconds from *start* until a rebuild committed after it."""
        with self._changed:
            if not self._changed.wait_for(lambda: any(t >= start for t in self.commits),
                                          timeout=timeout):
                raise StepFailed(f"no rebuild committed within {timeout:.0f} s")
            return next(t for t in self.commits if t >= start) - start


def tail(lines: list[str]) -> str:
    """The last output lines of a server, on one line, for a failure message."""
    text = " | ".join(line.strip() for line in lines[-3:] if line.strip())
    return text[-400:] or "no output"


def warm_up(url: str, template: Path, original: str, timeout: float) -> None:
    """Edit until an edit shows: the first build may still be running when the server answers
    (it serves a waiting page meanwhile), so a missed first edit is simply made again."""
    deadline = time.perf_counter() + timeout
    attempt = 0
    while time.perf_counter() < deadline:
        attempt += 1
        marker = f"warm-up-{attempt}-{time.monotonic_ns()}"
        start = time.perf_counter()
        template.write_text(with_marker(original, marker), encoding="utf-8")
        try:
            wait_for(url, marker, start, min(15.0, deadline - start))
            return
        except StepFailed:
            continue
    raise StepFailed(f"the served page did not show a template change within {timeout:.0f} s")


def measure_edits(site: Path, args: list[str], runs: int,
                  timeout: float) -> tuple[list[float], list[float]]:
    """Serve *site*, edit its base template *runs* times after a warm-up, the home page open.

    Returns seconds per edit until the page is served, and until the whole rebuild committed.
    """
    name, original = theme_template()
    template = site / "templates" / name
    template.parent.mkdir(parents=True, exist_ok=True)
    template.write_text(with_marker(original, "start"), encoding="utf-8")
    times: list[float] = []
    whole: list[float] = []
    with serving(args, site, timeout) as (url, lines):
        try:
            warm_up(url, template, original, timeout)
            page = OpenPage(url)
            if not page.connected.wait(timeout):
                raise StepFailed("the live-reload event stream did not answer")
            for run in range(runs):
                time.sleep(1.0)  # let the previous rebuild and its reload settle
                marker = f"edit-{run}-{time.monotonic_ns()}"
                start = time.perf_counter()
                template.write_text(with_marker(original, marker), encoding="utf-8")
                times.append(wait_for(url, marker, start, timeout))
                whole.append(page.committed(start, timeout))
        except StepFailed as error:
            raise StepFailed(f"{error} (sitegen serve said: {tail(lines)})") from None
    return times, whole


def step_preview(bench: Bench) -> None:
    """4. Template saved → rebuilt output served, at the demo size and at the sync size."""
    demo = bench.work / "preview-demo"
    demo.mkdir(exist_ok=True)
    served, whole = measure_edits(demo, ["--demo"], bench.runs, 60)
    bench.rows.append(Row("preview", "template save → page served, demo", "s", served,
                          Target("<", 0.5, " s"), note="the home page open"))
    bench.rows.append(Row("preview", "template save → whole site rebuilt, demo", "s", whole))
    site = bench.warm_site(bench.sync_articles)
    served, whole = measure_edits(site.config.parent, ["--offline"], bench.runs, 180)
    size = bench.sync_articles
    bench.rows.append(Row("preview", f"template save → page served, {size} art.", "s", served,
                          Target("<", 3.0, " s"), note="the home page open"))
    bench.rows.append(Row("preview", f"template save → whole site rebuilt, {size} art.", "s",
                          whole))
