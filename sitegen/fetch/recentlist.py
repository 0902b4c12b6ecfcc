"""A list of owners (clusters, author identities) read as far as it changed since the last sync.

Role: given the records the last sync stored of one v2 listing, read that listing newest update
first down to their newest `updatedAt` and merge what it shows into them: a listing of 160
clusters then costs one page instead of two, whatever its size. The answer stands only when
every item read parsed cleanly and was dated in that order, and the stored ids plus the ones
read are exactly as many as the listing's `totalCount` (a record deleted since, or one deleted
and one added, makes it fall short or over); otherwise it is None and the caller walks the whole
listing as without a store. It must never touch the store, never fetch anything else, and never
take a failed answer for an empty listing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

from pydantic import ValidationError

from sitegen.fetch import paging
from sitegen.fetch.paging import PAGE_LIMIT, ends, items_of, page_check, pagination_of
from sitegen.fetch.records import AuthorIdentity, Cluster

if TYPE_CHECKING:
    from sitegen.fetch.client import ApiClient

RECENT_FIRST = {"sortBy": "updatedAt", "sortOrder": "desc"}

Owner = TypeVar("Owner", Cluster, AuthorIdentity)


def _mark(known: Sequence[Owner] | None) -> datetime | None:
    """The newest `updatedAt` of *known*; None when nothing is known or one is undated."""
    if not known or any(record.updatedAt is None for record in known):
        return None
    return max(record.updatedAt for record in known if record.updatedAt is not None)


async def _updated_since(client: ApiClient, path: str, key: str, model: type[Owner],
                         mark: datetime) -> tuple[dict[str, Owner], int] | None:
    """The records updated at or after *mark* (by id) and the listing's totalCount."""
    fresh: dict[str, Owner] = {}
    total: int | None = None
    skip, last = 0, None
    for number in range(1, paging.PAGE_CAP + 1):
        payload = await client.get_json("v2", path, {**RECENT_FIRST, "skip": skip,
                                                     "limit": PAGE_LIMIT},
                                        check=page_check((key,), skip))
        page = items_of(payload, (key,)) or []
        meta = pagination_of(payload)
        if meta is None or meta.totalCount is None:
            return None
        total = meta.totalCount if total is None else total
        for item in page:
            try:
                record = model.model_validate(item)
            except ValidationError:
                return None  # the whole walk names it and repairs or skips it
            if record.updatedAt is None or (last is not None and record.updatedAt > last):
                return None  # undated, or not newest first: no early stop holds
            last = record.updatedAt
            fresh.setdefault(record.id, record)
        skip += len(page)
        if last is None or last < mark or ends(page, meta, number, PAGE_LIMIT):
            return fresh, total
    return None


async def recent_owners(client: ApiClient, path: str, key: str, model: type[Owner],
                        known: Sequence[Owner] | None) -> list[Owner] | None:
    """*known* updated from the listing at *path*, in the order a whole walk by `createdAt`
    gives (new records by their `createdAt`); None: walk the whole listing instead."""
    mark = _mark(known)
    if known is None or mark is None:
        return None
    read = await _updated_since(client, path, key, model, mark)
    if read is None:
        return None
    fresh, total = read
    if len({record.id for record in known} | fresh.keys()) != total:
        return None
    merged = [fresh.pop(record.id, record) for record in known] + list(fresh.values())
    if all(record.createdAt is not None for record in merged):
        merged.sort(key=lambda record: record.createdAt or mark)  # (stable: known ties stay)
    return merged
