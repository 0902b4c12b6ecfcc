"""Decode and encode in child processes that can be stopped: the images stage's deadlines.

Role: make each image's variants (`sitegen.images.process`) in a child process (forked where
the platform can), at most `Limits.workers` at once, so that no image holds the build:
- each image may use `Limits.each` seconds of CPU (`[images] decode_seconds`), counted by
  the kernel (`RLIMIT_CPU`: the child ends on SIGXCPU), so a busy machine does not make a
  good image look slow; past it the image is refused for good (its bytes cost that much
  every time: a progressive JPEG whose scans repeat, say). Where no CPU limit can be set,
  the wall clock decides;
- a child that gives no answer within `WALL_FACTOR` times that and `WALL_GRACE` seconds
  more in wall time (a machine swapping) is ended, and the image refused for this build
  only;
- at `Limits.until` (the stage's deadline, `[images] deadline`) every child is ended and
  the images not made yet are left out of the answer (made by a later build);
- a child ended by a signal it did not raise itself (the OOM killer, the preview stopping
  its children) leaves its image out of the answer too, and so does a machine that cannot
  start a child at all; another crash is this build's refusal of the image.
Children ignore Ctrl-C (SIGINT reaches the whole process group): the building process
handles it, and no child outlives `process_all` (every one is killed in its `finally`), so
an interrupt takes effect as soon as the parent sees it. It must never write files, log,
or touch the store; a child must never do anything but decode and encode.
"""

from __future__ import annotations

import gc
import math
import signal
import sys
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from sitegen.images.process import ImageRefused, Processed, Settings, process

if TYPE_CHECKING:  # multiprocessing is imported when an image is to be made
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

#: An image's refusal: (the reason, whether asking again would not help).
Refusal = tuple[str, bool]
Result = Processed | Refusal
#: A child answering nothing for this many times its CPU allowance, and `WALL_GRACE` s
#: more (wall clock: a machine so busy or swapping that CPU time hardly passes), is ended.
WALL_FACTOR, WALL_GRACE = 10.0, 30.0
_SIGXCPU = getattr(signal, "SIGXCPU", None)
_STOPPED = {signal.SIGKILL, signal.SIGTERM}  #: a child ended by someone else


@dataclass(frozen=True, slots=True)
class Limits:
    """How long the images may take: `each` (CPU seconds per image), `until` (the stage's
    deadline, on `time.monotonic()`), and how many children work at once."""

    each: float
    until: float
    workers: int = 2


def make_one(data: bytes, settings: Settings) -> Result:
    """The image made of *data*, or why not (an exception is the image's refusal)."""
    try:
        return process(data, settings)
    except ImageRefused as error:
        return str(error), True
    except MemoryError:  # (this machine's trouble, not the image's: not remembered)
        return "it cannot be processed: out of memory", False
    except Exception as error:  # noqa: BLE001 - an image's trouble is a warning, never the build's
        return f"it cannot be processed ({type(error).__name__}: {error})", True


def slow_reason(each: float) -> str:
    """The refusal of an image whose processing took more than *each* seconds."""
    return (f"decoding and resizing it took more than {each:g} s of CPU ([images] "
            "decode_seconds; raise it to allow slower images)")


@dataclass(slots=True)
class _Child:
    process: BaseProcess
    pipe: Connection
    job: str = ""  #: the image it is making ("": idle)
    started: float = 0.0


def process_all(jobs: Mapping[str, bytes], settings: Settings, limits: Limits
                ) -> dict[str, Result]:
    """What became of each image of *jobs* (by sha256) within *limits*: those the stage's
    deadline (or a stopped child) left unmade are not in the answer."""
    queue = deque(sorted(jobs))
    results: dict[str, Result] = {}
    children: list[_Child] = []
    try:
        while queue or any(c.job for c in children):
            now = time.monotonic()
            if now >= limits.until:
                break
            if not _assign(queue, jobs, children, settings, limits):
                break  # (no child could be started: the images are left for a later build)
            _collect(children, results, limits)
    finally:
        for child in children:
            _end(child)
    return results


