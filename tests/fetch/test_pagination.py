"""paginate(): every stopping rule, de-duplication, oversize pages and the page caps."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from sitegen.fetch import v2
from sitegen.fetch.client import ApiClient
from sitegen.fetch.v2 import Listing, paginate
from tests.fetch.conftest import BASE, KEY

Page = Callable[[int, int, int], dict[str, Any]]  # (call number, skip, limit) -> payload


def walk(pages: Page, limit: int = 10) -> tuple[Listing, int]:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        skip = int(request.url.params["skip"])
        return httpx.Response(200, json=pages(calls, skip, int(request.url.params["limit"])))

    async def go() -> Listing:
        async with ApiClient(BASE, KEY, transport=httpx.MockTransport(handler)) as client:
            return await paginate(client, "v2", "/things", ("things",), {"a": 1}, limit=limit)

    return asyncio.run(go()), calls


def items(start: int, count: int) -> list[dict[str, Any]]:
    return [{"id": f"r{n}"} for n in range(start, start + count)]


def ids(listing: Listing) -> list[str]:
    return [item["id"] for item in listing.items]


def test_stops_when_has_next_page_is_false() -> None:
    listing, calls = walk(lambda n, skip, limit: {
        "things": items(skip, limit), "pagination": {"hasNextPage": n < 3}})
    assert calls == 3 and len(listing.items) == 30 and listing.complete


def test_stops_at_total_pages() -> None:
    listing, calls = walk(lambda n, skip, limit: {
        "things": items(skip, limit),
        "pagination": {"totalPages": 2, "currentPage": n, "hasNextPage": True}})
    assert calls == 2


def test_stops_at_a_short_or_empty_page() -> None:
    _, calls = walk(lambda n, skip, limit: {"things": items(skip, 4 if n == 2 else limit)})
    assert calls == 2
    _, calls = walk(lambda n, skip, limit: {"things": items(skip, limit) if n < 3 else []})
    assert calls == 3


def test_deduplicates_records_that_shift_between_pages() -> None:
    # a record inserted at the front pushes r9 onto page 2 again
    listing, _ = walk(lambda n, skip, limit: {
        "things": items(0, 10) if n == 1 else items(9, 6), "pagination": {"totalCount": 15}})
    assert ids(listing) == [f"r{n}" for n in range(15)]


def test_tolerates_a_page_larger_than_asked() -> None:
    listing, calls = walk(lambda n, skip, limit: {
        "things": items(skip, 25 if n == 1 else 5), "pagination": {"totalCount": 30}})
    assert calls == 2 and len(listing.items) == 30


def test_endless_has_next_page_is_cut_at_total_count_plus_two() -> None:
    listing, calls = walk(lambda n, skip, limit: {
        "things": items(skip, limit), "pagination": {"totalCount": 30, "hasNextPage": True}})
    assert calls == 5  # ceil(30 / 10) + 2
    assert not listing.complete


def test_repeating_pages_stop_when_nothing_new_arrives() -> None:
    listing, calls = walk(lambda n, skip, limit: {
        "things": items(0, limit), "pagination": {"hasNextPage": True}})
    assert calls == 2 and len(listing.items) == 10


def test_hard_cap_without_any_total(monkeypatch: pytest.MonkeyPatch,
                                    caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(v2, "PAGE_CAP", 7)
    listing, calls = walk(lambda n, skip, limit: {"things": items(skip, limit)})
    assert calls == 7 and not listing.complete
    assert "stopped reading /things after 7 pages" in caplog.text


def test_server_side_limit_smaller_than_asked_is_followed() -> None:
    listing, calls = walk(lambda n, skip, limit: {
        "things": items(skip, 5) if skip < 20 else [],
        "pagination": {"limit": 5, "totalCount": 20}}, limit=10)
    assert len(listing.items) == 20 and calls in (4, 5)


def test_garbage_pagination_objects_are_ignored() -> None:
    listing, calls = walk(lambda n, skip, limit: {
        "things": items(skip, limit if n < 2 else 3), "pagination": "yes"})
    assert calls == 2 and len(listing.items) == 13


def test_items_of_accepts_other_collection_keys() -> None:
    assert v2.items_of({"data": [1]}, ("articles",)) == [1]
    assert v2.items_of({"results": [2], "pagination": {}}, ("articles",)) == [2]
    assert v2.items_of({"count": 3}, ("articles",)) == []
    assert v2.unwrap({"article": {"id": "x"}}, "article") == {"id": "x"}
    assert v2.unwrap({"id": "y"}, "article") == {"id": "y"}
