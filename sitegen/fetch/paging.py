"""Walking list endpoints, shared by both API versions: pages, answer shapes, records.

Role: `paginate` walks a skip/limit list to its end, bounded (`PAGE_CAP`) and de-duplicated by
id; `parse_records` validates each item on its own (one bad record is skipped with a warning,
never the whole listing); `items_of` and `unwrap` read the shapes a list or single-record answer
may take. A listing is complete only when every page has its list (the key the reference names,
or `data`/`items`/`results`, as an array) and its pagination agrees with it: an answer without
its list, an empty page whose `totalCount` says records lie beyond it, or a page that only
repeats records already read is a failed request (`page_check`: retried, then exit 5). It must
never take a failed answer for an empty listing, never fetch article bodies, and never touch the
store.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import deque
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from sitegen.errors import UnreachableError
from sitegen.fetch.answers import Check, UnusableAnswer
from sitegen.fetch.records import Pagination
from sitegen.workspace import ApiVersion

if TYPE_CHECKING:
    from sitegen.fetch.client import ApiClient

log = logging.getLogger("sitegen.fetch")

PAGE_LIMIT = 100
PAGE_CAP = 1000  # never walk more pages than this, whatever the pagination says

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


@dataclass
class Listing:
    """The raw items of one walked list endpoint; `complete` is False when paging was cut off."""

    items: list[Any]
    complete: bool = True
    pages: int = 0
    #: The first page's `totalCount` (None: not stated).
    total: int | None = None


async def gather_all(awaitables: Iterable[Awaitable[T]]) -> list[T]:
    """Run concurrently; on the first failure cancel the rest and raise that failure."""
    tasks = [asyncio.ensure_future(item) for item in awaitables]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        await _cancel(tasks)
        raise


def items_of(payload: dict[str, Any], keys: tuple[str, ...]) -> list[Any] | None:
    """The record list of a list response: the first of `keys`, else `data`, `items` or
    `results`, as an array; None when it has none (not a listing: a failed answer)."""
    for key in (*keys, "data", "items", "results"):
        value = payload.get(key)
        if isinstance(value, list):
            return value
    return None


def what_it_said(payload: dict[str, Any]) -> str:
    """What an answer without its list said instead, in a few words ("" when nothing)."""
    for name in ("error", "details", "message"):
        value = payload.get(name)
        if isinstance(value, str) and value.strip():
            return f" (it said {value.strip()[:80]!r})"
    return " (an empty object)" if not payload else ""


def page_check(keys: tuple[str, ...], skip: int, seen: set[str] | None = None) -> Check:
    """The `check` of one listing page asked at *skip*: its list is there, its pagination
    agrees with it, and (given the ids *seen* so far) it is not only records read before."""

    def check(payload: dict[str, Any]) -> None:
        page = items_of(payload, keys)
        if page is None:
            raise UnusableAnswer(f"a listing answer without its {keys[0]!r} list"
                                 f"{what_it_said(payload)}")
        meta = pagination_of(payload)
        if meta is not None and not page and skip < (meta.totalCount or 0):
            raise UnusableAnswer(f"an empty page at skip {skip} of a listing it says holds "
                                 f"{meta.totalCount} records")
        if meta is not None and page and meta.totalCount == 0:
            raise UnusableAnswer("a page of records in a listing it says is empty")
        if seen and page and _repeats(page, seen):
            raise UnusableAnswer(f"the page at skip {skip} only repeats records already read "
                                 "(the service may ignore skip)")

    return check


def _repeats(page: list[Any], seen: set[str]) -> bool:
    """True when every item of *page* has an id and all were read before."""
    return all(isinstance(item, dict) and isinstance(item.get("id"), str) and item["id"] in seen
               for item in page)


def unwrap(payload: dict[str, Any], key: str) -> dict[str, Any]:
    """A single-record response: `{key: {...}}`, `{data: {...}}` or the bare record."""
    for name in (key, "data"):
        value = payload.get(name)
        if isinstance(value, dict):
            return value
    return payload


def parse_records(raw: list[Any], model: type[M], kind: str, offset: int = 0) -> list[M]:
    """Validate each item on its own, with a warning naming any that is repaired or skipped.

    Invalid optional fields are dropped (the record is kept); a record is skipped only
    when its id is missing or invalid, or it is not an object.
    """
    records: list[M] = []
    for position, item in enumerate(raw, start=offset + 1):
        ident = item.get("id") if isinstance(item, dict) else None
        name = f"{kind} {ident}" if isinstance(ident, str) and ident else f"{kind} #{position}"
        if not isinstance(item, dict):
            log.warning("skipped %s of the listing: it is not a JSON object", name)
            continue
        try:
            records.append(model.model_validate(item))
            continue
        except ValidationError as error:
            problems = error.errors()
        bad = {str(problem["loc"][0]) for problem in problems if problem["loc"]}
        if bad and "id" not in bad:
            try:
                records.append(model.model_validate(
                    {k: v for k, v in item.items() if k not in bad}))
            except ValidationError:
                pass
            else:
                log.warning("repaired %s: ignored its invalid %s", name, ", ".join(sorted(bad)))
                continue
        where = ".".join(str(p) for p in problems[0]["loc"]) or "record"
        log.warning("skipped %s: %s %s", name, where, problems[0]["msg"].lower())
    return records


def pagination_of(payload: dict[str, Any]) -> Pagination | None:
    """A list response's pagination object (empty when absent); None when malformed."""
    try:
        return Pagination.model_validate(payload.get("pagination") or {})
    except ValidationError:
        return None


