"""Which cluster and author identity each listed article belongs to, asking as little as it can.

Role: the API references do not promise an article record's `clusterId` or `authorIdentityId`;
where a listed article lacks one, its owner is learnt from the per-owner article listings
(`/clusters/{id}/articles`, `/author-identities/{id}/articles`). With nothing known (a first sync,
`--refresh`) every owner's listing is walked whole, as before. Given what the last sync stored
(`KnownOwners`), an article whose `updatedAt` is the stored one keeps its stored owner and costs
nothing; an article updated since is looked up newest update first, down to the oldest such
article's `updatedAt`, in its stored owner's listing (one page: one call per owner kind for a
changed article), and only an article found there nowhere (a new one, or one moved away) makes
the walk go on to every other owner's listing, again only down to that `updatedAt`. An article
stored without an owner of a kind keeps none: that can only be proved by asking every owner (the
documented limit of the service's filters). A listing that is not sorted newest update first is
walked whole instead. It must never fetch article bodies, touch the store, or take a failed answer
(other than a vanished owner's 404) for an empty listing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sitegen.fetch import paging
from sitegen.fetch.answers import NotFound
from sitegen.fetch.fields import parse_timestamp
from sitegen.fetch.paging import PAGE_LIMIT, ends, gather_all, items_of, page_check, paginate
from sitegen.fetch.records import Article, AuthorIdentity, Cluster, Pagination

if TYPE_CHECKING:
    from sitegen.fetch.client import ApiClient

log = logging.getLogger("sitegen.fetch")

PUBLISHED = {"status": "published"}
STABLE_ORDER = {"sortBy": "createdAt", "sortOrder": "asc"}
RECENT_FIRST = {"sortBy": "updatedAt", "sortOrder": "desc"}


@dataclass(frozen=True)
class KnownOwners:
    """What the last sync stored of each article of one owner kind: its owner (None: none)
    and its `updatedAt`."""

    owner: dict[str, str | None] = field(default_factory=dict)
    updated: dict[str, datetime] = field(default_factory=dict)


async def _whole(client: ApiClient, path: str) -> list[str]:
    """Ids of every published article of one owner's listing, in a stable order."""
    listing = await paginate(client, "v2", path, ("articles",), {**PUBLISHED, **STABLE_ORDER})
    return _ids(listing.items)


def _ids(items: Iterable[Any]) -> list[str]:
    return [item["id"] for item in items
            if isinstance(item, dict) and isinstance(item.get("id"), str)]


def _stamp(item: Any) -> datetime | None:
    return parse_timestamp(item.get("updatedAt")) if isinstance(item, dict) else None


async def _recent(client: ApiClient, path: str, floor: datetime) -> list[str]:
    """Ids of one owner's published articles updated at or after *floor*, read newest update
    first; the whole listing when a page is not in that order (or undated)."""
    found: list[str] = []
    skip, last = 0, None
    for number in range(1, paging.PAGE_CAP + 1):
        payload = await client.get_json(
            "v2", path, {**PUBLISHED, **RECENT_FIRST, "skip": skip, "limit": PAGE_LIMIT},
            check=page_check(("articles",), skip))
        page = items_of(payload, ("articles",)) or []
        for item in page:
            stamp = _stamp(item)
            if stamp is None or (last is not None and stamp > last):
                return await _whole(client, path)  # not newest first: no early stop holds
            last = stamp
        found += _ids(page)
        skip += len(page)
        meta = paging.pagination_of(payload) or Pagination()
        if last is None or last < floor or ends(page, meta, number, PAGE_LIMIT):
            return found
    return await _whole(client, path)


async def _members(client: ApiClient, path: str, floor: datetime | None) -> list[str]:
    """The article ids one owner's listing gives (down to *floor*; None: all); 404: none."""
    try:
        return await (_whole(client, path) if floor is None else _recent(client, path, floor))
    except NotFound:
        log.warning("%s vanished during the sync (404); its articles are not linked to it", path)
        return []


async def _walk(client: ApiClient, base: str, route: str, owners: Sequence[str],
                floor: datetime | None, owner_of: dict[str, str]) -> None:
    """Read *owners*' listings concurrently into *owner_of* (the first owner named wins)."""
    memberships = await gather_all(
        _members(client, f"{base}/{route}/{owner}/articles", floor) for owner in owners)
    for owner, members in zip(owners, memberships, strict=True):
        for article_id in members:
            owner_of.setdefault(article_id, owner)


def _settle(lacking: list[Article], field_name: str, known: KnownOwners,
            valid: set[str]) -> list[Article]:
    """Fill *field_name* from the store where it still holds (the article unchanged since, or
    stored as owned by nobody); the articles left to find in the owners' listings."""
    pending: list[Article] = []
    for article in lacking:
        stored = known.owner.get(article.id, "?")
        settled = article.id in known.owner and (stored is None or stored in valid)
        if settled and known.updated.get(article.id) == article.updatedAt:
            setattr(article, field_name, stored)
        elif settled and stored is None:
            setattr(article, field_name, None)  # (unprovable without every listing: kept)
        else:
            pending.append(article)
    return pending


def _floor(pending: list[Article]) -> datetime | None:
    """How far back the owners' listings are read: the oldest update of *pending* (None,
    all of them, when one is undated)."""
    stamps = [a.updatedAt for a in pending]
    return None if any(s is None for s in stamps) else min(s for s in stamps if s is not None)


async def link_owners(client: ApiClient, base: str, articles: list[Article], field_name: str,
                      route: str, owners: Sequence[Cluster | AuthorIdentity],
                      known: KnownOwners | None) -> None:
    """Fill *field_name* (`clusterId` / `authorIdentityId`) where listed articles lack it."""
    lacking = [a for a in articles if field_name not in a.model_fields_set]
    if not lacking or not owners:
        return
    order = [owner.id for owner in owners]
    owner_of: dict[str, str] = {}
    if known is None:
        await _walk(client, base, route, order, None, owner_of)
        for article in lacking:
            if article.id in owner_of:
                setattr(article, field_name, owner_of[article.id])
        return
    pending = _settle(lacking, field_name, known, set(order))
    if not pending:
        return
    floor = _floor(pending)
    stored_owners = {known.owner.get(a.id) for a in pending}
    first = [owner for owner in order if owner in stored_owners]
    await _walk(client, base, route, first, floor, owner_of)
    if any(a.id not in owner_of for a in pending):
        rest = [owner for owner in order if owner not in first]
        await _walk(client, base, route, rest, floor, owner_of)
    for article in pending:
        setattr(article, field_name, owner_of.get(article.id))
