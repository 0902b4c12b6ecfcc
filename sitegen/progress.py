"""The status line of a long stage on a terminal (`rendering 120/5827`), silent elsewhere.

Role: `Progress` draws one updating line on a terminal, throttled, and tells the logging
setup (`sitegen.logs.status_showing`) it is there, so a warning logged meanwhile clears it
first. The sync (`sitegen.fetch`), the build and the preview feed it. It must never log, and
never draw on anything but a terminal (CI logs and pipes get nothing).
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from sitegen.logs import status_showing


class Progress:
    """A single updating status line on a terminal; silent everywhere else."""

    def __init__(self, stream: TextIO | None = None, enabled: bool | None = None,
                 interval: float = 0.1) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.interval = interval
        self._last = 0.0
        self._shown = False

    def update(self, label: str, done: int, total: int) -> None:
        """Show `label done/total` (throttled; the final count is always shown)."""
        if self.enabled:
            self.status(f"{label} {done}/{total}", final=done >= total)

    def status(self, text: str, *, final: bool = False) -> None:
        """Show *text* as the status line (one redraw per interval at most, unless final)."""
        if not self.enabled:
            return
        now = time.monotonic()
        if not final and self._shown and now - self._last < self.interval:
            return
        self._last = now
        self.stream.write(f"\r\033[K{text}")
        self.stream.flush()
        if not self._shown:
            self._shown = True
            status_showing(self.stream, self.clear)

    def clear(self) -> None:
        """Erase the status line so the next log line starts clean."""
        if self.enabled and self._shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._shown = False
            status_showing(self.stream, None)


__all__ = ["Progress"]
