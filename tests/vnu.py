"""The current Nu HTML checker (npm `vnu-jar`, pinned in package.json) for the tests.

`npm ci` at the repository root puts `vnu.jar` under node_modules/; `SITEGEN_VNU_JAR`
names another copy. Without Java or the jar a test skips, except under CI, where it fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
JAR = ROOT / "node_modules" / "vnu-jar" / "build" / "dist" / "vnu.jar"


def vnu_jar() -> Path:
    """The checker's jar, or skip (fail under CI) when Java or the jar is missing."""
    jar = Path(os.environ.get("SITEGEN_VNU_JAR", "") or JAR)
    problem = ("" if shutil.which("java") else "Java is not installed") or (
        "" if jar.is_file() else f"{jar} is missing: run `npm ci` at the repository root")
    if problem:
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(f"the Nu HTML checker cannot run: {problem}")
        pytest.skip(problem)
    return jar


def vnu_errors(paths: Sequence[Path]) -> list[str]:
    """Every error the Nu checker finds in *paths* (files or folders of HTML), as text."""
    jar = vnu_jar()
    result = subprocess.run(
        ["java", "-Xss4m", "-jar", str(jar), "--errors-only", "--skip-non-html",
         "--format", "json", *map(str, paths)],
        capture_output=True, text=True, timeout=600, check=False)
    messages = json.loads(result.stderr or result.stdout or '{"messages": []}')["messages"]
    return [f"{m.get('url', '')}:{m.get('lastLine', '?')}: {m.get('message', '')}"
            for m in messages if m.get("type") == "error" or m.get("subType") == "fatal"]
