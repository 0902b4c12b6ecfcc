"""What a build did: pages and files written/unchanged/removed, API calls, warnings, timings.

A *page* is an HTML file of the site (every page the theme renders, and the redirect page
of each moved URL); a *file* is any file of the output (pages, feeds, assets, images, the
search index). `build`'s summary, `serve`'s lines and the report's `pages` count pages, so
the three say the same number for one site; the report's `files` counts every file.

Role: `BuildReport` is the value `run_build` returns (the CLI, `--report FILE`
and the preview server read it); `report_file` writes `--report FILE` on every exit
of `sitegen build`, a failed one too (`write_report`); `Timings` measures the stages; `Progress`
draws one updating line on stderr for long stages (the fetch, the render), only
on a terminal and never with --quiet; a log line erases it first (`sitegen.logs`).
Timings are the only non-deterministic part of a report. This module must never
hold or print a key, request headers or local paths.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sitegen.errors import BuildError, Interrupted, SitegenError
from sitegen.logs import warning_counter

if TYPE_CHECKING:
    import threading

    from sitegen.emit.writer import WriteResult
    from sitegen.logs import WarningCounter

#: 3: `pages` counts HTML pages, `files` every file; 4: `paths` and `why` (what changed, why)
REPORT_VERSION = 4


class Timings:
    """Wall-clock seconds per build stage, in the order the stages ran.

    A stage does not start once *stop* is set (`Interrupted`: the preview is stopping), and
    the stage an exception came out of is `failed` (an unexpected error's line names it).
    """

    def __init__(self, stop: threading.Event | None = None) -> None:
        global _timings_started, _latest_timings
        self.stages: dict[str, float] = {}
        self.failed: str | None = None
        self._stop = stop
        self._start = time.perf_counter()
        _timings_started += 1  # a failed build's report takes the stages it had timed
        _latest_timings = (_timings_started, self)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time one stage (a stage run twice adds up)."""
        if self._stop is not None and self._stop.is_set():
            raise Interrupted(f"stopped before the {name} stage")
        started = time.perf_counter()
        try:
            yield
        except BaseException:
            self.failed = name
            raise
        finally:
            self.stages[name] = self.stages.get(name, 0.0) + time.perf_counter() - started

    def total(self) -> float:
        """Seconds since the build started."""
        return time.perf_counter() - self._start


_timings_started = 0
_latest_timings: tuple[int, Timings] | None = None


def failed_stage() -> str | None:
    """The stage an exception came out of, in the newest build of this process (if any)."""
    return _latest_timings[1].failed if _latest_timings is not None else None


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count:,} {word}s"


def _pages_of(paths: list[str]) -> int:
    """How many of the output paths *paths* are pages (HTML files)."""
    return sum(1 for path in paths if path.endswith(".html"))


