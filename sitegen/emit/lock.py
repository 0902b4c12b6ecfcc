"""One build at a time per output folder: an exclusive flock on a file beside the output.

Role: `OutputLock` makes a second build of the same output wait (polling, so it
can give up) up to a bound, then fail with one clear line. The lock file is left
in place between builds (removing it would race with a waiting build); the kernel
drops the lock when the holder exits or is killed, so a `kill -9` never leaves a
stale lock. This module must never write anything but its own lock file.
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from pathlib import Path

from sitegen.errors import BuildError

log = logging.getLogger("sitegen.emit")

_POLL_SECONDS = 0.05


class OutputLock:
    """An exclusive, process-wide lock on one output folder."""

    def __init__(self, path: Path, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, waiting up to the timeout; BuildError when another build keeps it."""
        if self._fd is not None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as error:
            raise BuildError(
                f"cannot create the lock file {self.path}: {error.strerror}; check that its "
                "folder is writable"
            ) from None
        deadline = time.monotonic() + self.timeout
        announced = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise BuildError(
                        f"another sitegen build is still writing {self.path.parent} (waited "
                        f"{self.timeout:g} s for {self.path.name}): let it finish, then retry"
                    ) from None
                if not announced:
                    log.info("waiting for another build of this output to finish")
                    announced = True
                time.sleep(_POLL_SECONDS)
        self._fd = fd

    def release(self) -> None:
        """Drop the lock (the file stays)."""
        if self._fd is None:
            return
        try:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            os.close(self._fd)
            self._fd = None
