"""The store's file: opened when usable, another source's set aside, a bad one started afresh.

Role: the only module that opens `.sitegen/store.sqlite` for `Store` (`sitegen.store` owns
the schema). A store that is damaged or of another schema is emptied and filled again from
the service (`Store.recreated` tells; offline, the sync then names `--refresh`). A store of
another workspace or service (a typo in `[api]`, a turn against `sitegen emulate`) is not
emptied: it is set aside beside the one in use as `store-<hash of its source>.sqlite` and
renamed back when its source is built again, so its content, redirect history and deploy
state cost no request and are not lost (an empty one is not kept). A store another process
holds (a build, `sitegen serve`) is busy, not damaged: the open waits for it (one line says
so) up to `store.BUSY_WAIT` seconds, then fails with `StoreBusyError`, the file untouched.
Only a file that is not a database, fails its check or has another schema is replaced.
`glance_store` gives the no-change stage (`sitegen.unchanged`) its quick look.
Each opened `Store` is given the MAC key of the build's secret (`sitegen.cachekey`); on a CI
runner without `SITEGEN_CACHE_KEY` the first open says once what that costs. It must never
read or write the store's content.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
from pathlib import Path

import sitegen.store
from sitegen.cachekey import ci_without_cache_key, mac_key
from sitegen.errors import CacheError, StoreBusyError
from sitegen.store import (
    DEPLOYED_TABLE,
    IMAGES_TABLE,
    SCHEMA,
    STORE_FILE,
    TABLES,
    URLS_TABLE,
    Store,
    busy,
    failure,
    is_busy,
)

log = logging.getLogger("sitegen.store")
_CI_KEY_SAID = False
#: How long the first look at a store waits for a lock before the waiting line (seconds).
FIRST_LOOK = 1.0


def open_store(folder: Path, source: str, key_env: str | None = None) -> Store:
    """The store in *folder* for the content of *source* (api url and workspace id).

    A missing, damaged or older store is started afresh; a foreign one (another workspace or
    service, with content) is set aside, and this source's own comes back if it was. Its
    sealed values are checked with the key of *key_env*'s secret (`cachekey.mac_key`).
    """
    mac = mac_key(key_env)
    _say_ci_key()
    path = folder / STORE_FILE
    folder.mkdir(parents=True, exist_ok=True)
    existed = path.exists()
    connection = _connect(path)
    try:
        if connection is not None and _usable(connection, source, path):
            return _opened(path, connection, None, mac)
        other = _content_source(connection, path) if connection is not None else None
    except StoreBusyError:  # (kept as it is: another process holds it)
        if connection is not None:
            connection.close()
        raise
    if connection is not None:
        connection.close()
    set_aside = None
    if other and other != source:  # another source's content: kept beside
        set_aside = _aside(folder, other)
        os.replace(path, set_aside)
    waiting = _aside(folder, source)
    if waiting.is_file():  # this source's store, set aside earlier: back in use
        os.replace(waiting, path)
        connection = _connect(path)
        if connection is not None and _usable(connection, source, path):
            return _opened(path, connection, set_aside, mac)
        if connection is not None:
            connection.close()
    for leftover in (path, path.with_name(path.name + "-journal")):
        leftover.unlink(missing_ok=True)
    connection = _connect(path)
    if connection is None:
        raise CacheError(f"the content store {path} cannot be created: check that "
                         f"{folder} is a writable folder")
    with connection:
        connection.executescript(TABLES)
        connection.execute(URLS_TABLE)
        connection.execute(DEPLOYED_TABLE)
        connection.execute(IMAGES_TABLE)
        connection.executemany("INSERT INTO meta VALUES (?, ?, NULL)",
                               [("schema", SCHEMA), ("source", source)])
    lost = existed and set_aside is None and other != ""  # (an empty store loses nothing)
    return Store(path, connection, recreated=True, discarded=lost, set_aside=set_aside,
                 mac_key=mac)


def _say_ci_key() -> None:
    """Once per process on a CI runner without `SITEGEN_CACHE_KEY`: what rotating the API key
    will cost, and the fix."""
    global _CI_KEY_SAID
    if not _CI_KEY_SAID and ci_without_cache_key():
        _CI_KEY_SAID = True
        log.info("SITEGEN_CACHE_KEY is not set on this CI: the content cache is sealed with "
                 "the API key, so rotating that key fetches everything again once (add "
                 "SITEGEN_CACHE_KEY as a CI secret, any long random string)")


def _opened(path: Path, connection: sqlite3.Connection, set_aside: Path | None,
            mac: bytes | None) -> Store:
    """A usable store, with the tables added within schema 2 (an older one gains them)."""
    try:
        with connection:
            connection.execute(URLS_TABLE)
            connection.execute(DEPLOYED_TABLE)
            connection.execute(IMAGES_TABLE)
    except sqlite3.DatabaseError as error:
        connection.close()
        raise failure(path, error) from None
    return Store(path, connection, recreated=False, set_aside=set_aside, mac_key=mac)


def _aside(folder: Path, source: str) -> Path:
    """Where the store of *source* waits while another source's store is in use."""
    return folder / f"store-{hashlib.sha256(source.encode()).hexdigest()[:16]}.sqlite"


