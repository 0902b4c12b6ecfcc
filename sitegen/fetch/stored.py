"""The synced workspace in the content store: how a `Workspace` maps onto its tables.

Role: `save_workspace` makes the store hold exactly one workspace, in one transaction: each
article as its own JSON row, the other lists as `rest` rows (a list that is None, "this API
version has none", has no row, unlike an empty one), the API version and `articles_exact` as
meta. `load_workspace` reads it back, leaving out each record that does not verify or read
back (a cache miss: fetched again); what is then no workspace is `DamagedStore`, a
`CacheError` naming `--refresh`. `open_config_store` opens the store of a configuration (the one
place that names a store's source). It must never make a request, decide what to fetch, or open
the database itself (only `sitegen.store` does).
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter, ValidationError

from sitegen.config import Config
from sitegen.errors import CacheError
from sitegen.fetch.records import (
    Agent,
    Article,
    AuthorIdentity,
    Cluster,
    DigestSettings,
    SocialPost,
    WorkspaceInfo,
)
from sitegen.store import STORE_FILE, Store
from sitegen.storefile import open_store, peek_store
from sitegen.workspace import Workspace

#: The workspace's fields besides its articles, each a `rest` row under its name.
_REST: dict[str, TypeAdapter[Any]] = {
    "info": TypeAdapter(WorkspaceInfo), "agents": TypeAdapter(list[Agent]),
    "clusters": TypeAdapter(list[Cluster]), "authors": TypeAdapter(list[AuthorIdentity]),
    "social_posts": TypeAdapter(list[SocialPost]), "digest": TypeAdapter(DigestSettings)}
REST_KINDS = tuple(_REST)


class DamagedStore(CacheError):
    """A row of the store does not read back as the records it was saved from."""


def config_source(config: Config) -> str:
    """Whose content a store holds: the service's address and the workspace id."""
    return f"{config.api.base_url}|{config.api.workspace}"


def open_config_store(config: Config) -> Store:
    """The content store of *config* (`.sitegen/store.sqlite`), created when missing.

    A damaged or older store is started afresh; a foreign one (another service or workspace)
    is set aside until its source is built again (`sitegen.store`): `Store.recreated`,
    `Store.discarded` and `Store.set_aside` tell.
    """
    return open_store(config.cache_path, config_source(config), config.api.key_env)


def peek_config_store(config: Config) -> Store | None:
    """The content store of *config* read-only, or None: creates and changes nothing."""
    return peek_store(config.cache_path, config_source(config), config.api.key_env)


def save_workspace(store: Store, workspace: Workspace, stored: Workspace | None = None) -> bool:
    """Make *store* hold exactly *workspace* (one transaction); True if its content changed.

    An article that is the very record of *stored* (the workspace `load_workspace` gave from
    this store) is its stored row already: it is not written out again, so a sync that
    changed one article writes one.
    """
    meta = {"api_version": workspace.api_version,
            "articles_exact": "true" if workspace.articles_exact else "false"}
    known = {id(article) for article in stored.articles} if stored is not None else set()
    articles = {article.id: None if id(article) in known else article.model_dump_json()
                for article in workspace.articles}
    rest = {kind: _REST[kind].dump_json(value).decode()
            for kind in REST_KINDS if (value := getattr(workspace, kind)) is not None}
    try:
        return store.save_content(meta, articles, rest)
    except KeyError:  # (a row went away since it was read: another sync; write them all)
        return store.save_content(meta, {article.id: article.model_dump_json()
                                         for article in workspace.articles}, rest)


def load_workspace(store: Store) -> Workspace | None:
    """The workspace *store* holds, or None when no sync saved one there.

    A record that does not verify (`Store.article_records`) or does not read back is left
    out, counted among the rows that did not verify (the sync fetches it again; offline the
    build goes without it). Raises `DamagedStore` when what is left is no workspace.
    """
    version = store.get("api_version")
    if version is None:
        return None
    rest = store.rest_records()
    articles: list[Article] = []
    # one record at a time: parsing them all as one JSON list peaked 40 MB higher at 4,000
    for key, record in store.article_records():
        try:
            article = Article.model_validate_json(record)
        except ValidationError:
            article = None
        if article is None or article.id != key:
            store.seals.forget(1)
            continue
        articles.append(article)
    lists = {}
    for kind in REST_KINDS:
        try:
            if kind in rest:
                lists[kind] = _REST[kind].validate_json(rest[kind])
        except ValidationError:
            store.seals.forget(1)
    try:
        return Workspace.model_validate({
            "api_version": version, "articles_exact": store.get("articles_exact") == "true",
            "articles": articles, **lists})
    except ValidationError:
        raise _damaged(store) from None


def _damaged(store: Store) -> DamagedStore:
    return DamagedStore(f"the content store {store.path} holds records that do not read back "
                        "(edited or damaged): build with --refresh, or delete it, to fetch "
                        "everything again")


def sealed_with_another_key(path: object) -> CacheError:
    """The `--offline` error of a store whose rows were sealed with another key: every
    record would be left out, and a site without its articles is never published."""
    return CacheError(f"the content store {path} was sealed with another key "
                      "(SITEGEN_CACHE_KEY, else the API key, changed): set the key it was "
                      "sealed with, or build once online to fetch it again")


def require_stored(config: Config) -> None:
    """Raise the `--offline` error when the store holds no workspace, before anything is
    created (no `.sitegen/`, no store file, no lock): read-only, `peek_config_store`. It
    reads one row, not the workspace (the sync loads that once: records that do not read
    back are its `DamagedStore`)."""
    store = peek_config_store(config)
    path = config.cache_path / STORE_FILE
    damaged = store is None and path.is_file()  # (not a database, or another schema)
    try:
        if store is not None and store.key_changed:
            raise sealed_with_another_key(path)
        filled = store is not None and store.has_content()
    finally:
        if store is not None:
            store.close()
    if damaged:
        raise CacheError(f"the content store {path} is damaged or of another version: run "
                         "once online with --refresh (e.g. `sitegen build --refresh`) to "
                         "fetch everything again")
    if not filled:
        raise CacheError(f"the content store {path} is empty: run once without --offline "
                         "(e.g. `sitegen fetch`) to fill it")