@dataclass
class BuildReport:
    """The outcome of one build. Counts are of output files sitegen manages."""

    html_pages: int = 0
    articles: int = 0
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    rendered: int = 0
    api: dict[str, Any] = field(default_factory=dict)
    from_cache: bool = False
    timings: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    warnings: int = 0
    output_changed: bool = False
    #: The warnings' sentences, in the order they were logged.
    warning_messages: list[str] = field(default_factory=list)
    #: The images stage (`sitegen.images.stage.ImageStats.to_report`): image requests are
    #: counted here, apart from API calls (they cost no quota).
    images: dict[str, int] = field(default_factory=dict)
    #: The search stage (`sitegen.emit.search.SearchResult.to_report`): pages indexed, the
    #: shards, and the shards Pagefind indexed again in this build.
    search: dict[str, Any] = field(default_factory=dict)
    #: Why each file the plan rendered and the writer wrote was rendered (`sitegen.why`).
    why: dict[str, str] = field(default_factory=dict)

    def committed(self, result: WriteResult, timings: Timings,
                  warnings: WarningCounter) -> None:
        """Take what the writer's commit did, the stages' times and the warnings logged."""
        self.warnings, self.warning_messages = warnings.count, warnings.messages
        self.written, self.unchanged, self.removed = (
            result.written, result.unchanged, result.removed)
        self.output_changed = result.touched_output
        self.timings, self.seconds = dict(timings.stages), timings.total()

    @property
    def pages(self) -> dict[str, int]:
        """The site's pages (`count`), and how many were written, unchanged and removed."""
        written, unchanged = _pages_of(self.written), _pages_of(self.unchanged)
        return {"count": written + unchanged, "written": written, "unchanged": unchanged,
                "removed": _pages_of(self.removed)}

    @property
    def files(self) -> int:
        """Every file of the new site (written or unchanged)."""
        return len(self.written) + len(self.unchanged)

    def summary(self) -> str:
        """The one line `sitegen build` ends with (pages = every file sitegen manages)."""
        calls = int(self.api.get("total") or 0)
        saved = int(self.api.get("saved") or 0)
        offline = " offline" if self.from_cache else ""
        monthly = self.api.get("monthly")
        budget = ""
        if isinstance(monthly, dict) and monthly.get("projected") is not None:
            budget = f", ~{monthly['projected']}/month at the schedule"
            if monthly.get("projected_unchanged") not in (None, monthly["projected"]):
                budget += f" (~{monthly['projected_unchanged']} if nothing is new)"
            if monthly.get("quota") is not None:
                budget += f" of {monthly['quota']} allowed"
        if self.api.get("demo"):  # (the built-in emulator: no network, no quota)
            api = ("API: no call to a quota (the demo's content, from the store)"
                   if self.from_cache else "API: no call to a quota (the demo's content: "
                   f"{_plural(calls, 'request')} to the built-in emulator)")
        else:
            api = (f"API: {_plural(calls, 'call')}{offline} "
                   f"({saved} saved by the cache{budget})")
        return f"{self._pages_text()}; {api}; {self._images_text()}{self.seconds:.2f} s"

    def _pages_text(self) -> str:
        """What happened to the pages: built (written, unchanged, removed), or rendered again
        into the very bytes they had (`--force` on unchanged content)."""
        pages, source = self.pages, f"from {_plural(self.articles, 'article')}"
        if self.rendered and not self.written and not self.removed:
            what = (_plural(pages["count"], "page") if self.rendered >= self.html_pages
                    else f"{self.rendered:,} of {_plural(pages['count'], 'page')}")
            return (f"rendered {what} {source}, all identical to the previous output "
                    f"({self.files:,} files unchanged)")
        return (f"built {_plural(pages['count'], 'page')} {source} ({pages['written']:,} "
                f"written, {pages['unchanged']:,} unchanged, {pages['removed']:,} removed; "
                f"{self.files:,} files in all, {len(self.written):,} written)")

    def _images_text(self) -> str:
        shown = int(self.images.get("images") or 0)
        if not shown:
            return ""
        requests = int(self.images.get("requests") or 0)
        failed = int(self.images.get("failed") or 0)
        return (f"images: {shown} ({_plural(requests, 'request')}"
                + (f", {failed} unusable" if failed else "") + "); ")

    def to_json(self) -> dict[str, Any]:
        """The `--report FILE` document (SPEC: pages, api, timings; more keys welcome).

        `warnings` lists the messages logged (from the process's warning counter, which
        `sitegen.logs.setup_logging` installs), `warning_count` their number.
        """
        logged = list(warning_counter().messages)
        return {
            "version": REPORT_VERSION,
            "status": 0,
            "error": None,
            "pages": {**self.pages, "rendered": self.rendered, "html": self.html_pages},
            "files": {"count": self.files, "written": len(self.written),
                      "unchanged": len(self.unchanged), "removed": len(self.removed)},
            "articles": self.articles,
            "api": self.api,
            "from_cache": self.from_cache,
            "images": self.images,
            "search": self.search,
            "warnings": logged,
            "warning_count": max(self.warnings, len(logged)),
            "output_changed": self.output_changed,
            "paths": {"written": sorted(self.written), "removed": sorted(self.removed)},
            "why": dict(sorted(self.why.items())),
            "timings": {name: round(value, 4) for name, value in self.timings.items()},
            "seconds": round(self.seconds, 4),
        }

    def dumps(self) -> str:
        """The report as pretty, key-sorted JSON."""
        return _dumps(self.to_json())


