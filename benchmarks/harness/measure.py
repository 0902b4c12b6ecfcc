"""Run one process and measure it: wall time, CPU time and peak RSS of that process alone.

Role: the only place the harness starts a measured process. Wall time comes from
`time.perf_counter`; CPU (user + system) and peak RSS come from `os.wait4`, which
returns the rusage of exactly the child it reaps (its own waited-for children
included), so a large earlier child cannot leak into a later figure the way
`RUSAGE_CHILDREN`'s running maximum would. It must never swallow a failure: a non-zero
exit or a timeout raises `StepFailed` with the command's last output line.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


class StepFailed(Exception):
    """A benchmark step could not produce its figure; the message is one sentence."""


@dataclass(frozen=True)
class Sample:
    """One measured run of one process."""

    wall: float  # seconds, perf_counter around spawn → reap
    cpu: float  # seconds, user + system of the process (and its reaped children)
    rss_mb: float  # peak resident set size, MiB
    output: str  # the combined stdout/stderr, for diagnostics and parsing


def last_line(text: str) -> str:
    """The last non-empty line of *text* (what sitegen prints as the cause), or ''."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def run_process(
    command: Sequence[str],
    *,
    label: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 600.0,
) -> Sample:
    """Run *command* to completion and measure it; raise StepFailed unless it exits 0."""
    with tempfile.TemporaryFile() as sink:
        start = time.perf_counter()
        try:
            process = subprocess.Popen(
                list(command), cwd=cwd, env=dict(env) if env is not None else None,
                stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT,
                start_new_session=True)
        except OSError as error:
            raise StepFailed(f"{label}: cannot start {command[0]!r} ({error})") from None
        lock = threading.Lock()
        state = {"reaped": False, "timed_out": False}

        def _kill() -> None:
            with lock:
                if not state["reaped"]:
                    state["timed_out"] = True
                    os.killpg(process.pid, signal.SIGKILL)

        timer = threading.Timer(timeout, _kill)
        timer.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)
        except BaseException:  # Ctrl-C: the child has its own session, so stop it here
            with lock:
                state["reaped"] = True
                os.killpg(process.pid, signal.SIGKILL)
            os.waitpid(process.pid, 0)
            raise
        finally:
            with lock:
                state["reaped"] = True
            timer.cancel()
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        sink.seek(0)
        output = sink.read().decode("utf-8", "replace")
    if state["timed_out"]:
        raise StepFailed(f"{label}: timed out after {timeout:.0f} s")
    if process.returncode != 0:
        cause = last_line(output) or "no output"
        raise StepFailed(f"{label}: exited with status {process.returncode}: {cause}")
    return Sample(wall=wall, cpu=usage.ru_utime + usage.ru_stime,
                  rss_mb=usage.ru_maxrss / 1024.0, output=output)
