"""Test helper: `sitegen ARGS --report` run in a site folder, as a user runs it; the report."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from sitegen.cli import main


def cli_report(root: Path, *args: str) -> dict[str, Any]:
    """`sitegen ARGS --report` in *root* (it must exit 0); the report."""
    report = root / "report.json"
    cwd = os.getcwd()
    os.chdir(root)
    try:
        assert main([*args, "--report", str(report)]) == 0
    finally:
        os.chdir(cwd)
    found = json.loads(report.read_text())
    report.unlink()
    assert isinstance(found, dict)
    return found
