"""A pure computation shared out over the machine's cores: one share here, the others forked.

Role: `shared(work)` runs `work(part, parts)` for every part: part 0 in this process, each
other part in a child forked by `multiprocessing` (its "fork" context: the child inherits
everything in memory, the site and the renderer, and *work* needs no pickling) that sends
back what its share gave, written with `marshal` (plain values only: bytes, strings,
numbers, lists, tuples, dicts). The plan uses it for its per-page and per-read checks,
whole-site work that one core would do alone. A child that fails, dies, or is much slower
than this process's own share (`_PATIENCE`) is ended and its share computed here, so the
result never depends on a child; children ignore Ctrl-C (the building process handles it
and ends them). *work* must be pure: a child's changes to memory are lost, and it must
never write files or log. This module must never write files or log itself.
"""

from __future__ import annotations

import gc
import marshal
import os
import signal
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # multiprocessing is imported when a share is forked
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

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
    import multiprocessing

    count = max(1, parts if parts is not None else min(core_count(), 4))
    if count == 1 or "fork" not in multiprocessing.get_all_start_methods():
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
        for process, reader in children:
            _end(process, reader)
        raise
    deadline = time.monotonic() + max(_GRACE, _PATIENCE * (time.monotonic() - started))
    results: list[T] = [mine]
    for part, (process, reader) in enumerate(children, start=1):
        data = _collect(process, reader, deadline)
        results.append(marshal.loads(data) if data is not None else work(part, count))
    return results


def _fork(work: Callable[[int, int], Any], part: int,
          parts: int) -> tuple[BaseProcess, Connection]:
    """A started child computing *part*, and the end of the pipe it answers on."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    reader, writer = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(work, part, parts, writer), daemon=True)
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:  # (no signal reaches the child before it sets its own handling)
        process.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    writer.close()
    return process, reader


def _child(work: Callable[[int, int], Any], part: int, parts: int,
           writer: Connection) -> None:
    """In the child: compute the share, send it, and end (code 1, silently, on a failure)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        writer.send_bytes(marshal.dumps(work(part, parts)))
    except BaseException:  # (the parent computes this share itself)
        sys.exit(1)


def _collect(process: BaseProcess, reader: Connection, deadline: float) -> bytes | None:
    """What *process* sent, or None when it failed or is past *deadline* (then ended)."""
    try:
        if reader.poll(max(0.0, deadline - time.monotonic())):
            data: bytes | None = reader.recv_bytes()
        else:
            data = None
    except (EOFError, OSError):
        data = None
    if data is None:
        _end(process, reader)
        return None
    reader.close()
    process.join()
    return data if process.exitcode == 0 else None


def _end(process: BaseProcess, reader: Connection) -> None:
    """End the child *process* and close its pipe."""
    process.kill()
    process.join()
    reader.close()


__all__ = ["core_count", "shared"]