def _assign(queue: deque[str], jobs: Mapping[str, bytes], children: list[_Child],
            settings: Settings, limits: Limits) -> bool:
    """Give each idle child (new ones up to `limits.workers`) the next image; False when
    there is no child at all (none could be started: out of processes or memory)."""
    while queue:
        idle = next((c for c in children if not c.job), None)
        if idle is None:
            if len(children) >= max(1, limits.workers):
                return True
            try:
                idle = _start(settings, limits.each)
            except OSError:
                return bool(children)
            children.append(idle)
        idle.job = queue.popleft()
        idle.started = time.monotonic()
        try:
            idle.pipe.send((idle.job, jobs[idle.job]))
        except OSError:  # (it died already: `_collect` sees it end)
            pass
    return True


def _collect(children: list[_Child], results: dict[str, Result], limits: Limits) -> None:
    """Wait for an answer, a child's end or the next deadline; take what came."""
    from multiprocessing.connection import wait

    busy = [c for c in children if c.job]
    now = time.monotonic()
    wall = _wall(limits.each)
    soonest = min([limits.until, *(c.started + wall for c in busy)])
    wait([*(c.pipe for c in busy), *(c.process.sentinel for c in busy)],
         timeout=max(0.0, soonest - now))
    for child in busy:
        answer = _answer(child)
        if answer is not None:
            results[child.job] = answer
            child.job = ""
            continue
        if child.process.is_alive():
            if time.monotonic() - child.started <= wall:
                continue
            results[child.job] = _overdue(limits.each)
        else:
            ended = _ended(child, limits.each)
            if ended is not None:
                results[child.job] = ended
        _end(child)
        children.remove(child)


def _answer(child: _Child) -> Result | None:
    """The child's answer when it sent one (None: not yet, or it died first)."""
    try:
        if not child.pipe.poll():
            return None
        job, result = child.pipe.recv()
    except (EOFError, OSError):
        return None
    return cast(Result, result) if job == child.job else None


def _wall(each: float) -> float:
    """Seconds of wall time a child may take over one image."""
    return each * WALL_FACTOR + WALL_GRACE if _SIGXCPU is not None else each


def _overdue(each: float) -> Refusal:
    """A child with no answer long past its allowance: the CPU limit decides when it can
    (the machine is busy: asked again next build), else the wall clock (for good)."""
    if _SIGXCPU is None:
        return slow_reason(each), True
    return (f"it was not made within {_wall(each):g} s (the machine is busy; "
            "it is tried again by the next build)", False)


def _ended(child: _Child, each: float) -> Refusal | None:
    """Why the child that died making its image did (None: stopped by someone else)."""
    child.process.join(1.0)
    code = child.process.exitcode
    if code is not None and code < 0 and -code == _SIGXCPU:
        return slow_reason(each), True
    if code is not None and code < 0 and -code in _STOPPED:
        return None
    return f"it cannot be processed (its decoder crashed: exit {code})", False


def _start(settings: Settings, each: float) -> _Child:
    """A started child and our end of its pipe (no signal reaches it before it ignores
    SIGINT; everything this process holds moves out of the collector's way first)."""
    import multiprocessing

    context = (multiprocessing.get_context("fork")
               if "fork" in multiprocessing.get_all_start_methods()
               else multiprocessing.get_context("spawn"))
    ours, theirs = context.Pipe(duplex=True)
    child = context.Process(target=_serve, args=(theirs, settings, each), daemon=True)
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    gc.freeze()  # (the child's collections never walk, so never copy, what it inherits)
    try:
        child.start()
    finally:
        gc.unfreeze()
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    theirs.close()
    return _Child(child, ours)


def _end(child: _Child) -> None:
    if child.process.is_alive():
        child.process.kill()
    child.process.join()
    child.pipe.close()


def _serve(pipe: Connection, settings: Settings, each: float) -> None:
    """In the child: make each image it is sent, under its CPU allowance, until the pipe
    closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    _no_core()
    while True:
        try:
            job, data = pipe.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            sys.exit(0)
        _cpu_allowance(each)
        pipe.send((job, make_one(data, settings)))


def _no_core() -> None:
    """No core file when the CPU limit ends the child."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ImportError, ValueError, OSError):
        pass


def _cpu_allowance(each: float) -> None:
    """Let this process use *each* more seconds of CPU, then end on SIGXCPU."""
    try:
        import resource
    except ImportError:  # (not on this platform: the parent's wall clock decides)
        return
    used = resource.getrusage(resource.RUSAGE_SELF)
    limit = math.ceil(used.ru_utime + used.ru_stime + each)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (limit, hard))
    except (ValueError, OSError):
        pass


__all__ = ["Limits", "Refusal", "Result", "make_one", "process_all", "slow_reason"]
