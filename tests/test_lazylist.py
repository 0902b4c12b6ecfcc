"""LazyList: stand-ins until the first Python-level read, then the produced items."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import pytest

from sitegen.lazylist import LazyList


class Doubled(LazyList[int]):
    """Stand-ins n become 2n; counts how often it produced."""

    __slots__ = ("calls",)

    def __init__(self, stand_ins: list[int]) -> None:
        super().__init__(stand_ins)
        self.calls = 0

    def _produce(self, stand_ins: list[Any]) -> list[int]:
        self.calls += 1
        return [2 * n for n in stand_ins]


READS: dict[str, Callable[[Doubled], object]] = {
    "index": lambda x: x[0],
    "slice": lambda x: x[1:],
    "iter": lambda x: list(iter(x)),
    "for": lambda x: [n for n in x],
    "reversed": lambda x: list(reversed(x)),
    "in": lambda x: 4 in x,
    "eq": lambda x: x == [2, 4, 6],
    "ne": lambda x: x != [1, 2, 3],
    "repr": repr,
    "tuple": tuple,
    "sorted": sorted,
    "sum": sum,
    "add": lambda x: x + [0],
    "copy": lambda x: x.copy(),
    "copy module": copy.copy,
    "index()": lambda x: x.index(4),
    "count": lambda x: x.count(2),
    "pickle": lambda x: pickle.loads(pickle.dumps(x)),
    "append": lambda x: x.append(8),
    "sort": lambda x: x.sort(reverse=True),
    "enumerate": lambda x: list(enumerate(x)),
    "max": max,
}


@pytest.mark.parametrize("name", sorted(READS))
def test_every_read_sees_the_produced_items(name: str) -> None:
    lazy = Doubled([1, 2, 3])
    assert not lazy.loaded
    result = READS[name](lazy)
    assert lazy.loaded and lazy.calls == 1
    plain = [2, 4, 6]
    expected = READS[name](plain)  # type: ignore[arg-type]
    assert result == expected
    assert list.__getitem__(lazy, slice(None)) == plain  # the storage holds them too


def test_the_length_and_truth_need_no_production() -> None:
    lazy = Doubled([1, 2, 3])
    assert len(lazy) == 3 and lazy and not Doubled([])
    assert not lazy.loaded and lazy.calls == 0


def test_items_are_produced_once() -> None:
    lazy = Doubled([5])
    assert lazy[0] == 10 and list(lazy) == [10] and lazy == [10]
    assert lazy.calls == 1


def test_two_lazy_lists_compare_by_their_items_and_are_unhashable() -> None:
    assert Doubled([1, 2]) == Doubled([1, 2]) and Doubled([1]) != Doubled([2])
    with pytest.raises(TypeError):
        hash(Doubled([1]))


def test_pickle_gives_a_plain_list_of_the_items() -> None:
    back = pickle.loads(pickle.dumps(Doubled([1, 2])))
    assert type(back) is list and back == [2, 4]
