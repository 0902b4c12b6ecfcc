"""Reading a workspace's structure through the v2 API.

Role: walk the v2 list endpoints (workspace, agents, published articles, clusters and their
articles, author identities and theirs, social posts, digest) into a `Structure`: typed records
in listing order, article bodies only where the list items carried them (the walking itself is
`paging.py`). Given what the last sync listed (`KnownArticles`), the published articles are read
newest update first and only as far as the last sync's newest `updatedAt`; the listing's
`totalCount` then proves nothing else was added or removed (else the whole listing is walked as
without it). A whole listing that ends short of its `totalCount` is incomplete: nothing it did
not name is taken for deleted. It must never fetch article bodies (the sync decides which are
needed), never touch the store, never take a failed answer for an empty listing, and never
swallow a 401/402/403.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from sitegen.errors import ApiError, QuotaError
from sitegen.fetch import paging
from sitegen.fetch.answers import NotFound
from sitegen.fetch.owners import KnownOwners, link_owners
from sitegen.fetch.paging import (
    PAGE_LIMIT,
    ends,
    gather_all,
    items_of,
    page_check,
    paginate,
    pagination_of,
    parse_records,
    unwrap,
)
from sitegen.fetch.recentlist import recent_owners
from sitegen.fetch.records import (
    Agent,
    Article,
    AuthorIdentity,
    Cluster,
    DigestSettings,
    SocialPost,
    WorkspaceInfo,
)
from sitegen.workspace import ApiVersion

if TYPE_CHECKING:
    from sitegen.fetch.client import ApiClient

log = logging.getLogger("sitegen.fetch")

PUBLISHED = {"status": "published"}
STABLE_ORDER = {"sortBy": "createdAt", "sortOrder": "asc"}
RECENT_FIRST = {"sortBy": "updatedAt", "sortOrder": "desc"}

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class KnownArticles:
    """What the last sync's complete article listing held: each id with its `updatedAt`,
    and (`owners`, by field name) each one's stored cluster and author identity."""

    updated: dict[str, datetime]
    owners: dict[str, KnownOwners] = field(default_factory=dict)
    #: The clusters and author identities it stored (None: none known).
    clusters: list[Cluster] | None = None
    authors: list[AuthorIdentity] | None = None

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
    #: Owner listing pages a new article costs: one per cluster and author identity of each
    #: kind the article records do not name (`owners.py`).
    owner_pages_per_new: int = 0


def workspace_info(raw: Any, workspace_id: str) -> WorkspaceInfo:
    """The workspace record of either version; its id alone (with a warning) if malformed."""
    if isinstance(raw, dict):
        try:
            return WorkspaceInfo.model_validate({"id": workspace_id, **raw})
        except ValidationError:
            pass
    log.warning("the workspace record is malformed; using its id %s only", workspace_id)
    return WorkspaceInfo(id=workspace_id)


async def read_workspace(client: ApiClient, workspace_id: str) -> WorkspaceInfo:
    """`GET /workspaces/{id}`; NotFound here means "no v2 at this address"."""
    payload = await client.get_json("v2", f"/workspaces/{workspace_id}")
    return workspace_info(unwrap(payload, "workspace"), workspace_id)


async def _optional_list(client: ApiClient, path: str, key: str, model: type[M],
                         kind: str, recent: Awaitable[list[M] | None] | None = None
                         ) -> list[M] | None:
    """A listing the service may lack (404: None, with a warning); *recent*, when given,
    is tried first (`recentlist.py`) and the whole listing walked only when it gives None."""
    try:
        if recent is not None and (records := await recent) is not None:
            return records
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


def _published(articles: list[Article]) -> list[Article]:
    """Keep the published ones; fill a missing status (the listing was filtered by it)."""
    for article in articles:
        if article.status is None:
            article.status = "published"
    return [article for article in articles if article.status == "published"]


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
    for number in range(1, paging.PAGE_CAP + 1):
        payload = await client.get_json(
            "v2", path, {**PUBLISHED, **RECENT_FIRST, "skip": skip, "limit": PAGE_LIMIT},
            check=page_check(("articles",), skip))
        page = items_of(payload, ("articles",)) or []
        meta = pagination_of(payload)
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
        if oldest is None or oldest < mark or ends(page, meta, number, PAGE_LIMIT):
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
    read when the listing proves that is all that changed (`Structure.recent_only`), and an
    article's owners are asked only where the store cannot tell them (`owners.py`).
    """
    base = f"/workspaces/{info.id}"
    agents = asyncio.ensure_future(
        paginate(client, "v2", f"{base}/agents", ("agents",), STABLE_ORDER))
    articles = asyncio.ensure_future(_read_articles(client, f"{base}/articles", known))
    stored = known if known is not None else KnownArticles({})
    clusters = asyncio.ensure_future(_optional_list(
        client, f"{base}/clusters", "clusters", Cluster, "cluster",
        recent_owners(client, f"{base}/clusters", "clusters", Cluster, stored.clusters)))
    authors = asyncio.ensure_future(_optional_list(
        client, f"{base}/author-identities", "authorIdentities", AuthorIdentity,
        "author identity", recent_owners(client, f"{base}/author-identities",
                                         "authorIdentities", AuthorIdentity, stored.authors)))
    posts = asyncio.ensure_future(_optional_list(
        client, f"{base}/social-posts", "socialPosts", SocialPost, "social post"))
    digest = asyncio.ensure_future(_digest(client, base))
    await gather_all([agents, articles, clusters, authors, posts, digest])
    listed = articles.result()
    structure = Structure(
        version="v2", info=info, agents=parse_records(agents.result().items, Agent, "agent"),
        articles=listed.articles, articles_complete=listed.complete, articles_exact=listed.exact,
        recent_only=listed.recent_only, clusters=clusters.result(), authors=authors.result(),
        social_posts=posts.result())
    structure.digest, structure.digest_read = digest.result()
    owners = known.owners if known is not None else {}
    structure.owner_pages_per_new = sum(
        len(kind or []) for name, kind in (("clusterId", structure.clusters),
                                           ("authorIdentityId", structure.authors))
        if not any(name in a.model_fields_set for a in structure.articles))
    await gather_all([
        link_owners(client, base, structure.articles, "clusterId", "clusters",
                    structure.clusters or [], owners.get("clusterId")),
        link_owners(client, base, structure.articles, "authorIdentityId", "author-identities",
                    structure.authors or [], owners.get("authorIdentityId")),
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