def _page_size(meta: Pagination, limit: int) -> int:
    return meta.limit if meta.limit and meta.limit > 0 else limit


def ends(page: list[Any], meta: Pagination, pages: int, limit: int) -> bool:
    """True when this page is the listing's last (any of the stopping rules)."""
    return (not page or len(page) < min(_page_size(meta, limit), limit)
            or meta.hasNextPage is False
            or (meta.totalPages is not None and meta.currentPage is not None
                and meta.currentPage >= meta.totalPages)
            or (meta.totalPages is not None and pages >= meta.totalPages))


async def _cancel(tasks: Iterable[asyncio.Future[Any]]) -> None:
    pending = list(tasks)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)


def _take_new(page: list[Any], seen: set[str], items: list[Any]) -> int:
    """Append to *items* each record of *page* whose id is not in *seen* (a record without
    an id always), noting the ids; how many were appended."""
    new = 0
    for item in page:
        ident = item.get("id") if isinstance(item, dict) else None
        if isinstance(ident, str) and ident:
            if ident in seen:
                continue
            seen.add(ident)
        items.append(item)
        new += 1
    return new


async def paginate(client: ApiClient, version: ApiVersion, path: str, keys: tuple[str, ...],
                   params: dict[str, Any] | None = None, limit: int = PAGE_LIMIT) -> Listing:
    """Walk a skip/limit list endpoint to its end, bounded and de-duplicated by id.

    When the first page is full and states a `totalCount`, the pages it promises are
    requested ahead (at most the client's concurrency in flight), so a long listing costs
    a few round trips instead of one per page; they are still read in order, under the
    same stopping rules, and the walk goes on one page at a time past the promised ones.
    """
    listing = Listing(items=[])
    seen: set[str] = set()
    skip = 0
    max_pages = PAGE_CAP
    promised = 0  # pages the first page's totalCount promises (0: one page at a time)
    requested = 1
    ahead: deque[asyncio.Future[dict[str, Any]]] = deque()

    def fetch(offset: int) -> Awaitable[dict[str, Any]]:
        return client.get_json(version, path, {**(params or {}), "skip": offset, "limit": limit},
                               check=page_check(keys, offset, seen))

    try:
        while True:
            if listing.pages >= max_pages:
                listing.complete = False
                log.warning("stopped reading %s after %d pages: the listing does not end; "
                            "records beyond them are not updated", path, listing.pages)
                return listing
            payload = await (ahead.popleft() if ahead else fetch(skip))
            listing.pages += 1
            page = items_of(payload, keys) or []  # (the check refused an answer without it)
            meta = pagination_of(payload) or Pagination()
            if listing.pages == 1 and meta.totalCount is not None and meta.totalCount >= 0:
                listing.total = meta.totalCount
                max_pages = min(PAGE_CAP, math.ceil(meta.totalCount / limit) + 2)
                if len(page) == limit and _page_size(meta, limit) == limit:
                    promised = min(PAGE_CAP, math.ceil(meta.totalCount / limit))
            new = _take_new(page, seen, listing.items)
            skip += len(page)
            if page and new == 0:  # a whole page read before: not a listing one can finish
                raise UnreachableError(
                    f"the service's listing {path} repeated records already read at page "
                    f"{listing.pages} (it may ignore skip), so it cannot be read to its end: "
                    "nothing was changed; try again later or report it to the service")
            if ends(page, meta, listing.pages, limit):
                return listing
            # every page read so far was full, so page n starts at n * limit
            while requested < promised and len(ahead) < max(1, client.concurrency):
                ahead.append(asyncio.ensure_future(fetch(requested * limit)))
                requested += 1
    finally:
        await _cancel(ahead)
