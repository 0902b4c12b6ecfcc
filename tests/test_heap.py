"""The collector policy: what is frozen stays frozen only while the build runs."""

from __future__ import annotations

import gc
import weakref

import pytest

from sitegen.heap import collector_paused, freeze_new_objects, frozen_heap


class Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the cyclic collector frees it


def test_frozen_heap_nests_and_the_outermost_block_unfreezes() -> None:
    assert gc.get_freeze_count() == 0
    before = Node()
    with frozen_heap():
        outer = gc.get_freeze_count()
        assert outer > 0
        made = Node()
        with frozen_heap():
            assert gc.get_freeze_count() > outer  # what was made since is frozen too
        assert gc.get_freeze_count() > outer  # an inner block does not unfreeze
        del made
    assert gc.get_freeze_count() == 0
    del before


def test_garbage_made_inside_a_frozen_block_is_still_collected() -> None:
    with frozen_heap():
        ref = weakref.ref(Node())  # a cycle made after the freeze
        gc.collect()
        assert ref() is None


def test_garbage_frozen_by_the_block_is_collected_after_it() -> None:
    node = Node()
    ref = weakref.ref(node)
    with frozen_heap():
        del node
        gc.collect()
        assert ref() is not None  # frozen: out of the collector's reach
    gc.collect()
    assert ref() is None


def test_collector_paused_restores_the_previous_state() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # it was off before: it stays off
    finally:
        gc.enable()


def test_freeze_new_objects_works_only_inside_a_block() -> None:
    with pytest.raises(RuntimeError, match="outside"):
        freeze_new_objects()
    assert gc.get_freeze_count() == 0
    with frozen_heap():
        before = gc.get_freeze_count()
        made = [Node() for _ in range(100)]
        freeze_new_objects()
        assert gc.get_freeze_count() >= before + len(made)
    assert gc.get_freeze_count() == 0  # the block let go of everything
