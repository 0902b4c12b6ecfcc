"""`sitegen build`: the command's face over the recipe in `sitegen.build`.

Role: turn the parsed command line into the site.toml to load (`ConfigFile`: the recipe's
first stage answers an offline build that changed nothing before loading it) and
`BuildOptions`, run the recipe, then print (`--explain`) each file written or removed and
why (`sitegen.why`), the one-line summary, and write `--report FILE`.
It must never build anything itself, and never print a key.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

from sitegen.logs import is_quiet
from sitegen.progress import Progress
from sitegen.report import write_report
from sitegen.why import explain_lines

log = logging.getLogger("sitegen.build")


def build_command(options: argparse.Namespace) -> int:
    """`sitegen build [-c site.toml] [-o DIR] [--offline] [--refresh] [--force] ...`."""
    from sitegen.build import BuildOptions, ConfigFile, run_build

    started = time.perf_counter()
    override = getattr(options, "output", None)
    offline, demo = bool(options.offline), bool(options.demo)
    report = run_build(ConfigFile(options.config, demo, offline), BuildOptions(
        output=Path(override).resolve() if override is not None else None, offline=offline,
        refresh=bool(options.refresh), force=bool(getattr(options, "force", False)),
        strict=bool(options.strict), demo=demo, max_calls=getattr(options, "max_calls", None),
        progress=Progress(enabled=False if is_quiet(options) else None)))
    report.seconds = time.perf_counter() - started
    write_report(options.report, report)
    if getattr(options, "explain", False):
        for line in explain_lines(report.why, sorted(report.written), sorted(report.removed)):
            print(line)
    log.info("%s", report.summary())
    return 0
