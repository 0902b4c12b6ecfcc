"""Filtering, sorting and paging of stored records, as the service's database would.

Role: the pure query engine of the emulator. Handlers turn query parameters into predicates with
the builders below; `select` sorts (ties broken on `id`, so every order is total) and cuts one
page, with the pagination object of both references. Mixed or missing types never crash a sort:
they rank as MongoDB ranks BSON types (null < numbers < strings < objects < arrays < booleans).
It must never read query strings, build responses or mutate records.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

Record = dict[str, Any]
Predicate = Callable[[Record], bool]


def _rank(value: Any) -> tuple[int, Any]:
    if value is None:
        return (0, 0)
    if isinstance(value, bool):
        return (5, value)
    if isinstance(value, (int, float)):
        return (1, value)
    if isinstance(value, str):
        return (2, value)
    if isinstance(value, dict):
        return (3, repr(sorted(value.items(), key=lambda item: str(item[0]))))
    if isinstance(value, list):
        return (4, repr(value))
    return (6, repr(value))


def sort_key(field: str) -> Callable[[Record], tuple[tuple[int, Any], tuple[int, Any]]]:
    """Key ordering records by `field`, then by `id`."""

    def key(record: Record) -> tuple[tuple[int, Any], tuple[int, Any]]:
        return _rank(record.get(field)), _rank(record.get("id"))

    return key


def pagination(skip: int, limit: int, total: int) -> dict[str, Any]:
    """The pagination object of both references."""
    return {"skip": skip, "limit": limit, "totalCount": total,
            "totalPages": math.ceil(total / limit) if limit else 0,
            "currentPage": skip // limit + 1 if limit else 1,
            "hasNextPage": skip + limit < total, "hasPrevPage": skip > 0}


def select(records: Iterable[Record], predicates: Sequence[Predicate], sort_field: str,
           descending: bool, skip: int, limit: int) -> tuple[list[Record], dict[str, Any]]:
    """Matching records sorted and cut to one page, with the pagination object."""
    return cut(matching(records, predicates, sort_field, descending), skip, limit)


def matching(records: Iterable[Record], predicates: Sequence[Predicate], sort_field: str,
             descending: bool) -> list[Record]:
    """Every record passing all `predicates`, sorted by `sort_field`, then `id`."""
    if len(predicates) == 1:
        test = predicates[0]
        found = [record for record in records if test(record)]
    else:
        found = [record for record in records if all(test(record) for test in predicates)]
    if all(type(record.get(sort_field)) is str and type(record.get("id")) is str
           for record in found):
        # the common case, ordered as sort_key orders strings, without its per-value ranks
        found.sort(key=lambda record: (record[sort_field], record["id"]), reverse=descending)
    else:
        found.sort(key=sort_key(sort_field), reverse=descending)
    return found


def cut(found: Sequence[Record], skip: int, limit: int) -> tuple[list[Record], dict[str, Any]]:
    """One page of already matched and sorted records, with the pagination object."""
    return list(found[skip : skip + limit]), pagination(skip, limit, len(found))


# --- predicate builders ------------------------------------------------------


def equals(field: str, value: Any) -> Predicate:
    """Records whose `field` equals `value` exactly."""
    return lambda record: record.get(field) == value


def is_missing(field: str) -> Predicate:
    """Records whose `field` is null, absent or empty."""
    return lambda record: not record.get(field)


def any_tag(field: str, wanted: Sequence[str]) -> Predicate:
    """Records whose list `field` holds any of `wanted`."""
    wanted_set = set(wanted)

    def test(record: Record) -> bool:
        value = record.get(field)
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",")]
        return isinstance(value, list) and any(item in wanted_set for item in value)

    return test


def _texts(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield str(value)


def search(needle: str, paths: Sequence[str]) -> Predicate:
    """Case-insensitive substring search over fields; `meta.keywords` reaches into objects."""
    folded = needle.casefold()

    def lookup(record: Record, path: str) -> Any:
        value: Any = record
        for part in path.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return value

    def test(record: Record) -> bool:
        return any(
            folded in text.casefold() for path in paths for text in _texts(lookup(record, path))
        )

    return test


def truthy(field: str, wanted: bool) -> Predicate:
    """Records whose `field` is non-empty (`wanted` True) or empty (False)."""
    return lambda record: bool(record.get(field)) == wanted


def member_of(field: str, ids: set[Any], wanted: bool) -> Predicate:
    """Records whose `field` value is (or, with `wanted` False, is not) in `ids`."""

    def test(record: Record) -> bool:
        value = record.get(field)
        return (isinstance(value, str) and value in ids) == wanted

    return test