def _dumps(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def failure_json(error: SitegenError | None, exit_code: int, seconds: float,
                 api: dict[str, Any] | None = None,
                 timings: dict[str, float] | None = None) -> dict[str, Any]:
    """The `--report FILE` document of a build that ended with *exit_code* (1-5, 130).

    Nothing was committed, so every page count is 0 (the previous output is untouched);
    *api* is what the sync had spent when it stopped (`sitegen.fetch.ledger`), if anything,
    and *timings* the stages the build had run, the failed one included.
    """
    logged = list(warning_counter().messages)
    return {
        "version": REPORT_VERSION,
        "status": exit_code,
        "error": {"code": exit_code,
                  "message": str(error) if error is not None else "interrupted"},
        "pages": {"count": 0, "written": 0, "unchanged": 0, "removed": 0, "html": 0,
                  "rendered": 0},
        "files": {"count": 0, "written": 0, "unchanged": 0, "removed": 0},
        "articles": 0,
        "api": api or {"version": None, "calls": {}, "total": 0, "retries": 0},
        "from_cache": False,
        "warnings": logged,
        "warning_count": len(logged),
        "output_changed": False,
        "paths": {"written": [], "removed": []},
        "why": {},
        "timings": {name: round(value, 4) for name, value in (timings or {}).items()},
        "seconds": round(seconds, 4),
    }


def write_report(path: str | None, report: BuildReport) -> None:
    """Write a finished build's `--report FILE` (nothing when *path* is None)."""
    if path:
        _write(path, report.dumps(), built=True)


def _write(path: str, text: str, *, built: bool) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as error:
        what = "the site was built, but " if built else ""
        raise BuildError(f"{what}the report {path} could not be written "
                         f"({error.strerror or error}): pass a --report path in a writable "
                         "folder") from None


class ReportFile:
    """`--report FILE` for one `sitegen build`, whatever its exit status.

    `cli.py` opens it before the command runs; a finished build writes its own report
    (`write_report`), and `failed` writes the failure document for any other exit. The
    calls a failed sync had made are the newest call ledger's started since (see
    `sitegen.fetch.ledger.latest_ledger`).
    """

    def __init__(self, path: str | None) -> None:
        self.path = path
        self._start = time.perf_counter()
        from sitegen.fetch.ledger import ledgers_started

        self._ledgers = ledgers_started()
        self._timings = _timings_started

    def failed(self, error: SitegenError | None, exit_code: int) -> None:
        """Write the report of a build that ended with *exit_code*; never raises."""
        if not self.path:
            return
        from sitegen.fetch.ledger import latest_ledger

        ledger = latest_ledger(since=self._ledgers)
        timed = (_latest_timings[1].stages if _latest_timings is not None
                 and _latest_timings[0] > self._timings else None)
        document = failure_json(error, exit_code, time.perf_counter() - self._start,
                                ledger.to_report() if ledger is not None else None,
                                dict(timed) if timed is not None else None)
        try:
            _write(self.path, _dumps(document), built=False)
        except BuildError as problem:
            print(f"warning: {problem}", file=sys.stderr)


def report_file(options: object) -> ReportFile:
    """The `--report` of a parsed `sitegen build` command line (a no-op without one)."""
    path = getattr(options, "report", None)
    return ReportFile(os.fspath(path) if path else None)
