"""The sync: bring the content store up to date and return one `Workspace`.

Role: choose the API version (v2, falling back to v1 only when the v2 workspace endpoint answers
404), read the structure through it, fetch bodies only for articles that are new or whose
`updatedAt` changed, drop records that cannot be used (with a warning), and save the result in
one transaction (`stored.py`) once everything succeeded. `--refresh` plans nothing from the
store, but keeps what it had for articles a listing that ended early could not list; `--offline`
makes no request. A store started afresh or holding a record that does not read back is filled
again online; offline it is a `CacheError` naming what to run. It runs its own event loop, so it
may be called from any thread without one. It must never save after a failure, never treat a
record as deleted unless the listing was complete, and never log or raise anything containing
the key.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from sitegen.config import Config
from sitegen.errors import CacheError, ConfigError, UnreachableError
from sitegen.fetch.ledger import CallLedger
from sitegen.fetch.merge import (
    SyncStats,
    kept_articles,
    known_articles,
    merged_workspace,
    plan_bodies,
    unlisted,
)
from sitegen.fetch.records import Article
from sitegen.fetch.status import FetchStatus
from sitegen.fetch.stored import (
    DamagedStore,
    load_workspace,
    save_workspace,
    sealed_with_another_key,
)
from sitegen.store import Store
from sitegen.workspace import Workspace

if TYPE_CHECKING:  # the network side (httpx) is imported only when a sync makes requests
    import httpx

    from sitegen.fetch.client import ApiClient
    from sitegen.fetch.v2 import KnownArticles, Structure
    from sitegen.progress import Progress

log = logging.getLogger("sitegen.fetch")

T = TypeVar("T")
ArticleReader = Callable[["ApiClient", str, str], Awaitable[dict[str, Any]]]


@dataclass
class SyncResult:
    """The workspace a build uses, what getting it cost, and whether the store changed."""

    workspace: Workspace
    ledger: CallLedger
    from_cache: bool
    stats: SyncStats = field(default_factory=SyncStats)
    #: True when the stored content changed (`Store.content_version` grew).
    changed: bool = False


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


def api_client(config: Config, key: str, transport: httpx.AsyncBaseTransport | None,
               ledger: CallLedger, max_calls: int | None) -> ApiClient:
    """The service's client as `[api]` configures it, counting into *ledger* (the sync's and
    the drafts preview's)."""
    from sitegen.fetch.client import ApiClient

    api = config.api
    return ApiClient(api.base_url, key, transport=transport, timeout=api.timeout,
                     concurrency=api.concurrency, retry_budget=api.retry_budget,
                     max_retries=api.max_retries, ledger=ledger, max_calls=max_calls)


async def _read_structure(client: ApiClient, config: Config, known: KnownArticles | None
                          ) -> tuple[Structure, ArticleReader]:
    from sitegen.fetch import v1, v2
    from sitegen.fetch.answers import NotFound

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


async def read_detail(client: ApiClient, reader: ArticleReader, workspace_id: str,
                      listed: Article) -> Article | None:
    from sitegen.fetch.answers import NotFound
    from sitegen.fetch.paging import parse_records

    try:
        raw = await reader(client, workspace_id, listed.id)
    except NotFound:
        log.warning("article %s disappeared during the sync (404); it is left out", listed.id)
        return None
    parsed = parse_records([{**raw, "id": listed.id}], Article, "article")
    if not parsed:
        log.warning("the body of article %s is malformed; using its listing record", listed.id)
        return listed
    detail = parsed[0]
    missing = {k: getattr(listed, k) for k in listed.model_fields_set - detail.model_fields_set}
    return detail.model_copy(update=missing) if missing else detail


async def _sync(config: Config, key: str, transport: httpx.AsyncBaseTransport | None,
                previous: Workspace | None, ledger: CallLedger, max_calls: int | None,
                progress: Progress | None) -> tuple[Structure, list[Article], bool, SyncStats]:
    """The requests of one sync: (listings, listed articles to keep, all kept?, stats)."""
    from sitegen.fetch.paging import gather_all

    stats = SyncStats()
    status = FetchStatus(progress, ledger) if progress is not None and progress.enabled else None
    try:
        async with api_client(config, key, transport, ledger, max_calls) as client:
            structure, reader = await _read_structure(client, config, known_articles(previous))
            ledger.version = structure.version
            stats.owner_pages_per_new = structure.owner_pages_per_new
            known, needed, stats.details_saved = plan_bodies(structure.articles, previous)
            details = (read_detail(client, reader, config.api.workspace, a) for a in needed)
            if status is not None:
                status.expect(len(needed))
                details = (status.counted(work) for work in details)
            fetched = iter(await gather_all(details))
            stats.details_made = len(needed)
    finally:
        if status is not None:
            status.close()
    articles = [a if a is not None else next(fetched) for a in known]
    kept = kept_articles([a for a in articles if a is not None], stats)
    return structure, kept, len(kept) == len(articles), stats