def _content_source(connection: sqlite3.Connection, path: Path) -> str | None:
    """The source whose content a store of this schema holds: "" when it holds none yet,
    None when it is damaged or older."""
    try:
        meta = dict(connection.execute("SELECT name, value FROM meta WHERE name IN "
                                       "('schema', 'source', 'api_version')"))
    except sqlite3.DatabaseError as error:
        _raise_if_busy(path, error)
        return None
    if meta.get("schema") != SCHEMA or "source" not in meta:
        return None
    return str(meta["source"]) if "api_version" in meta else ""


def peek_store(folder: Path, source: str, key_env: str | None = None) -> Store | None:
    """The store in *folder* for *source*, read-only; None when there is no usable one.

    Nothing is created, changed or rolled back (`sitegen fetch --dry-run`).
    """
    for path in (folder / STORE_FILE, _aside(folder, source)):
        if not path.is_file():
            continue
        connection = _connect(path, f"{path.resolve().as_uri()}?mode=ro")
        if connection is None:
            continue
        if _usable(connection, source, path):
            return Store(path, connection, recreated=False, mac_key=mac_key(key_env))
        connection.close()
    return None


def readable_text(data: bytes) -> str:
    """A TEXT value as a string, whatever its bytes: one that is not UTF-8 (written into the
    cache by someone else) must not stop the read of every row after it; its invalid bytes
    become U+FFFD, so its seal no longer verifies and the row is a cache miss."""
    return data.decode("utf-8", "replace")


def _connect(path: Path, uri: str | None = None) -> sqlite3.Connection | None:
    """A connection to *path* (or the read-only *uri*) once no other process holds it; None
    when the file cannot be opened at all. Raises `StoreBusyError` after `BUSY_WAIT`."""
    try:
        connection = (sqlite3.connect(uri, timeout=FIRST_LOOK, uri=True) if uri else
                      sqlite3.connect(path, timeout=FIRST_LOOK))
    except sqlite3.Error:
        return None
    connection.text_factory = readable_text
    wait = sitegen.store.BUSY_WAIT
    try:
        if _held(connection):
            log.info("waiting up to %.0f s for the content store %s: another sitegen process "
                     "is using it", wait, path)
            connection.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")
            if _held(connection):
                connection.close()
                raise busy(path, wait)
        connection.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")
        if uri is None:
            connection.execute("PRAGMA synchronous = NORMAL")
    except sqlite3.DatabaseError as error:
        connection.close()
        _raise_if_busy(path, error)
        return None
    return connection


def _held(connection: sqlite3.Connection) -> bool:
    """True when another process's lock kept this connection from reading the file (a file
    that is not a database is not "held": `_usable` finds it out)."""
    try:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as error:
        return is_busy(error)
    return False


def _usable(connection: sqlite3.Connection, source: str, path: Path) -> bool:
    """True when *connection* holds this schema's store of *source*, readable throughout."""
    try:
        meta = dict(connection.execute("SELECT name, value FROM meta WHERE name IN "
                                       "('schema', 'source')"))
        if meta != {"schema": SCHEMA, "source": source}:
            return False
        return bool(connection.execute("PRAGMA quick_check").fetchone() == ("ok",))
    except sqlite3.DatabaseError as error:
        _raise_if_busy(path, error)
        return False


def _raise_if_busy(path: Path, error: sqlite3.DatabaseError) -> None:
    """Another process's lock outlasted the wait: the store is busy, never "damaged"."""
    if is_busy(error):
        raise busy(path, sitegen.store.BUSY_WAIT) from None


def glance_store(path: Path, key_env: str | None, *, write: bool = False) -> Store | None:
    """The store file *path* as it is, at a glance: no check of its pages, no waiting, nothing
    created (*write*: it may be written); None when it is missing, held, unreadable or of
    another schema. The no-change stage's (`sitegen.unchanged`): a full open's `quick_check`
    would cost more than that whole stage; anything it cannot read there means "build"."""
    if not path.is_file():
        return None
    uri = f"{path.resolve().as_uri()}?mode={'rw' if write else 'ro'}"
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=0)
    except sqlite3.Error:
        return None
    connection.text_factory = readable_text
    try:
        found = connection.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
    except sqlite3.Error:
        found = None
    if found != (SCHEMA,):
        connection.close()
        return None
    return Store(path, connection, recreated=False, mac_key=mac_key(key_env))
