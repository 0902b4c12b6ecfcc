"""Reading a workspace's structure through the v2 API, and the list walking both versions share.

Role: walk the v2 list endpoints (workspace, agents, published articles,
clusters and their articles, author identities and theirs, social posts,
digest) into a `Structure`: typed records in listing order, article bodies only
where the list items carried them. Pagination is bounded and de-duplicating;
one bad record is skipped with a warning, never the whole listing. Given what
the last sync listed (`KnownArticles`), the published articles are read newest
update first and only as far as the last sync's newest `updatedAt`; the
listing's `totalCount` then proves nothing else was added or removed (else the
whole listing is walked as without it). A whole listing that ends short of its
`totalCount` is incomplete: nothing it did not name is taken for deleted.

A listing is complete only when every page has its list (the key the reference
names, or the `data`/`items`/`results` a service may use instead, as an array) and
its pagination agrees with it: an answer without its list (`{"error": ...}` with 200,
`{}`), an empty page whose own `totalCount` says records lie beyond it, or a page that
only repeats records already read is a failed request (`page_check`: the client
retries it, then fails with exit 5), never an empty or shorter workspace. It must
never fetch article bodies (the sync decides which are needed), never touch the
store, never take a failed answer for an empty listing, and never swallow a 401/402/403.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import deque
from collections.abc import Awaitable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from sitegen.errors import ApiError, QuotaError, UnreachableError
from sitegen.fetch.client import ApiClient, Check, NotFound, UnusableAnswer, Version
from sitegen.fetch.records import (
    Agent,
    Article,
    AuthorIdentity,
    Cluster,
    DigestSettings,
    Pagination,
    SocialPost,
    WorkspaceInfo,
)
from sitegen.workspace import ApiVersion

log = logging.getLogger("sitegen.fetch")

PAGE_LIMIT = 100
PAGE_CAP = 1000  # never walk more pages than this, whatever the pagination says
PUBLISHED = {"status": "published"}
STABLE_ORDER = {"sortBy": "createdAt", "sortOrder": "asc"}
RECENT_FIRST = {"sortBy": "updatedAt", "sortOrder": "desc"}

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


@dataclass(frozen=True)
class KnownArticles:
    """What the last sync's complete article listing held: each id with its `updatedAt`."""

    updated: dict[str, datetime]

    @property
    def mark(self) -> datetime | None:
        """The newest `updatedAt` among them (None: nothing known)."""
        return max(self.updated.values(), default=None)


@dataclass
class Structure:
    """Everything the list endpoints said, before any article detail request.

    With `recent_only`, `articles` holds only the articles updated since the last sync
    (newest first); every other published article is exactly as the last sync left it.
    `articles_exact` says every listed article was read and parsed (nothing skipped).
    """

    version: ApiVersion
    info: WorkspaceInfo
    agents: list[Agent] = field(default_factory=list)
    articles: list[Article] = field(default_factory=list)
    articles_complete: bool = True
    articles_exact: bool = False
    recent_only: bool = False
    clusters: list[Cluster] | None = None
    authors: list[AuthorIdentity] | None = None
    social_posts: list[SocialPost] | None = None
    digest: DigestSettings | None = None
    digest_read: bool = False


async def gather_all(awaitables: Iterable[Awaitable[T]]) -> list[T]:
    """Run concurrently; on the first failure cancel the rest and raise that failure."""
    tasks = [asyncio.ensure_future(item) for item in awaitables]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
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
        meta = _pagination(payload)
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
    for item in page:
        ident = item.get("id") if isinstance(item, dict) else None
        if not isinstance(ident, str) or ident not in seen:
            return False
    return True


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


def _pagination(payload: dict[str, Any]) -> Pagination | None:
    """A list response's pagination object (empty when absent); None when malformed."""
    try:
        return Pagination.model_validate(payload.get("pagination") or {})
    except ValidationError:
        return None


def _page_size(meta: Pagination, limit: int) -> int:
    return meta.limit if meta.limit and meta.limit > 0 else limit


def _ends(page: list[Any], meta: Pagination, pages: int, limit: int) -> bool:
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


