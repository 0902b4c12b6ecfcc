"""The core of the content store's class: its connection, seals, meta rows and transactions.

Role: one part of `sitegen.store`'s split by concern (the schema and the records there, the
last build's rows in `sitegen.storebuild`): `StoreCore` holds the open connection and the
`Seals` of its MAC key, reads and writes `meta` rows (sealed but for `UNSEALED_META`), runs
each write in one transaction, and names a busy or damaged store in one sentence. Only the
`Store` classes query the database that `sitegen.storefile` opened. This module must never
make a request, render, or hold the API key (only the MAC key derived from a secret).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Self

from sitegen.cachekey import key_id
from sitegen.errors import CacheError, StoreBusyError
from sitegen.storeseal import UNSEALED_META, Seals


class StoreCore:
    """An open content store's connection, seals and meta rows (see `sitegen.store.Store`)."""

    def __init__(self, path: Path, connection: sqlite3.Connection, recreated: bool,
                 discarded: bool = False, set_aside: Path | None = None,
                 mac_key: bytes | None = None) -> None:
        self.path = path
        self.db = connection
        self._mac = mac_key  # (None: no secret, so nothing sealed is ever trusted)
        self.seals = Seals(mac_key)
        #: True when the file was missing, damaged, foreign or older and was started afresh.
        self.recreated = recreated
        #: True when a file was there but damaged or older (not merely missing, not set aside).
        self.discarded = discarded
        #: Where another source's store was set aside when this one was opened (or None).
        self.set_aside = set_aside
        found = self._raw_meta("key_id")
        #: True when the rows were sealed with another key (or none can be made now).
        self.key_changed = found is not None and found != key_id(mac_key)

    def _raw_meta(self, name: str) -> str | None:
        try:
            row = self.db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        except sqlite3.DatabaseError:
            return None  # (`storefile` tells a damaged store from a busy one)
        return None if row is None else str(row[0])

    def get(self, name: str) -> str | None:
        """A meta value (schema, source, api version, content version, sync state); None
        when it is missing or does not verify."""
        row = self._query("SELECT value, tag FROM meta WHERE name = ?", (name,)).fetchone()
        if row is None or name in UNSEALED_META:
            return None if row is None else str(row[0])
        value = self.seals.check("meta", name, row[0], row[1])
        return None if value is None else value.decode("utf-8", "surrogateescape")

    def _meta_rows(self, values: Mapping[str, str]) -> list[tuple[str, str, bytes | None]]:
        """*values* as sealed `meta` rows, with this key's id."""
        rows = [(n, v, self.seals.tag("meta", n, v.encode("utf-8", "surrogateescape")))
                for n, v in values.items()]
        return [*rows, ("key_id", key_id(self._mac) or "", None)]

    def content_version(self) -> int:
        """A number that grows whenever the stored content changes."""
        found = self.get("content_version") or "0"
        return int(found) if found.isdecimal() else 0

    def has_content(self) -> bool:
        """True once a sync has saved a workspace here."""
        return self.get("api_version") is not None

    def set_state(self, values: Mapping[str, str]) -> None:
        """Save sync state (watermarks) that does not change the content."""
        with self.transaction():
            self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?, ?)",
                                self._meta_rows(values))

    # --- plumbing --------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One atomic write: everything in the block is saved, or nothing."""
        try:
            with self.db:
                yield
        except sqlite3.DatabaseError as error:
            raise failure(self.path, error) from None

    def _query(self, sql: str, args: tuple[object, ...] = ()) -> sqlite3.Cursor:
        try:
            return self.db.execute(sql, args)
        except sqlite3.DatabaseError as error:
            raise failure(self.path, error) from None

    def close(self) -> None:
        """Close the database (nothing is pending: every write is its own transaction)."""
        self.db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()



#: How long a statement waits for another process's lock on the store (seconds) before
#: `StoreBusyError`; `storefile` sets it on each connection it opens.
BUSY_WAIT = 30.0


def is_busy(error: sqlite3.Error) -> bool:
    """True when *error* says another connection holds the database's lock (SQLITE_BUSY or
    SQLITE_LOCKED): the file is in use, not damaged."""
    code = getattr(error, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def busy(path: Path, waited: float) -> StoreBusyError:
    """The one sentence for a store another process held longer than *waited* seconds."""
    return StoreBusyError(f"the content store {path} is held by another sitegen process (a "
                          f"build or `sitegen serve`) and was not released within "
                          f"{waited:.0f} s: let that process finish or stop it, then run "
                          "this command again (the store is kept as it is)")


def failure(path: Path, error: sqlite3.DatabaseError) -> CacheError:
    """The error for a failed statement: busy (another process holds the lock) or damaged."""
    if is_busy(error):
        return busy(path, BUSY_WAIT)
    return CacheError(f"the content store {path} is damaged ({error}): delete it, or build "
                      "with --refresh to fetch everything again")


