"""paginate(): every stopping rule, de-duplication, oversize pages and the page caps."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from sitegen.errors import UnreachableError
from sitegen.fetch import paging
from sitegen.fetch.client import ApiClient
from sitegen.fetch.paging import Listing, paginate
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


def test_the_first_pages_total_is_kept_and_a_missing_one_is_none() -> None:
    listing, _ = walk(lambda n, skip, limit: {
        "things": items(skip, limit if n < 2 else 3), "pagination": {"totalCount": 40 - n}})
    assert listing.total == 39 and len(listing.items) == 13  # the sync decides what it means
    listing, _ = walk(lambda n, skip, limit: {"things": items(skip, 3)})
    assert listing.total is None


def test_endless_has_next_page_is_cut_at_total_count_plus_two() -> None:
    listing, calls = walk(lambda n, skip, limit: {
        "things": items(skip, limit), "pagination": {"totalCount": 30, "hasNextPage": True}})
    assert calls == 5  # ceil(30 / 10) + 2
    assert not listing.complete


def test_repeating_pages_are_a_failed_listing_not_a_short_one() -> None:
    with pytest.raises(UnreachableError) as caught:
        walk(lambda n, skip, limit: {"things": items(0, limit),
                                     "pagination": {"hasNextPage": True}})
    assert caught.value.exit_code == 5
    assert "the page at skip 10 only repeats records already read" in str(caught.value)


@pytest.mark.parametrize("answer", [
    {"error": "Service temporarily unavailable"}, {}, {"things": None, "pagination": {}},
    {"count": 3}, {"things": [], "pagination": {"totalCount": 251, "hasNextPage": False}},
])
def test_an_answer_without_its_list_or_disagreeing_is_retried_then_fails(
        answer: dict[str, Any]) -> None:
    with pytest.raises(UnreachableError) as caught:
        walk(lambda n, skip, limit: answer)
    message = str(caught.value)
    assert caught.value.exit_code == 5 and "failed 6 time(s)" in message
    assert ("without its 'things' list" in message
            or "an empty page at skip 0 of a listing it says holds 251 records" in message)


def test_a_failed_first_answer_then_a_good_one_gives_the_whole_listing() -> None:
    listing, calls = walk(lambda n, skip, limit: {"error": "busy"} if n == 1 else {
        "things": items(skip, 5), "pagination": {"totalCount": 5}})
    assert calls == 2 and ids(listing) == [f"r{n}" for n in range(5)] and listing.complete


def test_hard_cap_without_any_total(monkeypatch: pytest.MonkeyPatch,
                                    caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(paging, "PAGE_CAP", 7)
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
    assert paging.items_of({"data": [1]}, ("articles",)) == [1]
    assert paging.items_of({"results": [2], "pagination": {}}, ("articles",)) == [2]
    assert paging.items_of({"count": 3}, ("articles",)) is None
    assert paging.items_of({"error": "x", "details": ["y"]}, ("articles",)) is None
    assert paging.unwrap({"article": {"id": "x"}}, "article") == {"id": "x"}
    assert paging.unwrap({"id": "y"}, "article") == {"id": "y"}


def walk_concurrently(total: int, served: int, limit: int = 10, concurrency: int = 4
                      ) -> tuple[Listing, list[int], int]:
    """Walk a listing whose first page states `total` but that holds `served` records.

    Returns the listing, the skips requested (in order) and the most requests in flight.
    """
    skips: list[int] = []
    state = {"flight": 0, "most": 0}

    async def handler(request: httpx.Request) -> httpx.Response:
        skip = int(request.url.params["skip"])
        skips.append(skip)
        state["flight"] += 1
        state["most"] = max(state["most"], state["flight"])
        await asyncio.sleep(0.01)
        state["flight"] -= 1
        count = max(0, min(limit, served - skip))
        return httpx.Response(200, json={"things": items(skip, count),
                                         "pagination": {"totalCount": total}})

    async def go() -> Listing:
        async with ApiClient(BASE, KEY, transport=httpx.MockTransport(handler),
                             concurrency=concurrency) as client:
            return await paginate(client, "v2", "/things", ("things",), limit=limit)

    listing = asyncio.run(go())
    return listing, skips, state["most"]


def test_pages_promised_by_the_total_are_requested_ahead_and_read_in_order() -> None:
    listing, skips, most = walk_concurrently(total=95, served=95)
    assert ids(listing) == [f"r{n}" for n in range(95)] and listing.complete
    assert sorted(skips) == list(range(0, 100, 10))  # no page twice, none beyond the total
    assert most == 4  # the client's concurrency, not one page at a time


def test_an_overstated_total_costs_at_most_one_window_of_extra_pages() -> None:
    listing, skips, _ = walk_concurrently(total=10_000, served=35, concurrency=4)
    assert ids(listing) == [f"r{n}" for n in range(35)] and listing.complete
    assert len(skips) <= 4 + 4  # the four pages read, and at most one window beyond them


def test_records_added_past_the_total_are_still_read_one_page_at_a_time() -> None:
    listing, skips, _ = walk_concurrently(total=30, served=47)
    assert ids(listing) == [f"r{n}" for n in range(47)]
    assert skips[-2:] == [30, 40]


@pytest.mark.parametrize("answer", [{}, {"error": "Unavailable"}, {"workspace": {}, "agents": 3}])
def test_a_v1_workspace_answer_without_its_agents_is_a_failure_not_an_empty_site(
        answer: dict[str, Any]) -> None:
    from sitegen.fetch import v1

    async def go() -> None:
        transport = httpx.MockTransport(lambda request: httpx.Response(200, json=answer))
        async with ApiClient(BASE, KEY, transport=transport, max_retries=2) as client:
            await v1.read_structure(client, "65f0c0ffee0123456789abcd")

    with pytest.raises(UnreachableError) as caught:
        asyncio.run(go())
    assert "without its 'agents' list" in str(caught.value)
