"""`python -m sitegen.cireport github|gitlab REPORT`: a build report on the CI's own surfaces.

Role: the scaffolded CI workflows run this after `sitegen build --report REPORT`,
whatever its exit status. On GitHub Actions every warning becomes a `::warning`
annotation and the step summary (`$GITHUB_STEP_SUMMARY`) gets a table of pages, API
calls and warnings; on GitLab CI the same lines go to the job log (the report itself is
the job's artifact). It only reads the report: it must never fail the job (a missing or
unreadable report is one line saying so, exit 0), never build, and never print a key
(reports hold none).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

#: At most this many warnings become annotations (GitHub shows only the first few anyway).
MAX_ANNOTATIONS = 50


def _escape_data(text: str) -> str:
    """A workflow command's message, escaped as the Actions runner reads it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _table(report: dict[str, Any], key: str) -> dict[str, Any]:
    found = report.get(key)
    return found if isinstance(found, dict) else {}


def _count(value: Any) -> int:
    return value if isinstance(value, int) else 0


def summary_rows(report: dict[str, Any]) -> list[tuple[str, str]]:
    """The facts of one report as (what, value) rows."""
    pages = _table(report, "pages")
    api = _table(report, "api")
    warnings = _warnings(report)
    status = report.get("status")
    error = report.get("error") if isinstance(report.get("error"), dict) else None
    outcome = "built" if status == 0 else f"exit {status}: {error['message']}" if error else (
        f"exit {status}")
    calls = f"{_count(api.get('total'))}"
    monthly = api.get("monthly")
    if isinstance(monthly, dict) and monthly.get("projected") is not None:
        calls += f" (~{monthly['projected']} a month at the schedule"
        calls += f", of {monthly['quota']} allowed)" if monthly.get("quota") is not None else ")"
    return [
        ("outcome", outcome),
        ("pages", f"{_count(pages.get('count'))} ({_count(pages.get('written'))} written, "
                  f"{_count(pages.get('unchanged'))} unchanged, "
                  f"{_count(pages.get('removed'))} removed)"),
        ("API calls", calls),
        ("warnings", str(len(warnings))),
    ]


def _warnings(report: dict[str, Any]) -> list[str]:
    found = report.get("warnings")
    return [str(item) for item in found] if isinstance(found, list) else []


def github(report: dict[str, Any], out: TextIO, summary: TextIO | None) -> None:
    """Annotations on *out*; the Markdown summary on *summary* (when the runner gives one)."""
    warnings = _warnings(report)
    for message in warnings[:MAX_ANNOTATIONS]:
        out.write(f"::warning title=sitegen::{_escape_data(message)}\n")
    if summary is None:
        return
    lines = ["### sitegen build", "", "| | |", "|---|---|"]
    lines += [f"| {what} | {value.replace('|', '/')} |" for what, value in summary_rows(report)]
    if warnings:
        lines += ["", "<details><summary>warnings</summary>", ""]
        lines += [f"- {message.replace('<', '&lt;')}" for message in warnings]
        lines += ["", "</details>"]
    summary.write("\n".join(lines) + "\n")


def gitlab(report: dict[str, Any], out: TextIO) -> None:
    """The facts, then each warning, as plain lines of the job log."""
    for what, value in summary_rows(report):
        out.write(f"sitegen {what}: {value}\n")
    for message in _warnings(report):
        out.write(f"WARNING: sitegen: {message}\n")


def main(argv: list[str]) -> int:
    """Run for `github|gitlab REPORT`; always 0 (the build's own status decides the job)."""
    if len(argv) != 2 or argv[0] not in ("github", "gitlab"):
        print("usage: python -m sitegen.cireport github|gitlab REPORT", file=sys.stderr)
        return 0
    kind, path = argv
    try:
        report = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(report, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as error:
        print(f"sitegen: no build report to show ({path}: {error})")
        return 0
    if kind == "gitlab":
        gitlab(report, sys.stdout)
        return 0
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        github(report, sys.stdout, None)
        return 0
    with open(target, "a", encoding="utf-8") as summary:
        github(report, sys.stdout, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
