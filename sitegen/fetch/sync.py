"""The sync: bring the local content cache up to date and return one `Workspace`.

Role: choose the API version (v2, falling back to v1 only when the v2
workspace endpoint answers 404), read the structure through it, fetch article
bodies only for articles that are new or whose `updatedAt` changed since the
cache, drop records that cannot be used (with a warning), and replace the
cache only when everything succeeded. With a current index of the cache
(`sitegen.fetch.cacheindex`), a re-sync whose listing names only the recent
updates plans from the index and saves the changes file alone
(`ContentCache.save_changes`), never reading the cache's base; its workspace is
read back only when asked for (`SyncResult.workspace`). `--offline` reads the
cache and makes no request. It runs its async work with `asyncio.run`, so it is safe to call
from any thread that has no running event loop. It must never replace the
cache after a failure, never treat a record as deleted unless the listing was
complete, and never log or raise anything containing the key.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from sitegen.config import Config
from sitegen.errors import CacheError, ConfigError, UnreachableError
from sitegen.fetch.cache import CacheState, ContentCache
from sitegen.fetch.cacheindex import CacheIndex, lists_the_same, same_value, updated_value
from sitegen.fetch.ledger import CallLedger
from sitegen.fetch.records import BODY_FIELDS, Article, DigestSettings, WorkspaceInfo
from sitegen.workspace import ApiVersion, Workspace

if TYPE_CHECKING:  # the network side (httpx) is imported only when a sync makes requests
    import asyncio

    import httpx

    from sitegen.fetch.client import ApiClient
    from sitegen.fetch.v2 import KnownArticles, Structure
    from sitegen.report import Progress

log = logging.getLogger("sitegen.fetch")

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


class SyncResult:
    """The workspace a build uses, and what getting it cost.

    After a re-sync that saved only the cache's changes file, the workspace is read
    back from the cache when first asked for: a rebuild that resumes the model memo
    never asks (`info` and `api_version` come without it).
    """

    def __init__(self, workspace: Workspace | Callable[[], Workspace], ledger: CallLedger,
                 from_cache: bool, stats: SyncStats | None = None,
                 cached: CacheState | None = None, *, info: WorkspaceInfo | None = None,
                 api_version: ApiVersion | None = None) -> None:
        self._workspace = workspace if isinstance(workspace, Workspace) else None
        self._read_back = None if isinstance(workspace, Workspace) else workspace
        self.ledger = ledger
        self.from_cache = from_cache
        self.stats = stats if stats is not None else SyncStats()
        #: What the content cache's files hold now, when they hold exactly `workspace`.
        self.cached = cached
        if self._workspace is not None:
            info, api_version = self._workspace.info, self._workspace.api_version
        if info is None or api_version is None:
            raise ValueError("a SyncResult without its workspace needs its info and version")
        self.info: WorkspaceInfo = info
        self.api_version: ApiVersion = api_version

    @property
    def workspace(self) -> Workspace:
        if self._workspace is None:
            assert self._read_back is not None
            self._workspace = self._read_back()
            self._read_back = None
        return self._workspace


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


@dataclass(frozen=True)
class _AsCached:
    """A listed article the cache holds as the listing shows it (planned from the index)."""

    id: str


Planned = Article | _AsCached


class _Previous:
    """The cache's content as a sync needs it: its index at once, the workspace if asked.

    With a current index (`sitegen.fetch.cacheindex`), a re-sync whose listing shows
    only recent updates plans from the index and saves the changes file alone, never
    reading the base; anything else reads the whole cache, as a sync always did.
    """

    def __init__(self, cache: ContentCache, *, refresh: bool) -> None:
        self.cache = cache
        self.index: CacheIndex | None = None if refresh else cache.load_index()
        self._read = refresh
        self._workspace: Workspace | None = None
        #: What the article listing was told the cache holds, when the index told it.
        self._listed_since: KnownArticles | None = None

    @property
    def workspace(self) -> Workspace | None:
        """The cached workspace, read at the first ask (None: no usable cache, or --refresh).

        When the listing was asked for what changed since the articles the index named,
        the files must hold those very articles and update times: else (a damaged file,
        or another sitegen writing meanwhile) the sync stops before it saves anything.
        """
        if not self._read:
            self._read = True
            self._workspace = self.cache.load()
            if self._listed_since is not None and _known(self._workspace) != self._listed_since:
                self.cache.drop_index()
                raise _changed_meanwhile(self.cache)
        return self._workspace

    def known(self) -> KnownArticles | None:
        index = self.index
        if index is None:
            return _known(self.workspace)
        if index.api_version != "v2" or not index.articles_exact:
            return None
        from sitegen.fetch.v2 import KnownArticles

        updated = index.updated()
        self._listed_since = KnownArticles(updated) if updated is not None else None
        return self._listed_since

    def resolve(self, planned: list[Planned]) -> list[Article]:
        """*planned* with each `_AsCached` replaced by the very cached record."""
        if not any(isinstance(item, _AsCached) for item in planned):
            return [item for item in planned if isinstance(item, Article)]
        workspace = self.workspace
        cached = {a.id: a for a in workspace.articles} if workspace is not None else {}
        try:
            return [cached[item.id] if isinstance(item, _AsCached) else item
                    for item in planned]
        except KeyError:
            self.cache.drop_index()
            raise _changed_meanwhile(self.cache) from None


def _changed_meanwhile(cache: ContentCache) -> CacheError:
    return CacheError(f"the content cache in {cache.folder} is not what its index said (another "
                      "sitegen wrote it meanwhile, or a file is damaged): nothing was saved; "
                      "run the command again")


async def _read_structure(client: ApiClient, config: Config, known: KnownArticles | None
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
            return await v2.read_structure(client, info, known), v2.read_article
    try:
        return await v1.read_structure(client, workspace_id), v1.read_article
    except NotFound:
        which = "neither v2 nor v1" if wanted == "auto" else "the v1 API"
        raise UnreachableError(
            f"{which} at {url} knows workspace {workspace_id} (404): check [api] url, "
            "workspace and version"
        ) from None


def _plan_bodies(articles: list[Article], previous: Workspace | None
                 ) -> tuple[list[Planned | None], list[Article], int]:
    """For each listed article: its final form when known now (None: needs a detail request).

    Returns (known-or-None per article, the articles needing a detail request, bodies saved).
    """
    cached = {a.id: a for a in previous.articles} if previous is not None else {}
    known: list[Planned | None] = []
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


def _plan_from_index(structure: Structure, index: CacheIndex | None
                     ) -> tuple[list[Planned | None], list[Article], int] | None:
    """`_plan_bodies` from the cache's index, or None when it cannot tell.

    Only for a listing of the recent updates whose digest was read: everything it does
    not name is as cached. A listed article with its cached `updatedAt` but other
    listing fields would take them over its cached body: that needs the record.
    """
    if index is None or not structure.recent_only or not structure.digest_read:
        return None
    known: list[Planned | None] = []
    needed: list[Article] = []
    saved = 0
    for listed in structure.articles:
        if listed.has_body:
            known.append(listed)
            continue
        row = index.rows.get(listed.id)
        if (row is not None and listed.updatedAt is not None
                and same_value(listed.updatedAt, updated_value(row[1]))):
            if not lists_the_same(listed, row[1]):
                return None
            known.append(_AsCached(listed.id))
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


def _kept(found: list[Planned], stats: SyncStats) -> list[Planned]:
    """The published, usable articles of *found* (the others logged, the unusable counted)."""
    kept: list[Planned] = []
    for article in found:
        if isinstance(article, _AsCached):
            kept.append(article)  # cached, so published and usable
            continue
        if article.status not in (None, "published"):
            log.info("article %s is no longer published; it is left out", article.id)
            continue
        if not _usable(article):
            log.warning("skipped article %s: it has neither a title nor a body", article.id)
            stats.skipped += 1
            continue
        kept.append(article)
    return kept


def _rest(structure: Structure, digest: DigestSettings | None, *, exact: bool) -> Workspace:
    """The workspace the listings make, without its articles."""
    return Workspace(
        api_version=structure.version, info=structure.info, agents=structure.agents,
        clusters=structure.clusters, authors=structure.authors,
        social_posts=structure.social_posts, digest=digest,
        articles_exact=exact and structure.articles_exact,
    )


def _finish(structure: Structure, kept: list[Article], previous: Workspace | None,
            stats: SyncStats, *, exact: bool) -> Workspace:
    """The synced workspace: *kept* (the listed articles, `_kept`) merged with *previous*."""
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
    workspace = _rest(structure, digest, exact=exact).model_copy(update={"articles": kept})
    _count(workspace, stats)
    return workspace


@dataclass
class _Changes:
    """A re-sync's outcome as changes to the cache its index describes."""

    rest: Workspace
    changed: list[Article]
    dropped: set[str]
    carried: int
    articles: int

    @property
    def none(self) -> bool:
        return not self.changed and not self.dropped


