"""`sitegen build`: the command's face over the recipe in `sitegen.build`.

Role: turn the parsed command line into a config and `BuildOptions`, answer an
offline build whose inputs did not change since the last one from the store alone
(`sitegen.unchanged`), run the recipe otherwise, then print the one-line summary
and write `--report FILE`. It must never build anything itself, and never print a key.
"""

from __future__ import annotations

import argparse
import logging
import time
from typing import Any

from sitegen.errors import StrictError
from sitegen.progress import Progress
from sitegen.report import BuildReport, write_report

log = logging.getLogger("sitegen.build")


def build_command(options: argparse.Namespace) -> int:
    """`sitegen build [-c site.toml] [-o DIR] [--offline] [--refresh] [--force] ...`."""
    started = time.perf_counter()
    demo, override = bool(options.demo), getattr(options, "output", None)
    force = bool(getattr(options, "force", False))
    quick = None
    if options.offline and not options.refresh and not force:
        from sitegen.unchanged import InputKey

        quick = InputKey.locate(options.config, demo=demo, output=override)
    replayed = quick.replay() if quick is not None else None
    if replayed is not None:
        report = _replayed(replayed, bool(options.strict))
    else:
        from sitegen.build import BuildOptions, run_build
        from sitegen.config import build_config

        config = build_config(options.config, demo, offline=bool(options.offline))
        report = run_build(config, BuildOptions(
            output=config.output_path(override), offline=bool(options.offline),
            refresh=bool(options.refresh), force=force, strict=bool(options.strict),
            demo=demo, max_calls=getattr(options, "max_calls", None),
            progress=Progress(enabled=False if getattr(options, "quiet", False) else None)))
        if quick is not None:
            quick.record({"html_pages": report.html_pages, "articles": report.articles,
                          "files": sorted(report.written + report.unchanged),
                          "api": report.api, "warnings": report.warning_messages})
    report.seconds = time.perf_counter() - started
    if replayed is not None:
        report.timings = {"unchanged": report.seconds}
    write_report(options.report, report)
    log.info("%s", report.summary())
    return 0


def _replayed(record: dict[str, Any], strict: bool) -> BuildReport:
    """The report of a build that found nothing changed (the last one's warnings again)."""
    warnings = [str(w) for w in record.get("warnings") or []]
    for message in warnings:
        log.warning("%s", message)
    if strict and warnings:
        raise StrictError(f"--strict: the build logged {len(warnings)} warning(s); the "
                          "previous output was kept (fix them, or build without --strict)")
    files = record.get("files")
    api = record.get("api")
    return BuildReport(
        html_pages=int(record.get("html_pages") or 0),
        articles=int(record.get("articles") or 0),
        unchanged=[str(f) for f in files] if isinstance(files, list) else [],
        api=api if isinstance(api, dict) else {}, from_cache=True,
        warnings=len(warnings), warning_messages=warnings)
