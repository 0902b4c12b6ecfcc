"""The preview's target: template save → page served ≤ 0.3 s on the 4,000-article site.

Role: prepare a warm site as `benchmarks/run.py` does (`Bench.warm_site`: a generated
workspace fetched from `sitegen emulate` into the site's store), then `measure` it: start
`sitegen serve --offline --port 0` on the site folder, keep the home page open (its
live-reload event stream, reporting `/`), and for each round save a new marker into the
site's `templates/` override of the base template and poll the served home page until it
shows the marker (the pieces of `benchmarks/harness/preview.py`, the run's preview step,
whose warm-up edits every 15 s: a whole rebuild at 4,000 articles takes longer). Each round
waits for the previous rebuild's commit; the first is a warm-up. Prints the median and max
of those seconds, and of the whole rebuild's commit beside them. Nothing is written in the
repository; it must never leave a server running.

    .venv/bin/python benchmarks/preview_latency.py [--articles 4000] [--rounds 10]
        [--work DIR]   # prepare the site in DIR and keep it (a second run reuses it)
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
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # `python benchmarks/preview_latency.py` puts benchmarks/ first
    sys.path.insert(0, str(REPO))

from benchmarks.harness.measure import StepFailed  # noqa: E402
from benchmarks.harness.preview import (  # noqa: E402
    OpenPage,
    serving,
    tail,
    theme_template,
    wait_for,
    with_marker,
)
from benchmarks.harness.sites import Bench  # noqa: E402

TARGET = 0.3  # seconds, issue #23 (the goal: 0.2 s)
TIMEOUT = 300.0  # seconds any one wait may take on a loaded machine


def prepare(work: Path, articles: int) -> Path:
    """The folder of a warm site of *articles* generated articles under *work* (made once)."""
    site = work / f"site-{articles}"
    if (site / ".sitegen" / "store.sqlite").is_file():
        return site
    bench = Bench(work=work, runs=1, articles=articles, sync_articles=articles,
                  latency_ms=0, concurrency=8)
    return bench.warm_site(articles).config.parent


def measure(site_dir: Path, rounds: int) -> dict[str, Any]:
    """Serve *site_dir* with `sitegen serve --offline` and time *rounds* template saves.

    Returns the seconds of each round until the open page is served with the change
    (`served`) and until the whole rebuild committed (`committed`), with their median and max.
    """
    name, original = theme_template()
    template = site_dir / "templates" / name
    template.parent.mkdir(parents=True, exist_ok=True)
    template.write_text(with_marker(original, "start"), encoding="utf-8")
    served: list[float] = []
    committed: list[float] = []
    # (`serving` returns once the first build is served: the waiting page is a 503)
    with serving(["--offline"], site_dir, TIMEOUT) as (url, lines):
        try:
            page = OpenPage(url)
            if not page.connected.wait(TIMEOUT):
                raise StepFailed("the live-reload event stream did not answer")
            for round_ in range(rounds + 1):  # the first is a warm-up, not counted
                time.sleep(1.0)  # let the previous reload settle
                marker = f"edit-{round_}-{time.monotonic_ns()}"
                start = time.perf_counter()
                template.write_text(with_marker(original, marker), encoding="utf-8")
                seconds = wait_for(url, marker, start, TIMEOUT)
                whole = page.committed(start, TIMEOUT)  # the next edit starts after it
                if round_:
                    served.append(seconds)
                    committed.append(whole)
        except StepFailed as error:
            raise StepFailed(f"{error} (sitegen serve said: {tail(lines)})") from None
    return {
        "rounds": rounds,
        "served": served,
        "committed": committed,
        "served_median": statistics.median(served),
        "served_max": max(served),
        "committed_median": statistics.median(committed),
        "committed_max": max(committed),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--articles", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--work", type=Path, help="prepare the site here and keep it")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="sitegen-preview-latency-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        figures = measure(prepare(work, args.articles), args.rounds)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"sitegen serve --offline, {args.articles} articles: template save → ..., "
          f"{args.rounds} round(s) after a warm-up, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"{'moment':<22} {'median s':>9} {'max s':>7} {'target':>7}")
    print(f"{'page served':<22} {figures['served_median']:>9.3f} {figures['served_max']:>7.3f} "
          f"{TARGET:>7.2f}")
    print(f"{'whole rebuild committed':<22} {figures['committed_median']:>9.3f} "
          f"{figures['committed_max']:>7.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