async def paginate(client: ApiClient, version: Version, path: str, keys: tuple[str, ...],
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
            meta = _pagination(payload) or Pagination()
            if listing.pages == 1 and meta.totalCount is not None and meta.totalCount >= 0:
                listing.total = meta.totalCount
                max_pages = min(PAGE_CAP, math.ceil(meta.totalCount / limit) + 2)
                if len(page) == limit and _page_size(meta, limit) == limit:
                    promised = min(PAGE_CAP, math.ceil(meta.totalCount / limit))
            new = 0
            for item in page:
                ident = item.get("id") if isinstance(item, dict) else None
                if isinstance(ident, str) and ident:
                    if ident in seen:
                        continue
                    seen.add(ident)
                listing.items.append(item)
                new += 1
            skip += len(page)
            if page and new == 0:  # a whole page read before: not a listing one can finish
                raise UnreachableError(
                    f"the service's listing {path} repeated records already read at page "
                    f"{listing.pages} (it may ignore skip), so it cannot be read to its end: "
                    "nothing was changed; try again later or report it to the service")
            if _ends(page, meta, listing.pages, limit):
                return listing
            # every page read so far was full, so page n starts at n * limit
            while requested < promised and len(ahead) < max(1, client.concurrency):
                ahead.append(asyncio.ensure_future(fetch(requested * limit)))
                requested += 1
    finally:
        await _cancel(ahead)


# --- v2 proper ------------------------------------------------------------------------


async def read_workspace(client: ApiClient, workspace_id: str) -> WorkspaceInfo:
    """`GET /workspaces/{id}`; NotFound here means "no v2 at this address"."""
    payload = await client.get_json("v2", f"/workspaces/{workspace_id}")
    raw = unwrap(payload, "workspace")
    try:
        return WorkspaceInfo.model_validate({"id": workspace_id, **raw})
    except ValidationError:
        log.warning("the workspace record is malformed; using its id %s only", workspace_id)
        return WorkspaceInfo(id=workspace_id)


async def _optional_list(client: ApiClient, path: str, key: str, model: type[M],
                         kind: str) -> list[M] | None:
    try:
        listing = await paginate(client, "v2", path, (key,), STABLE_ORDER)
    except NotFound:
        log.warning("the service has no %s listing (404 on %s): those pages are left out",
                    kind, path)
        return None
    return parse_records(listing.items, model, kind)


async def _digest(client: ApiClient, base: str) -> tuple[DigestSettings | None, bool]:
    try:
        payload = await client.get_json("v2", f"{base}/digest")
    except QuotaError:
        raise
    except ApiError as error:
        log.warning("could not read the digest settings (%s); the last known ones are kept",
                    str(error).split(":")[0])
        return None, False
    try:
        return DigestSettings.model_validate(unwrap(payload, "digest")), True
    except ValidationError:
        log.warning("the digest settings are malformed; the last known ones are kept")
        return None, False


async def _members(client: ApiClient, path: str) -> list[str]:
    """Ids of the published articles of one cluster or author identity (404: none)."""
    try:
        listing = await paginate(client, "v2", path, ("articles",), {**PUBLISHED, **STABLE_ORDER})
    except NotFound:
        log.warning("%s vanished during the sync (404); its articles are not linked to it", path)
        return []
    return [item["id"] for item in listing.items
            if isinstance(item, dict) and isinstance(item.get("id"), str)]


def _published(articles: list[Article]) -> list[Article]:
    """Keep the published ones; fill a missing status (the listing was filtered by it)."""
    kept: list[Article] = []
    for article in articles:
        if article.status is None:
            article.status = "published"
        if article.status == "published":
            kept.append(article)
    return kept


async def _link(client: ApiClient, base: str, articles: list[Article],
                field_name: str, route: str, owners: Sequence[Cluster | AuthorIdentity]) -> None:
    """Fill `clusterId` / `authorIdentityId` from per-owner listings where articles lack it."""
    lacking = [a for a in articles if field_name not in a.model_fields_set]
    if not lacking or not owners:
        return
    memberships = await gather_all(
        _members(client, f"{base}/{route}/{owner.id}/articles") for owner in owners)
    owner_of: dict[str, str] = {}
    for owner, members in zip(owners, memberships, strict=True):
        for article_id in members:
            owner_of.setdefault(article_id, owner.id)
    for article in lacking:
        if article.id in owner_of:
            setattr(article, field_name, owner_of[article.id])


async def _recent_articles(client: ApiClient, path: str,
                           known: KnownArticles) -> list[Article] | None:
    """The published articles updated since *known*'s mark, newest first; None: walk all.

    Pages sorted by `updatedAt` descending are read until one ends older than the mark.
    The answer stands only when every item parsed cleanly, was published and dated, and
    the known ids plus the new ones are exactly as many as the listing's `totalCount`:
    an article unpublished or deleted since (which changes no `updatedAt`) makes the
    count fall short, so the caller walks the whole listing instead.
    """
    mark = known.mark
    if mark is None:
        return None
    recent: list[Article] = []
    seen: set[str] = set()
    total: int | None = None
    skip = 0
    for number in range(1, PAGE_CAP + 1):
        payload = await client.get_json(
            "v2", path, {**PUBLISHED, **RECENT_FIRST, "skip": skip, "limit": PAGE_LIMIT},
            check=page_check(("articles",), skip))
        page = items_of(payload, ("articles",)) or []
        meta = _pagination(payload)
        if meta is None:
            return None
        if number == 1:
            total = meta.totalCount
        if total is None:
            return None
        oldest: datetime | None = None
        for item in page:
            try:
                article = Article.model_validate(item)
            except ValidationError:
                return None  # the whole walk names and skips it
            if article.updatedAt is None or article.status not in (None, "published"):
                return None
            if article.id not in seen:
                seen.add(article.id)
                article.status = "published"
                recent.append(article)
                oldest = article.updatedAt
        if page and oldest is None:
            return None  # a page of repeats: a service ignoring `skip` (the whole walk stops)
        skip += len(page)
        if oldest is None or oldest < mark or _ends(page, meta, number, PAGE_LIMIT):
            break
    else:
        return None
    if len(known.updated.keys() | seen) != total:
        return None
    return recent


async def read_structure(client: ApiClient, info: WorkspaceInfo,
                         known: KnownArticles | None = None) -> Structure:
    """Every v2 listing of the workspace, concurrently, then cluster and author membership.

    With *known* (the last complete sync's articles), only the articles updated since are
    read when the listing proves that is all that changed (`Structure.recent_only`).
    """
    base = f"/workspaces/{info.id}"
    agents = asyncio.ensure_future(
        paginate(client, "v2", f"{base}/agents", ("agents",), STABLE_ORDER))
    articles = asyncio.ensure_future(_read_articles(client, f"{base}/articles", known))
    clusters = asyncio.ensure_future(
        _optional_list(client, f"{base}/clusters", "clusters", Cluster, "cluster"))
    authors = asyncio.ensure_future(_optional_list(
        client, f"{base}/author-identities", "authorIdentities", AuthorIdentity,
        "author identity"))
    posts = asyncio.ensure_future(_optional_list(
        client, f"{base}/social-posts", "socialPosts", SocialPost, "social post"))
    digest = asyncio.ensure_future(_digest(client, base))
    await gather_all([agents, articles, clusters, authors, posts, digest])
    listed = articles.result()
    structure = Structure(
        version="v2",
        info=info,
        agents=parse_records(agents.result().items, Agent, "agent"),
        articles=listed.articles,
        articles_complete=listed.complete,
        articles_exact=listed.exact,
        recent_only=listed.recent_only,
        clusters=clusters.result(),
        authors=authors.result(),
        social_posts=posts.result(),
    )
    structure.digest, structure.digest_read = digest.result()
    await gather_all([
        _link(client, base, structure.articles, "clusterId", "clusters",
              structure.clusters or []),
        _link(client, base, structure.articles, "authorIdentityId", "author-identities",
              structure.authors or []),
    ])
    return structure


@dataclass
class ArticleListing:
    """The published articles as read: all of them, or (`recent_only`) the recently updated."""

    articles: list[Article]
    complete: bool
    exact: bool
    recent_only: bool


async def _read_articles(client: ApiClient, path: str,
                         known: KnownArticles | None) -> ArticleListing:
    """The recent articles when *known* allows it, else the whole listing in a stable order."""
    if known is not None:
        recent = await _recent_articles(client, path, known)
        if recent is not None:
            return ArticleListing(recent, complete=True, exact=True, recent_only=True)
    listing = await paginate(client, "v2", path, ("articles",), {**PUBLISHED, **STABLE_ORDER})
    articles = _published(parse_records(listing.items, Article, "article"))
    complete = listing.complete
    if complete and listing.total is not None and len(listing.items) < listing.total:
        # an article deleted mid-walk shifts the rest a page back: one may have gone unread
        log.warning("the article listing ended after %d of the %d articles it announced; "
                    "the ones not listed are kept as stored", len(listing.items), listing.total)
        complete = False
    exact = (complete and len(articles) == len(listing.items)
             and all(a.updatedAt is not None for a in articles))
    return ArticleListing(articles, complete, exact, recent_only=False)


async def read_article(client: ApiClient, workspace_id: str, article_id: str) -> dict[str, Any]:
    """One article with its body (`GET /workspaces/{id}/articles/{articleId}`)."""
    payload = await client.get_json("v2", f"/workspaces/{workspace_id}/articles/{article_id}")
    return unwrap(payload, "article")
