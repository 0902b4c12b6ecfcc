"""Many pages over a fork-based process pool, in a deterministic order.

Role: `render_all` renders pages through a `Renderer` and yields, in the pages'
order, each page's path and what a `Pack` made of its bytes and recorded reads (by
default both as they are); with many pages and more than one core, forked workers do
it in chunks (they inherit the site, the renderer and the bodies already in memory,
run the pack — the build's stages each page's bytes and scans its links there — and
send back the bodies they rendered so the parent can store them). `render_bodies`
renders the article bodies the pages will show first, over workers of its own when
there are many, and hands them to the parent, so the page workers forked after inherit
every body and none renders one twice (a feed shows bodies of articles whose pages
another worker renders). A worker that dies
or hangs ends the build with one sentence. Workers ignore Ctrl-C (SIGINT): the building
process handles it and ends them, so an interrupt prints no worker tracebacks; a *stop*
event set by another thread (the preview stopping) ends the pool at the next chunk. This
module must never write files itself and never log from a worker.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from sitegen.errors import BuildError, Interrupted
from sitegen.model.views import ArticleView, Page

if TYPE_CHECKING:  # multiprocessing is imported when a pool is needed
    import multiprocessing.pool
    import threading

    from sitegen.render.bodies import RenderedBody
    from sitegen.render.pages import Renderer

#: Below this many pages, rendering stays in-process (a pool costs more than it saves).
PARALLEL_THRESHOLD = 200
CHUNK_SIZE = 48
#: Seconds a worker may take over one chunk (well under a second) before the build gives up.
WORKER_TIMEOUT = 120.0

#: What becomes of a page's reads and bytes before they are sent back (default: both as
#: they are). It runs in the worker, so work on a page's bytes (staging them in the output's
#: staging folder, the link check's scan) is spread over the workers too.
Pack = Callable[[Page, frozenset[str], bytes], Any]
#: A rendered page: output path, and its bytes and reads as `Pack` made them.
Rendered = tuple[str, Any]
Answer = tuple[list[Rendered], dict[str, "RenderedBody"]]
T = TypeVar("T")

# What a forked worker does with a chunk (start, end) of its work (set just before the fork).
_FORK_WORK: Callable[[int, int], Any] | None = None


def _keep(page: Page, reads: frozenset[str], data: bytes) -> tuple[bytes, frozenset[str]]:
    return data, reads


def _render(renderer: Renderer, page: Page, pack: Pack) -> Rendered:
    data, reads = renderer.render_recorded(page)
    return page.path, pack(page, reads, data)


def _run_chunk(task: tuple[int, int]) -> Any:
    """One chunk of the forked work, in a worker."""
    assert _FORK_WORK is not None
    return _FORK_WORK(*task)


def _new_pool(count: int) -> multiprocessing.pool.Pool:
    """A fork pool whose workers end on SIGTERM and ignore SIGINT, whatever the parent does.

    SIGTERM and SIGINT stay blocked while the workers are forked (the pool's own threads,
    which fork replacements, inherit the mask) and each worker restores SIGTERM's default
    action, so `Pool.terminate` never waits on a worker running a Python-level handler (the
    preview's) that cannot run while the worker blocks on the task queue, and ignores SIGINT:
    a Ctrl-C reaches the whole process group, and only the building process acts on it (it
    ends the workers), so no worker prints a KeyboardInterrupt traceback or a handler's line.
    """
    import multiprocessing
    import signal

    context = multiprocessing.get_context("fork")
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    try:
        return context.Pool(count, initializer=_worker_signals)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _worker_signals() -> None:
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # (a pending one is dropped with it)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})


def _answers(results: multiprocessing.pool.IMapIterator[T],
             stop: threading.Event | None) -> Iterator[T]:
    """The pool's answers in order; a worker silent for WORKER_TIMEOUT s fails the build
    (waited for in short steps, so a *stop* set meanwhile ends it within a quarter second)."""
    import time
    from multiprocessing import TimeoutError as WorkerTimeout

    step = WORKER_TIMEOUT if stop is None else 0.25
    while True:
        deadline = time.monotonic() + WORKER_TIMEOUT
        while True:
            _check(stop)
            try:
                answer = results.next(min(step, max(deadline - time.monotonic(), 0.0)))
                break
            except StopIteration:
                return
            except WorkerTimeout:
                if time.monotonic() < deadline:
                    continue
                raise BuildError(
                    f"a render worker gave no answer for {WORKER_TIMEOUT:.0f} s (it was killed "
                    "or is stuck): the previous output was kept; build again, and if it happens "
                    "again report it as a sitegen bug") from None
        yield answer


def _check(stop: threading.Event | None) -> None:
    if stop is not None and stop.is_set():
        raise Interrupted("stopped while rendering")


def _parallel(count: int, items: int) -> bool:
    """Whether *items* are worth a pool of *count* forked workers here."""
    if count <= 1 or items < PARALLEL_THRESHOLD:
        return False
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def _forked(work: Callable[[int, int], T], items: int, count: int,
            stop: threading.Event | None) -> Iterator[T]:
    """`work(start, end)` over chunks of `range(items)` in *count* forked workers: each
    chunk's answer, in order."""
    global _FORK_WORK
    _FORK_WORK = work
    # Everything the workers inherit (the site, the renderer, the bodies) moves to the
    # collector's permanent generation: a worker's collections never walk those objects,
    # so they neither cost it time nor write to (and so copy) the pages it shares.
    gc.freeze()
    try:
        bounds = [(i, min(i + CHUNK_SIZE, items)) for i in range(0, items, CHUNK_SIZE)]
        with _new_pool(count) as pool:
            yield from _answers(pool.imap(_run_chunk, bounds), stop)
    finally:
        _FORK_WORK = None
        gc.unfreeze()  # the preview lives on: what this build held may be collected again


def render_bodies(renderer: Renderer, articles: Sequence[ArticleView],
                  workers: int | None = None, stop: threading.Event | None = None) -> int:
    """Render the bodies of *articles* that are not in memory yet (see the module
    docstring): in this process when they are few, else over forked workers, which send
    them back. How many bodies were rendered."""
    missing = renderer.unrendered(articles)
    count = workers if workers is not None else (os.cpu_count() or 1)
    if not _parallel(count, len(missing)):
        for article in missing:
            _check(stop)
            renderer.body(article)
        return len(missing)

    def chunk(start: int, end: int) -> dict[str, RenderedBody]:
        for article in missing[start:end]:
            renderer.body(article)
        fresh, renderer.fresh_bodies = renderer.fresh_bodies, {}
        return fresh

    for fresh in _forked(chunk, len(missing), count, stop):
        renderer.take_bodies(fresh)
    return len(missing)


def render_all(renderer: Renderer, pages: Sequence[Page], workers: int | None = None,
               pack: Pack = _keep, stop: threading.Event | None = None) -> Iterator[Rendered]:
    """(path, packed) of every page, in order (see the module docstring).

    *pack* turns each page's bytes and reads into what is sent back (it runs in the worker).
    Close the iterator when the consumer fails: that ends the pool at once. Once *stop* is
    set, the next page (in-process) or chunk raises `Interrupted`.
    """
    count = workers if workers is not None else (os.cpu_count() or 1)
    if not _parallel(count, len(pages)):
        for page in pages:
            _check(stop)
            yield _render(renderer, page, pack)
        return

    def chunk(start: int, end: int) -> Answer:
        done = [_render(renderer, page, pack) for page in pages[start:end]]
        fresh, renderer.fresh_bodies = renderer.fresh_bodies, {}
        return done, fresh

    for results, fresh in _forked(chunk, len(pages), count, stop):
        renderer.take_bodies(fresh)
        yield from results