def _changes(structure: Structure, kept: list[Planned], index: CacheIndex, *,
             exact: bool) -> _Changes:
    """What `_finish` would make of a recent-only listing, as changes to the cache.

    Changed articles keep their places; new ones follow, oldest created first (as
    `_merged` orders them); listed ids that are no longer kept are dropped.
    """
    fresh = [a for a in kept if isinstance(a, Article)]
    updated = [a for a in fresh if a.id in index.rows]
    new = sorted((a for a in fresh if a.id not in index.rows),
                 key=lambda a: (a.createdAt is not None, a.createdAt or a.updatedAt, a.id))
    names = {a.id for a in kept}
    listed = {a.id for a in structure.articles}
    dropped = {key for key in listed if key in index.rows and key not in names}
    carried = sum(1 for key in index.rows if key not in listed)
    return _Changes(_rest(structure, structure.digest, exact=exact), [*updated, *new], dropped,
                    carried, len(index.rows) - len(dropped) + len(new))


def _count(workspace: Workspace, stats: SyncStats) -> None:
    stats.agents = len(workspace.agents)
    stats.articles = len(workspace.articles)
    stats.clusters = None if workspace.clusters is None else len(workspace.clusters)
    stats.authors = None if workspace.authors is None else len(workspace.authors)
    stats.social_posts = None if workspace.social_posts is None else len(workspace.social_posts)


