"""The content store: everything sitegen keeps between runs, in one SQLite database.

Role: the store's schema and its one class, `Store` (`sitegen.storefile` opens the file:
`open_store`, `peek_store`). The schema:

    meta      name → value         schema version, whose content this is (api url and
                                   workspace), api version, content version, sync state
    articles  id → record          each article as the service sent it (tolerantly parsed)
    rest      kind → record        workspace info, agents, clusters, authors, social posts,
                                   digest (JSON; absent: the API version has no such list)
    derived   (kind, key) → value  data derived from content, keyed by the hash of what it
                                   was derived from and of the code that derived it
                                   (rendered bodies): never stale, safe to drop
    pages     path → reads         what each page of the last build read (`render.reads`)
    reads     id → (key, fp)       the distinct reads those pages share
    builds    name → value         the last build's facts (`sitegen.unchanged`)
    urls      (article, url)       every URL each article has had in a committed build
                                   (redirects for moved articles)
    deployed  (target, path) → (sha256, etag)  what each `sitegen deploy` target's bucket
                                   holds, as last confirmed by an upload or a listing (the
                                   bucket marker's generation it is of: a `meta` row)
    images    url → (hash, etag,   each image URL fetched, the sha256 of its bytes and its
              last_modified)       validators (the bytes: `derived`, kind `image`)

Each stage that writes does so in one transaction, so a killed sync or build leaves
the store as it was before or after, never between. Deleting the files is always safe.

The store is untrusted input (a CI cache can be written by others): every `derived` value
(and the image sources) and the record of the output's files are sealed with an HMAC
(`sitegen.cachekey`) when saved and verified when read; a value that does not verify is
absent (derived again and stored again). Records go through the sanitiser and are not sealed.
This module must never make a request, render, or hold the API key (only the MAC key
derived from a secret, in memory).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from sitegen.cachekey import seal, unseal
from sitegen.errors import CacheError, StoreBusyError

SCHEMA = "sitegen-store-2"
STORE_FILE = "store.sqlite"
TABLES = """
CREATE TABLE meta(name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE articles(id TEXT PRIMARY KEY, record TEXT NOT NULL);
CREATE TABLE rest(kind TEXT PRIMARY KEY, record TEXT NOT NULL);
CREATE TABLE derived(kind TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL,
                     PRIMARY KEY(kind, key));
CREATE TABLE pages(path TEXT PRIMARY KEY, sha BLOB NOT NULL, context BLOB NOT NULL,
                   reads BLOB NOT NULL);
CREATE TABLE reads(id INTEGER PRIMARY KEY, key TEXT NOT NULL, fp BLOB NOT NULL);
CREATE TABLE builds(name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
#: Added within schema 2: an older store gains it on open (nothing else changes).
URLS_TABLE = """CREATE TABLE IF NOT EXISTS urls(article TEXT NOT NULL, url TEXT NOT NULL,
                                         PRIMARY KEY(article, url))"""
#: Added within schema 2 for `sitegen deploy`, the same way as `urls`.
DEPLOYED_TABLE = """CREATE TABLE IF NOT EXISTS deployed(target TEXT NOT NULL, path TEXT NOT NULL,
                                             sha TEXT NOT NULL, etag TEXT NOT NULL,
                                             PRIMARY KEY(target, path))"""
#: Added within schema 2 as `urls` was: image URL → content hash and validators.
IMAGES_TABLE = """CREATE TABLE IF NOT EXISTS images(url TEXT PRIMARY KEY, hash TEXT NOT NULL,
                                           etag TEXT NOT NULL, modified TEXT NOT NULL)"""
_CHUNK = 500
#: What the writer left in an output: path → (sha256, inode, size, ctime_ns), and the
#: manifest's (inode, size, ctime_ns) or None.
OutputRecord = tuple[dict[str, tuple[str, int, int, int]], tuple[int, int, int] | None]


def output_name(store_file: Path, output: str) -> str:
    """The meta name of *output*'s record: the output's path relative to the store's folder,
    so a site folder moved or restored elsewhere (a CI cache) keeps its record."""
    return "output:" + os.path.relpath(output, os.path.abspath(store_file.parent))


def read_output_record(name: str, value: str | None, mac: bytes | None) -> OutputRecord:
    """The record that the meta value *name* = *value* holds; empty when it is missing or
    its seal does not verify under *mac*."""
    try:
        text = unseal(mac, "output", name, bytes.fromhex(value or ""))
        raw = json.loads(text) if text is not None else {}
        files = {str(path): (str(sha), int(ino), int(size), int(ctime))
                 for path, (sha, ino, size, ctime) in raw.get("files", {}).items()}
        found = raw.get("manifest")
        manifest = (int(found[0]), int(found[1]), int(found[2])) if found else None
    except (ValueError, TypeError, AttributeError):
        return {}, None
    return files, manifest


class Store:
    """An open content store (use `open_store`)."""

    def __init__(self, path: Path, connection: sqlite3.Connection, recreated: bool,
                 discarded: bool = False, set_aside: Path | None = None,
                 mac_key: bytes | None = None) -> None:
        self.path = path
        self.db = connection
        self._mac = mac_key  # (None: no secret, so nothing sealed is ever trusted)
        #: True when the file was missing, damaged, foreign or older and was started afresh.
        self.recreated = recreated
        #: True when a file was there but damaged or older (not merely missing, not set aside).
        self.discarded = discarded
        #: Where another source's store was set aside when this one was opened (or None).
        self.set_aside = set_aside

    # --- meta and sync state ---------------------------------------------------------

    def get(self, name: str) -> str | None:
        """A meta value (schema, source, api version, content version, sync state)."""
        row = self._query("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return None if row is None else str(row[0])

    def content_version(self) -> int:
        """A number that grows whenever the stored content changes."""
        return int(self.get("content_version") or 0)

    def has_content(self) -> bool:
        """True once a sync has saved a workspace here."""
        return self.get("api_version") is not None

    # --- records ---------------------------------------------------------------------

    def article_records(self) -> Iterator[tuple[str, str]]:
        """(id, JSON record) of every stored article, by id."""
        yield from self._query("SELECT id, record FROM articles ORDER BY id")

    def _article_rows(self, ids: list[str]) -> dict[str, str]:
        """The stored records of the articles *ids* (those stored)."""
        found: dict[str, str] = {}
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start:start + _CHUNK]
            found.update(self._query(f"SELECT id, record FROM articles WHERE id IN "
                                     f"({','.join('?' * len(chunk))})", tuple(chunk)))
        return found

    def rest_records(self) -> dict[str, str]:
        """JSON records of the workspace's other lists by kind (see the module docstring)."""
        return {str(k): str(v) for k, v in self._query("SELECT kind, record FROM rest")}

    def save_content(self, meta: Mapping[str, str], articles: Mapping[str, str | None],
                     rest: Mapping[str, str]) -> bool:
        """Make the stored content exactly *articles* and *rest*, with *meta*; True if it changed.

        An article given as None keeps its stored row (the caller read it from there); the
        others are compared with what is stored, so an unchanged sync writes nothing but its
        meta, and the content version grows only when a record changed.
        """
        ids = {str(i) for (i,) in self._query("SELECT id FROM articles")}
        given = {i: r for i, r in articles.items() if r is not None}
        if any(r is None and i not in ids for i, r in articles.items()):
            raise KeyError("an article given as stored is not in the store")
        stored = self._article_rows([i for i in given if i in ids])
        changed = [(i, r) for i, r in given.items() if stored.get(i) != r]
        gone = [(i,) for i in ids - articles.keys()]
        old_rest = self.rest_records()
        rest_changed = dict(rest) != old_rest
        updates = dict(meta)
        differs = bool(changed or gone or rest_changed) or any(
            self.get(name) != value for name, value in meta.items())
        if differs:
            updates["content_version"] = str(self.content_version() + 1)
        with self.transaction():
            self.db.executemany("INSERT OR REPLACE INTO articles VALUES (?, ?)", changed)
            self.db.executemany("DELETE FROM articles WHERE id = ?", gone)
            if rest_changed:
                self.db.execute("DELETE FROM rest")
                self.db.executemany("INSERT INTO rest VALUES (?, ?)", rest.items())
            self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", updates.items())
        return differs

    def set_state(self, values: Mapping[str, str]) -> None:
        """Save sync state (watermarks) that does not change the content."""
        with self.transaction():
            self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", values.items())

    # --- derived data ----------------------------------------------------------------

    def derived(self, kind: str, keys: Iterable[str] | None = None) -> dict[str, bytes]:
        """The stored values of *kind* under *keys*, or every one of *kind* (missing ones,
        and any whose seal does not verify, left out: derived again by the caller)."""
        wanted = list(keys) if keys is not None else None
        chunks = [None] if wanted is None else [
            wanted[start:start + _CHUNK] for start in range(0, len(wanted), _CHUNK)]
        found: dict[str, bytes] = {}
        for chunk in chunks:
            where = "" if chunk is None else f" AND key IN ({','.join('?' * len(chunk))})"
            for key, sealed in self._query(f"SELECT key, value FROM derived WHERE kind = ?{where}",
                                           (kind, *(chunk or ()))):
                value = unseal(self._mac, kind, key, bytes(sealed)) \
                    if isinstance(sealed, bytes) else None
                if value is not None:
                    found[str(key)] = value
        return found

    def save_derived(self, kind: str, values: Mapping[str, bytes], keep: Iterable[str]) -> None:
        """Add *values* of *kind*, then keep of *kind* only the keys in *keep*."""
        wanted = set(keep)
        stored = {str(k) for (k,) in self._query(
            "SELECT key FROM derived WHERE kind = ?", (kind,))}
        with self.transaction():
            self.db.executemany("INSERT OR REPLACE INTO derived VALUES (?, ?, ?)",
                                [(kind, k, seal(self._mac, kind, k, v))
                                 for k, v in values.items() if k in wanted])
            self.db.executemany("DELETE FROM derived WHERE kind = ? AND key = ?",
                                [(kind, k) for k in stored - wanted])

    # --- the last build --------------------------------------------------------------

    def page_rows(self) -> dict[str, tuple[bytes, bytes, bytes]]:
        """path → (sha256 of its bytes, context fingerprint, read ids) of the last build."""
        return {str(p): (bytes(t), bytes(c), bytes(r)) for p, t, c, r in self._query(
            "SELECT path, sha, context, reads FROM pages")}

    def read_rows(self) -> dict[int, tuple[str, bytes]]:
        """read id → (read key, fingerprint) of the last build."""
        return {int(i): (str(k), bytes(f)) for i, k, f in self._query(
            "SELECT id, key, fp FROM reads")}

    def save_build(self, pages: Mapping[str, tuple[bytes, bytes, bytes]], gone: Iterable[str],
                   reads: Mapping[int, tuple[str, bytes]], stale: Iterable[int],
                   facts: Mapping[str, object], *, replace: bool = False) -> None:
        """Update the last build's records (one transaction; *replace*: start them afresh).

        *pages* and *reads* are added or replaced, the pages *gone* and the reads *stale*
        removed, and the facts replaced.
        """
        with self.transaction():
            if replace:
                self.db.execute("DELETE FROM pages")
                self.db.execute("DELETE FROM reads")
            self.db.executemany("INSERT OR REPLACE INTO pages VALUES (?, ?, ?, ?)",
                                ((p, *row) for p, row in pages.items()))
            self.db.executemany("DELETE FROM pages WHERE path = ?", ((p,) for p in gone))
            self.db.executemany("INSERT OR REPLACE INTO reads VALUES (?, ?, ?)",
                                ((i, k, f) for i, (k, f) in reads.items()))
            self.db.executemany("DELETE FROM reads WHERE id = ?", ((i,) for i in stale))
            self.db.execute("DELETE FROM builds")
            self.db.executemany("INSERT INTO builds VALUES (?, ?)",
                                ((n, json.dumps(v)) for n, v in facts.items()))

    def build_facts(self) -> dict[str, object]:
        """What `save_build` recorded of the last build ({} when none)."""
        return {str(n): json.loads(v) for n, v in self._query("SELECT name, value FROM builds")}

    def output_record(self, output: str) -> OutputRecord:
        """What the last build left in *output* (see `output_name`): each file's sha256,
        inode, size and ctime, and the manifest's stat; empty when unknown or when its seal
        does not verify (then every file of the output is hashed, or written again)."""
        name = output_name(self.path, output)
        return read_output_record(name, self.get(name), self._mac)

    def save_output_record(self, output: str, record: OutputRecord) -> None:
        """Remember (sealed) what the writer left in *output*."""
        files, manifest = record
        text = json.dumps({"files": files, "manifest": manifest}, separators=(",", ":"))
        name = output_name(self.path, output)
        self.set_state({name: seal(self._mac, "output", name, text.encode()).hex()})

    def forget_build(self) -> None:
        """Drop the last build's records (`--force`: every page is rendered again)."""
        with self.transaction():
            for table in ("pages", "reads", "builds"):
                self.db.execute(f"DELETE FROM {table}")

    # --- the URLs articles have had -------------------------------------------------

    def url_history(self) -> dict[str, list[str]]:
        """article id → every URL it had in a committed build (sorted; {} when none)."""
        history: dict[str, list[str]] = {}
        try:
            rows = self.db.execute("SELECT article, url FROM urls ORDER BY article, url")
            for article, url in rows:
                history.setdefault(str(article), []).append(str(url))
        except sqlite3.OperationalError:  # a read-only store from before the table
            return {}
        except sqlite3.DatabaseError as error:
            raise failure(self.path, error) from None
        return history

    def save_urls(self, current: Mapping[str, str]) -> None:
        """Remember each article's *current* URL (article id → URL) beside its old ones."""
        with self.transaction():
            self.db.executemany("INSERT OR IGNORE INTO urls VALUES (?, ?)", current.items())

    # --- what deploy targets hold ---------------------------------------------------

    def deployed(self, target: str) -> dict[str, tuple[str, str]]:
        """path → (sha256, etag) of what *target*'s bucket holds, as last confirmed."""
        return {str(p): (str(s), str(e)) for p, s, e in self._query(
            "SELECT path, sha, etag FROM deployed WHERE target = ?", (target,))}

    def save_deployed(self, target: str, confirmed: Mapping[str, tuple[str, str]],
                      gone: Iterable[str] = (), *, replace: bool = False) -> None:
        """Record uploads *confirmed* (path → (sha256, etag)) and deletions *gone* of *target*.

        *replace* starts the target's record afresh (a listing of its bucket).
        """
        with self.transaction():
            if replace:
                self.db.execute("DELETE FROM deployed WHERE target = ?", (target,))
            self.db.executemany("INSERT OR REPLACE INTO deployed VALUES (?, ?, ?, ?)",
                                ((target, p, s, e) for p, (s, e) in confirmed.items()))
            self.db.executemany("DELETE FROM deployed WHERE target = ? AND path = ?",
                                ((target, p) for p in gone))
    # --- images fetched ---------------------------------------------------------------

    def image_rows(self) -> dict[str, tuple[str, str, str]]:
        """image URL → (sha256 of its bytes, ETag, Last-Modified) of every image fetched."""
        try:
            rows = self.db.execute("SELECT url, hash, etag, modified FROM images")
            return {str(u): (str(h), str(e), str(m)) for u, h, e, m in rows}
        except sqlite3.OperationalError:  # a read-only store from before the table
            return {}
        except sqlite3.DatabaseError as error:
            raise failure(self.path, error) from None

    def save_images(self, rows: Mapping[str, tuple[str, str, str]], sources: Mapping[str, bytes],
                    keep: Iterable[str]) -> None:
        """Add image URL *rows* and source bytes (hash → bytes, `derived` kind `image`) in one
        transaction; then keep only the URLs in *keep* and the sources they name."""
        wanted = set(keep)
        with self.transaction():
            self.db.executemany("INSERT OR REPLACE INTO images VALUES (?, ?, ?, ?)",
                                [(url, *row) for url, row in rows.items()])
            self.db.executemany("INSERT OR REPLACE INTO derived VALUES ('image', ?, ?)",
                                [(h, seal(self._mac, "image", h, v))
                                 for h, v in sources.items()])
            stored = {str(u): str(h) for u, h in self.db.execute(
                "SELECT url, hash FROM images")}
            self.db.executemany("DELETE FROM images WHERE url = ?",
                                [(u,) for u in stored.keys() - wanted])
            hashes = {h for u, h in stored.items() if u in wanted}
            known = {str(k) for (k,) in self.db.execute(
                "SELECT key FROM derived WHERE kind = 'image'")}
            self.db.executemany("DELETE FROM derived WHERE kind = 'image' AND key = ?",
                                [(k,) for k in known - hashes])

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

    def __enter__(self) -> Store:
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