def run_async(work: Awaitable[T]) -> T:
    """`asyncio.run(work)`; the result is handed back outside the task, because Python
    3.11's runner formats the main task's repr (result included) on exit.
    """
    box: list[T] = []

    async def main() -> None:
        box.append(await work)

    import asyncio  # here, not at the top: an offline build never starts an event loop

    asyncio.run(main())
    return box[0]


def _stored(store: Store) -> Workspace | None:
    """The store's workspace for an online sync: None (fetch everything) when unusable."""
    if store.discarded:
        log.info("the content store %s was damaged or older: it was started afresh, and "
                 "everything is fetched", store.path)
    if store.set_aside is not None:
        log.info("the content store of another workspace or service was set aside as %s (it "
                 "is used again when site.toml names that one)", store.set_aside)
    try:
        return load_workspace(store)
    except DamagedStore:
        log.warning("the content store %s holds records that do not read back (edited or "
                    "damaged): fetching everything", store.path)
        return None


def sync(config: Config, store: Store, *, key: str | None,
         transport: httpx.AsyncBaseTransport | None = None, refresh: bool = False,
         offline: bool = False, max_calls: int | None = None,
         progress: Progress | None = None) -> SyncResult:
    """Bring *store* up to date and return the workspace (see the module docstring); an
    enabled *progress* shows the requests and article details on its status line."""
    if offline and refresh:
        raise ConfigError("--offline and --refresh contradict each other: drop one of them")
    ledger = CallLedger()
    if offline:
        return _offline(store, ledger)
    if key is None:
        key = config.api_key()
    previous = None if refresh else _stored(store)
    structure, kept, exact, stats = run_async(
        _sync(config, key, transport, previous, ledger, max_calls, progress))
    if refresh and not (structure.articles_complete and structure.digest_read):
        previous = _stored(store)  # kept for what the listings could not read
    workspace = merged_workspace(structure, kept, previous, stats, exact=exact)
    ledger.detail_saved = stats.details_saved
    changed = save_workspace(store, workspace, previous)
    return SyncResult(workspace, ledger, False, stats, changed)


def _offline(store: Store, ledger: CallLedger) -> SyncResult:
    """The stored workspace, without any request (`--offline`)."""
    if store.discarded:
        raise CacheError(f"the content store {store.path} was damaged or older and was "
                         "started afresh: run once online (e.g. `sitegen build --refresh`) to "
                         "fill it")
    if store.key_changed:  # (every record would be left out: no empty site)
        raise sealed_with_another_key(store.path)
    workspace = load_workspace(store)
    if workspace is None:
        raise CacheError(f"the content store {store.path} is empty: run once without "
                         "--offline (e.g. `sitegen fetch`) to fill it")
    ledger.version = workspace.api_version
    stats = SyncStats()
    stats.count(workspace)
    return SyncResult(workspace, ledger, True, stats, False)


def plan_sync(config: Config, store: Store | None, *, key: str | None,
              transport: httpx.AsyncBaseTransport | None = None) -> SyncPlan:
    """What a sync would spend now: the list calls only, never a detail call or a write.

    *store* is the content store to plan from (None: none yet, as a cold sync).
    """
    api_key = config.api_key() if key is None else key
    previous = _stored(store) if store is not None else None
    ledger = CallLedger()

    async def listings() -> Structure:
        async with api_client(config, api_key, transport, ledger, None) as client:
            return (await _read_structure(client, config, known_articles(previous)))[0]

    structure = run_async(listings())
    _, needed, saved = plan_bodies(structure.articles, previous)
    return SyncPlan(structure.version, ledger.total, len(needed),
                    saved + len(unlisted(structure, previous)),
                    sum(1 for a in structure.articles if a.has_body), previous is not None)


#: The key `--demo` syncs with (the in-process emulator accepts it; no real key is read).
DEMO_KEY = "demo"
