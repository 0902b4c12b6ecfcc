"""How sitegen keeps Python's cyclic garbage collector out of its way.

Role: `collector_paused` and `frozen_heap` (with `freeze_new_objects` inside it) for the
batch stages. A build holds ~10^5-10^6 long-lived objects (content records, the site
graph, templates) and makes almost no cyclic garbage, but every full collection walks all
of them again (~0.1-0.15 s each at 4,000 articles, several per build), and in forked
render workers it would also touch, and so copy, every inherited page of memory. It must
never hide garbage for good: objects made inside a block are collected as usual once it
ends (or while it runs, when frozen). The console script's batch commands go further and
run with no automatic collection at all (`sitegen.cli._as_batch`); these helpers serve
every other caller (the preview server's rebuilds, tests, embedders).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic collection inside the block (for a burst of allocations without cycles)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


_depth = 0  # frozen_heap blocks now open (a build runs in one thread at a time)


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Keep the cyclic GC off everything that exists now; objects made later are collected.

    A nested block, like `freeze_new_objects`, freezes what was made since; only the
    outermost block unfreezes, and only when nothing was frozen before it (nothing is
    unfrozen that someone else froze).
    """
    global _depth
    # Counting the frozen objects walks them all: asked only outside any block of ours.
    outermost = _depth == 0 and gc.get_freeze_count() == 0
    gc.freeze()
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if outermost:
            gc.unfreeze()


def freeze_new_objects() -> None:
    """Inside a `frozen_heap` block: freeze what was made since (a stage's long-lived output).

    The block unfreezes it with the rest when it ends; outside one it would stay frozen
    for the life of the process, so that is refused.
    """
    if _depth <= 0:
        raise RuntimeError("freeze_new_objects() outside a frozen_heap() block")
    gc.freeze()
