"""Many pages over a fork-based process pool, in a deterministic order.

Role: `render_all` renders pages through a `Renderer` and yields, in the pages'
order, each page's path and what a `Pack` made of its bytes and recorded reads (by
default both as they are); with many pages and more than one core, forked workers do
it in chunks (they inherit the site, the renderer and the bodies already in memory,
run the pack — the build's stages each page's bytes and scans its links there — and
send back the bodies they rendered so the parent can store them). A worker that dies
or hangs ends the build with one sentence. This module must never write files itself
and never log from a worker.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from sitegen.errors import BuildError
from sitegen.model.views import Page

if TYPE_CHECKING:  # multiprocessing is imported when a pool is needed
    import multiprocessing.pool

    from sitegen.render.bodies import Body
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
Answer = tuple[list[Rendered], dict[str, "Body"]]

# The renderer, pages and packer a forked worker works with (set just before the fork).
_FORK_STATE: tuple[Renderer, Sequence[Page], Pack] | None = None


def _keep(page: Page, reads: frozenset[str], data: bytes) -> tuple[bytes, frozenset[str]]:
    return data, reads


def _render(renderer: Renderer, page: Page, pack: Pack) -> Rendered:
    data, reads = renderer.render_recorded(page)
    return page.path, pack(page, reads, data)


def _render_chunk(task: tuple[int, int]) -> Answer:
    """pages[start:end] in a worker, and the bodies it rendered."""
    assert _FORK_STATE is not None
    renderer, pages, pack = _FORK_STATE
    start, end = task
    done = [_render(renderer, page, pack) for page in pages[start:end]]
    fresh, renderer.fresh_bodies = renderer.fresh_bodies, {}
    return done, fresh


def _new_pool(count: int) -> multiprocessing.pool.Pool:
    """A fork pool whose workers end on SIGTERM, whatever handler the parent installed.

    SIGTERM stays blocked while the workers are forked and each worker restores the
    default action, so `Pool.terminate` never waits on a worker running a Python-level
    handler (the preview's) that cannot run while the worker blocks on the task queue.
    """
    import multiprocessing
    import signal

    context = multiprocessing.get_context("fork")
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        return context.Pool(count, initializer=_worker_signals)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _worker_signals() -> None:
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


def _answers(results: multiprocessing.pool.IMapIterator[Answer]) -> Iterator[Answer]:
    """The pool's answers in order; a worker silent for WORKER_TIMEOUT s fails the build."""
    from multiprocessing import TimeoutError as WorkerTimeout

    while True:
        try:
            yield results.next(WORKER_TIMEOUT)
        except StopIteration:
            return
        except WorkerTimeout:
            raise BuildError(
                f"a render worker gave no answer for {WORKER_TIMEOUT:.0f} s (it was killed or "
                "is stuck): the previous output was kept; build again, and if it happens again "
                "report it as a sitegen bug") from None


def render_all(renderer: Renderer, pages: Sequence[Page], workers: int | None = None,
               pack: Pack = _keep) -> Iterator[Rendered]:
    """(path, packed) of every page, in order (see the module docstring).

    *pack* turns each page's bytes and reads into what is sent back (it runs in the worker).
    Close the iterator when the consumer fails: that ends the pool at once.
    """
    count = workers if workers is not None else (os.cpu_count() or 1)
    parallel = count > 1 and len(pages) >= PARALLEL_THRESHOLD
    if parallel:
        import multiprocessing

        parallel = "fork" in multiprocessing.get_all_start_methods()
    if not parallel:
        for page in pages:
            yield _render(renderer, page, pack)
        return
    global _FORK_STATE
    _FORK_STATE = (renderer, pages, pack)
    # Everything the workers inherit (the site, the renderer, the bodies) moves to the
    # collector's permanent generation: a worker's collections never walk those objects,
    # so they neither cost it time nor write to (and so copy) the pages it shares.
    gc.freeze()
    try:
        bounds = [(i, min(i + CHUNK_SIZE, len(pages))) for i in range(0, len(pages), CHUNK_SIZE)]
        with _new_pool(count) as pool:
            for results, fresh in _answers(pool.imap(_render_chunk, bounds)):
                renderer.take_bodies(fresh)
                yield from results
    finally:
        _FORK_STATE = None
        gc.unfreeze()  # the preview lives on: what this build held may be collected again
