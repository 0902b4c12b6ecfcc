"""A pure computation shared out over the machine's cores: one share here, the others forked.

Role: `shared(work)` runs `work(part, parts)` for every part: part 0 in this process, each
other part in a forked child that inherits everything in memory (the site, the renderer)
and sends back what its share gave, written with `marshal` (plain values only: bytes,
strings, numbers, lists, tuples, dicts). The plan uses it for its per-page and per-read
checks, whole-site work that one core would do alone. A child that fails, dies, or is
much slower than this process's own share (`_PATIENCE`) is ended and its share computed
here, so the result never depends on a child; children ignore Ctrl-C (the building process
handles it and ends them). *work* must be pure: a child's changes to memory are lost, and
it must never write files or log. This module must never write files or log itself.
"""

from __future__ import annotations

import gc
import marshal
import os
import select
import signal
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

#: A child gets this many times the parent's own share's time (and at least `_GRACE` s).
_PATIENCE, _GRACE = 3.0, 2.0


def core_count() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (not Linux)
        return os.cpu_count() or 1


def shared(work: Callable[[int, int], T], parts: int | None = None) -> list[T]:
    """[work(0, n), work(1, n), …]: part 0 here, the others each in a forked child."""
    count = max(1, parts if parts is not None else min(core_count(), 4))
    if count == 1 or not hasattr(os, "fork"):
        return [work(0, 1)]
    gc.freeze()  # (the children's collections never walk, so never copy, what they share)
    try:
        children = [_fork(work, part, count) for part in range(1, count)]
    finally:
        gc.unfreeze()
    started = time.monotonic()
    try:
        mine = work(0, count)
    except BaseException:
        for pid, reader in children:
            _end(pid, reader)
        raise
    deadline = time.monotonic() + max(_GRACE, _PATIENCE * (time.monotonic() - started))
    results: list[T] = [mine]
    for part, (pid, reader) in enumerate(children, start=1):
        data = _collect(pid, reader, deadline)
        results.append(marshal.loads(data) if data is not None else work(part, count))
    return results


def _fork(work: Callable[[int, int], Any], part: int, parts: int) -> tuple[int, int]:
    """A child computing *part* and writing it (marshal) into the pipe whose end is returned."""
    reader, writer = os.pipe()
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        pid = os.fork()
        if pid == 0:  # the child: compute, send, and leave without running any cleanup
            code = 1
            try:
                os.close(reader)
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                data = marshal.dumps(work(part, parts))
                view = memoryview(data)
                while view:
                    view = view[os.write(writer, view):]
                code = 0
            finally:
                os._exit(code)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    os.close(writer)
    return pid, reader


def _collect(pid: int, reader: int, deadline: float) -> bytes | None:
    """What the child *pid* sent, or None when it failed or is past *deadline* (then ended)."""
    chunks: list[bytes] = []
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([reader], [], [], left)[0]:
                _end(pid, reader)
                return None
            chunk = os.read(reader, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:
        _end(pid, reader)
        return None
    os.close(reader)
    _, status = os.waitpid(pid, 0)
    return b"".join(chunks) if os.waitstatus_to_exitcode(status) == 0 else None


def _end(pid: int, reader: int) -> None:
    """End the child *pid* and close its pipe."""
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:
        pass
    try:
        os.close(reader)
    except OSError:
        pass


__all__ = ["core_count", "shared"]
