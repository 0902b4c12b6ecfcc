"""`LazyList`: a list whose items are made the first time any of them is read.

Role: the one mechanism behind sitegen's deferred work on big per-article lists (the
cached blocks of thousands of articles, of which a small rebuild reads a handful).
A `LazyList` starts with stand-in items (as many as the real ones) and a subclass's
`_produce`, which gives the real items from them; any Python-level read (indexing,
iteration, comparison, search, copying, changing) produces them once and puts them in
place. Only the length is answered from the stand-ins, so a subclass must produce
exactly one item per stand-in unless it says otherwise. It is a real `list` (types,
`isinstance`, templates), but C code that reads list storage directly (`str.join`,
`*args`, a serializer) sees the stand-ins until the first read: call `load()` before
handing it over. It must never do I/O itself.
"""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")


class LazyList(list[T]):
    """A list of stand-ins until first read, then of the items `_produce` makes from them."""

    __slots__ = ("_pending",)

    def __init__(self, stand_ins: list[Any]) -> None:
        super().__init__(stand_ins)
        self._pending = True

    def _produce(self, stand_ins: list[Any]) -> list[T]:
        raise NotImplementedError

    @property
    def loaded(self) -> bool:
        """True once the real items are in place."""
        return not self._pending

    def load(self) -> list[T]:
        """The real items (made now on the first call); returns the list itself."""
        if self._pending:
            made = self._produce(list.__getitem__(self, slice(None)))
            list.__setitem__(self, slice(None), made)
            self._pending = False
        return self

    def __getitem__(self, index: Any) -> Any:
        return list.__getitem__(self.load(), index)

    def __iter__(self) -> Any:
        return list.__iter__(self.load())

    def __reversed__(self) -> Any:
        return list.__reversed__(self.load())

    def __contains__(self, item: object) -> bool:
        return list.__contains__(self.load(), item)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyList):
            other.load()
        return list.__eq__(self.load(), other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None

    def __repr__(self) -> str:
        return list.__repr__(self.load())

    def __reduce__(self) -> Any:
        return (list, (list(self.load()),))


def _loading(name: str) -> Any:
    plain = getattr(list, name)

    def method(self: LazyList[Any], *args: Any, **kwargs: Any) -> Any:
        return plain(self.load(), *args, **kwargs)

    method.__name__ = name
    return method


for _name in ("__add__", "__iadd__", "__mul__", "__rmul__", "__imul__", "__lt__", "__le__",
              "__gt__", "__ge__", "__setitem__", "__delitem__", "append", "extend", "insert",
              "pop", "remove", "reverse", "sort", "index", "count", "copy", "clear"):
    setattr(LazyList, _name, _loading(_name))