@dataclass
class _Synced:
    """What the requests of one sync gave: the listings and the articles to keep."""

    structure: Structure
    kept: list[Planned]
    exact: bool
    indexed: bool
    stats: SyncStats


class _FetchStatus:
    """The fetch's status line: requests while the listings are read, then articles n/N.

    Fed by the ledger (every request, retries included) and by each detail request as
    it ends; drawn by `sitegen.report.Progress` (on a terminal only, throttled).
    """

    def __init__(self, progress: Progress, ledger: CallLedger) -> None:
        self.progress = progress
        self.ledger = ledger
        self.details = 0
        self.done = 0
        ledger.watch = self.requested

    def requested(self, requests: int) -> None:
        if not self.details:
            self.progress.status(f"fetching: {requests} API request{'s' if requests != 1 else ''}")

    def expect(self, details: int) -> None:
        self.details = details
        if details:
            self.progress.update("fetching articles", 0, details)

    async def counted(self, work: Awaitable[T]) -> T:
        result = await work
        self.done += 1
        self.progress.update("fetching articles", self.done, self.details)
        return result

    def close(self) -> None:
        self.ledger.watch = None
        self.progress.clear()


async def _sync(config: Config, key: str, transport: httpx.AsyncBaseTransport | None,
                previous: _Previous, ledger: CallLedger, max_calls: int | None,
                progress: Progress | None) -> _Synced:
    from sitegen.fetch.v2 import gather_all

    stats = SyncStats()
    status = _FetchStatus(progress, ledger) if progress is not None and progress.enabled else None
    try:
        async with _client(config, key, transport, ledger, max_calls) as client:
            structure, reader = await _read_structure(client, config, previous.known())
            ledger.version = structure.version
            plan = _plan_from_index(structure, previous.index)
            indexed = plan is not None
            if plan is None:
                plan = _plan_bodies(structure.articles, previous.workspace)
            known, needed, stats.details_saved = plan
            details = (_detail(client, reader, config.api.workspace, a) for a in needed)
            if status is not None:
                status.expect(len(needed))
                details = (status.counted(work) for work in details)
            fetched = iter(await gather_all(details))
            stats.details_made = len(needed)
    finally:
        if status is not None:
            status.close()
    articles = [a if a is not None else next(fetched) for a in known]
    found = [a for a in articles if a is not None]
    kept = _kept(found, stats)
    return _Synced(structure, kept, len(kept) == len(articles), indexed, stats)


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
         refresh: bool = False, offline: bool = False, max_calls: int | None = None,
         progress: Progress | None = None) -> SyncResult:
    """Bring the cache up to date and return the workspace (see the module docstring).

    With *progress* (enabled on a terminal), the requests and article details made so
    far show on its status line while they are made.
    """
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
    previous = _Previous(cache, refresh=refresh)
    synced = _run(_sync(config, key, transport, previous, ledger, max_calls, progress))
    if synced.indexed:
        assert previous.index is not None
        result = _save_changes(cache, synced, previous.index, ledger)
        if result is not None:
            return result
    stats = synced.stats
    workspace = _finish(synced.structure, previous.resolve(synced.kept), previous.workspace,
                        stats, exact=synced.exact)
    ledger.detail_saved = stats.details_saved
    if not _unchanged(workspace, previous.workspace):  # else the cache file is left as it is
        cache.save(workspace)
    elif previous.index is None:
        cache.save_index(workspace)  # the next sync plans from it
    return SyncResult(workspace, ledger, False, stats, cache.state)


