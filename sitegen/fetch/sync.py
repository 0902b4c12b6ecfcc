"""The sync: bring the local content cache up to date and return one `Workspace`.

Role: choose the API version (v2, falling back to v1 only when the v2
workspace endpoint answers 404), read the structure through it, fetch article
bodies only for articles that are new or whose `updatedAt` changed since the
cache, drop records that cannot be used (with a warning), and replace the
cache only when everything succeeded. `--offline` reads the cache and makes no
request. It runs its async work with `asyncio.run`, so it is safe to call
from any thread that has no running event loop. It must never replace the
cache after a failure, never treat a record as deleted unless the listing was
complete, and never log or raise anything containing the key.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from sitegen.config import Config
from sitegen.errors import CacheError, ConfigError, UnreachableError
from sitegen.fetch import import_httpx
from sitegen.fetch.cache import CacheState, ContentCache
from sitegen.fetch.ledger import CallLedger
from sitegen.fetch.records import Article
from sitegen.workspace import Workspace

if TYPE_CHECKING:  # the network side (httpx) is imported only when a sync makes requests
    import asyncio

    import httpx

    from sitegen.fetch.client import ApiClient
    from sitegen.fetch.v2 import KnownArticles, Structure

log = logging.getLogger("sitegen.fetch")

BODY_FIELDS = frozenset({"content", "blocks", "meta"})
T = TypeVar("T")
ArticleReader = Callable[["ApiClient", str, str], Awaitable[dict[str, Any]]]


@dataclass
class SyncStats:
    """What one sync gathered and spent, for summaries and reports."""

    agents: int = 0
    articles: int = 0
    clusters: int | None = None
    authors: int | None = None
    social_posts: int | None = None
    details_made: int = 0
    details_saved: int = 0
    skipped: int = 0
    removed: int = 0

    def records(self) -> dict[str, int | None]:
        """Records per kind; None for kinds the API version does not have."""
        return {"agents": self.agents, "articles": self.articles, "clusters": self.clusters,
                "authors": self.authors, "social_posts": self.social_posts}


@dataclass
class SyncResult:
    """The workspace a build uses, and what getting it cost."""

    workspace: Workspace
    ledger: CallLedger
    from_cache: bool
    stats: SyncStats = field(default_factory=SyncStats)
    #: What the content cache's files hold now, when they hold exactly `workspace`.
    cached: CacheState | None = None


@dataclass
class SyncPlan:
    """What a sync would spend now (from `plan_sync`, which spends only the list calls)."""

    version: str
    list_calls: int
    details_needed: int
    details_saved: int
    bodies_in_lists: int
    cached: bool

    @property
    def total(self) -> int:
        return self.list_calls + self.details_needed


def _has_text(value: str | None) -> bool:
    return bool(value and value.strip())


def _usable(article: Article) -> bool:
    return _has_text(article.title) or _has_text(article.content) or bool(article.blocks)


def _client(config: Config, key: str, transport: httpx.AsyncBaseTransport | None,
            ledger: CallLedger, max_calls: int | None) -> ApiClient:
    import_httpx()
    from sitegen.fetch.client import ApiClient

    api = config.api
    return ApiClient(api.base_url, key, transport=transport, timeout=api.timeout,
                     concurrency=api.concurrency, retry_budget=api.retry_budget,
                     max_retries=api.max_retries, ledger=ledger, max_calls=max_calls)


def _known(previous: Workspace | None) -> KnownArticles | None:
    """What an incremental v2 article listing starts from: an exact v2 cache, else nothing."""
    if previous is None or previous.api_version != "v2" or not previous.articles_exact:
        return None
    from sitegen.fetch.v2 import KnownArticles

    updated = {a.id: a.updatedAt for a in previous.articles if a.updatedAt is not None}
    return KnownArticles(updated) if len(updated) == len(previous.articles) else None


async def _read_structure(client: ApiClient, config: Config, previous: Workspace | None
                          ) -> tuple[Structure, ArticleReader]:
    from sitegen.fetch import v1, v2
    from sitegen.fetch.client import NotFound

    workspace_id, wanted, url = config.api.workspace, config.api.version, config.api.base_url
    if wanted != "v1":
        try:
            info = await v2.read_workspace(client, workspace_id)
        except NotFound:
            if wanted == "v2":
                raise UnreachableError(
                    f"the service at {url} has no v2 API for workspace {workspace_id} (404): "
                    "set [api] version = \"auto\" or \"v1\", or check [api] url and workspace"
                ) from None
            log.info("the v2 API answered 404 for the workspace; falling back to v1")
        else:
            return await v2.read_structure(client, info, _known(previous)), v2.read_article
    try:
        return await v1.read_structure(client, workspace_id), v1.read_article
    except NotFound:
        which = "neither v2 nor v1" if wanted == "auto" else "the v1 API"
        raise UnreachableError(
            f"{which} at {url} knows workspace {workspace_id} (404): check [api] url, "
            "workspace and version"
        ) from None


def _plan_bodies(articles: list[Article], previous: Workspace | None
                 ) -> tuple[list[Article | None], list[Article], int]:
    """For each listed article: its final form when known now (None: needs a detail request).

    Returns (known-or-None per article, the articles needing a detail request, bodies saved).
    """
    cached = {a.id: a for a in previous.articles} if previous is not None else {}
    known: list[Article | None] = []
    needed: list[Article] = []
    saved = 0
    for listed in articles:
        if listed.has_body:
            known.append(listed)
            continue
        old = cached.get(listed.id)
        if old is not None and listed.updatedAt is not None and old.updatedAt == listed.updatedAt:
            fresh = {k: getattr(listed, k) for k in listed.model_fields_set - BODY_FIELDS}
            # The very cached record when the listing says nothing new (the cache then
            # knows it unchanged: see ContentCache.save).
            same = all(getattr(old, k) == value for k, value in fresh.items())
            known.append(old if same else old.model_copy(update=fresh))
            saved += 1
            continue
        known.append(None)
        needed.append(listed)
    return known, needed, saved


async def _detail(client: ApiClient, reader: ArticleReader, workspace_id: str,
                  listed: Article) -> Article | None:
    from sitegen.fetch import v2
    from sitegen.fetch.client import NotFound

    try:
        raw = await reader(client, workspace_id, listed.id)
    except NotFound:
        log.warning("article %s disappeared during the sync (404); it is left out", listed.id)
        return None
    parsed = v2.parse_records([{**raw, "id": listed.id}], Article, "article")
    if not parsed:
        log.warning("the body of article %s is malformed; using its listing record", listed.id)
        return listed
    detail = parsed[0]
    missing = {k: getattr(listed, k) for k in listed.model_fields_set - detail.model_fields_set}
    return detail.model_copy(update=missing) if missing else detail


def _carried(structure: Structure, previous: Workspace | None) -> int:
    """Cached articles a recent-only listing did not name: kept as cached, bodies and all."""
    if previous is None or not structure.recent_only:
        return 0
    listed = {a.id for a in structure.articles}
    return sum(1 for a in previous.articles if a.id not in listed)


def _merged(previous: list[Article], listed: set[str], recent: list[Article]) -> list[Article]:
    """The cached articles with the recently updated ones in their place, new ones last.

    *listed* are the ids the recent listing named; one of them missing from *recent*
    (unusable now, or gone before its detail request) is dropped, not kept as cached.
    Cached ones keep their places and new ones follow, oldest created first (as a whole
    listing would have them, new articles being the newest); the order carries no meaning.
    """
    fresh = {a.id: a for a in recent}
    merged = [fresh.pop(a.id, a) for a in previous if a.id not in listed or a.id in fresh]
    merged.extend(sorted(fresh.values(), key=lambda a: (a.createdAt is not None,
                                                        a.createdAt or a.updatedAt, a.id)))
    return merged


def _finish(structure: Structure, articles: list[Article], previous: Workspace | None,
            stats: SyncStats, *, exact: bool) -> Workspace:
    kept: list[Article] = []
    for article in articles:
        if article.status not in (None, "published"):
            log.info("article %s is no longer published; it is left out", article.id)
            continue
        if not _usable(article):
            log.warning("skipped article %s: it has neither a title nor a body", article.id)
            stats.skipped += 1
            continue
        kept.append(article)
    exact = exact and len(kept) == len(articles)
    if previous is not None and structure.recent_only:
        stats.details_saved += _carried(structure, previous)
        kept = _merged(previous.articles, {a.id for a in structure.articles}, kept)
    listed_ids = {a.id for a in kept}
    if previous is not None and not structure.articles_complete:
        carried = [a for a in previous.articles if a.id not in listed_ids]
        kept.extend(carried)
        listed_ids.update(a.id for a in carried)
    if previous is not None:
        stats.removed = sum(1 for a in previous.articles if a.id not in listed_ids)
    digest = structure.digest
    if not structure.digest_read and previous is not None:
        digest = previous.digest
    workspace = Workspace(
        api_version=structure.version, info=structure.info, agents=structure.agents,
        articles=kept, clusters=structure.clusters, authors=structure.authors,
        social_posts=structure.social_posts, digest=digest,
        articles_exact=exact and structure.articles_exact,
    )
    _count(workspace, stats)
    return workspace


def _count(workspace: Workspace, stats: SyncStats) -> None:
    stats.agents = len(workspace.agents)
    stats.articles = len(workspace.articles)
    stats.clusters = None if workspace.clusters is None else len(workspace.clusters)
    stats.authors = None if workspace.authors is None else len(workspace.authors)
    stats.social_posts = None if workspace.social_posts is None else len(workspace.social_posts)


async def _sync(config: Config, key: str, transport: httpx.AsyncBaseTransport | None,
                previous: Workspace | None, ledger: CallLedger,
                max_calls: int | None) -> tuple[Workspace, SyncStats]:
    from sitegen.fetch.v2 import gather_all

    stats = SyncStats()
    async with _client(config, key, transport, ledger, max_calls) as client:
        structure, reader = await _read_structure(client, config, previous)
        ledger.version = structure.version
        known, needed, stats.details_saved = _plan_bodies(structure.articles, previous)
        fetched = iter(await gather_all(
            _detail(client, reader, config.api.workspace, a) for a in needed))
        stats.details_made = len(needed)
    articles = [a if a is not None else next(fetched) for a in known]
    found = [a for a in articles if a is not None]
    workspace = _finish(structure, found, previous, stats, exact=len(found) == len(articles))
    ledger.detail_saved = stats.details_saved
    return workspace, stats


def _unchanged(workspace: Workspace, previous: Workspace | None) -> bool:
    """True when saving `workspace` would write what the cache already holds.

    Field by field: the cache loads into subclasses of the record classes, so the
    workspaces themselves never compare equal; records of another class count as changed.
    """
    if previous is None:
        return False
    return all(getattr(workspace, name) == getattr(previous, name)
               for name in Workspace.model_fields)


def _run(work: Awaitable[T]) -> T:
    """`asyncio.run(work)`, with the result handed back outside the main task.

    Python 3.11's runner looks up the SIGINT handler on exit, and the lookup formats a
    repr of the main task, result included: the repr of a whole workspace (0.4 s of CPU
    for 1,000 articles). A task whose result is None costs nothing to show.
    """
    box: list[T] = []

    async def main() -> None:
        box.append(await work)

    import asyncio  # here, not at the top: an offline build never starts an event loop

    with asyncio.Runner(loop_factory=_loop_factory()) as runner:
        runner.run(main())
    return box[0]


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's event loop where it is installed (a dependency off Windows), else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def sync(config: Config, *, key: str | None, transport: httpx.AsyncBaseTransport | None = None,
         refresh: bool = False, offline: bool = False,
         max_calls: int | None = None) -> SyncResult:
    """Bring the cache up to date and return the workspace (see the module docstring)."""
    if offline and refresh:
        raise ConfigError("--offline and --refresh contradict each other: drop one of them")
    cache = ContentCache.for_config(config)
    ledger = CallLedger()
    if offline:
        cached = cache.load()
        if cached is None:
            raise CacheError(f"no usable content cache at {cache.path}: run once without "
                             "--offline (e.g. `sitegen fetch`) to fill it")
        ledger.version = cached.api_version
        stats = SyncStats()
        _count(cached, stats)
        return SyncResult(cached, ledger, True, stats, cache.state)
    if key is None:
        key = config.api_key()
    previous = None if refresh else cache.load()
    workspace, stats = _run(_sync(config, key, transport, previous, ledger, max_calls))
    if not _unchanged(workspace, previous):  # else the cache file is left as it is
        cache.save(workspace)
    return SyncResult(workspace, ledger, False, stats, cache.state)


async def _plan(config: Config, key: str, transport: httpx.AsyncBaseTransport | None,
                previous: Workspace | None, ledger: CallLedger) -> SyncPlan:
    async with _client(config, key, transport, ledger, None) as client:
        structure, _ = await _read_structure(client, config, previous)
    known, needed, saved = _plan_bodies(structure.articles, previous)
    saved += _carried(structure, previous)
    in_lists = sum(1 for a in structure.articles if a.has_body)
    return SyncPlan(structure.version, ledger.total, len(needed), saved, in_lists,
                    previous is not None)


def plan_sync(config: Config, *, key: str | None,
              transport: httpx.AsyncBaseTransport | None = None) -> SyncPlan:
    """What a sync would spend now: makes the list calls only, never a detail call or a write."""
    if key is None:
        key = config.api_key()
    ledger = CallLedger()
    return _run(_plan(config, key, transport, ContentCache.for_config(config).load(), ledger))


def demo_transport() -> httpx.AsyncBaseTransport:
    """The in-process emulator over the bundled demo workspace (`--demo`; key "demo")."""
    import_httpx()
    import httpx

    from sitegen.emulator.app import create_app
    from sitegen.emulator.demo import load_demo

    return httpx.ASGITransport(app=create_app(load_demo()))