def _save_changes(cache: ContentCache, synced: _Synced, index: CacheIndex,
                  ledger: CallLedger) -> SyncResult | None:
    """Save a sync planned from *index* as changes alone; None when it needs the full save.

    The workspace is then read back from the cache only if asked for.
    """
    from sitegen.fetch.cache import rest_fingerprint

    changes = _changes(synced.structure, synced.kept, index, exact=synced.exact)
    unchanged = changes.none and rest_fingerprint(changes.rest) == index.state.rest
    if not unchanged and not cache.save_changes(changes.rest, changes.changed,
                                                changes.dropped, index):
        return None
    stats = synced.stats
    stats.details_saved += changes.carried
    stats.removed = len(changes.dropped)
    _count(changes.rest, stats)
    stats.articles = changes.articles
    ledger.detail_saved = stats.details_saved
    return SyncResult(partial(_read_back, cache), ledger, False, stats,
                      index.state if unchanged else cache.state,
                      info=changes.rest.info, api_version=changes.rest.api_version)


def _read_back(cache: ContentCache) -> Workspace:
    """The workspace a sync left in *cache* (`SyncResult.workspace`, read when asked for)."""
    workspace = cache.load()
    if workspace is None:
        raise CacheError(f"the content cache {cache.path} could not be read back after the "
                         "sync: run `sitegen build --refresh` to fetch everything again")
    return workspace


async def _plan(config: Config, key: str, transport: httpx.AsyncBaseTransport | None,
                previous: Workspace | None, ledger: CallLedger) -> SyncPlan:
    async with _client(config, key, transport, ledger, None) as client:
        structure, _ = await _read_structure(client, config, _known(previous))
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
    from sitegen.emulator.app import create_app
    from sitegen.emulator.demo import load_demo
    from sitegen.fetch.lean_httpx import httpx

    return httpx.ASGITransport(app=create_app(load_demo()))
