"""The content store: everything sitegen keeps between runs, in one SQLite database.

Role: the store's schema and its one class, `Store` (`sitegen.storefile` opens the file:
`open_store`, `peek_store`). The schema (every row also carries its `tag`, below):

    meta      name → value         schema version, whose content this is (api url and
                                   workspace), the seal key's id, api version, content
                                   version, the generation, the output record, sync state
    articles  id → record          each article as the service sent it (tolerantly parsed)
    rest      kind → record        workspace info, agents, clusters, authors, social posts,
                                   digest (JSON; absent: the API version has no such list)
    derived   (kind, key) → value  data derived from content, keyed by the hash of what it
                                   was derived from and of the code that derived it
                                   (rendered bodies): never stale, safe to drop
    pages     path → reads         what each page of the last build read (`render.reads`)
    reads     id → (key, fp)       the distinct reads those pages share
    builds    name → value         the last build's facts (`sitegen.unchanged`) and its plan's
                                   digest and generation
    urls      (article, url)       every URL each article has had in a committed build
                                   (redirects for moved articles)
    deployed  (target, path) → (sha256, etag)  what each `sitegen deploy` target's bucket
                                   holds, as last confirmed by an upload or a listing (the
                                   bucket marker's generation it is of: a `meta` row)
    images    url → (hash, etag,   each image URL fetched, the sha256 of its bytes and its
              last_modified)       validators (the bytes: `derived`, kind `image`)

Each stage that writes does so in one transaction, so a killed sync or build leaves
the store as it was before or after, never between. Deleting the files is always safe.

The whole store is untrusted input (a CI cache can be written by others): every row is
sealed (`sitegen.storeseal`, a MAC of a secret over its kind, key and value; a `derived`
value and the output record carry it in front of the value, the other tables in a `tag`
column) and verified when read; a row that does not verify, or cannot be read, is absent
(fetched or derived again, counted for the build's one warning line, deleted by the next
write of its table). The output record and the page plan are bound to the generation.
This module must never make a request, render, or hold the API key (only the MAC key
derived from a secret, in memory).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping

from sitegen.cachekey import seal, unseal
from sitegen.storebuild import LastBuild, PageRow, ReadRow
from sitegen.storecore import BUSY_WAIT, busy, failure, is_busy
from sitegen.storeseal import OutputRecord, output_name, read_output_record

__all__ = ["BUSY_WAIT", "OutputRecord", "PageRow", "ReadRow", "Store", "busy", "failure",
           "is_busy", "output_name", "read_output_record"]
SCHEMA = "sitegen-store-3"
STORE_FILE = "store.sqlite"
TABLES = """
CREATE TABLE meta(name TEXT PRIMARY KEY, value TEXT NOT NULL, tag BLOB);
CREATE TABLE articles(id TEXT PRIMARY KEY, record TEXT NOT NULL, tag BLOB);
CREATE TABLE rest(kind TEXT PRIMARY KEY, record TEXT NOT NULL, tag BLOB);
CREATE TABLE derived(kind TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL,
                     PRIMARY KEY(kind, key));
CREATE TABLE pages(path TEXT PRIMARY KEY, sha BLOB NOT NULL, context BLOB NOT NULL,
                   reads BLOB NOT NULL, tag BLOB);
CREATE TABLE reads(id INTEGER PRIMARY KEY, key TEXT NOT NULL, fp BLOB NOT NULL, tag BLOB);
CREATE TABLE builds(name TEXT PRIMARY KEY, value TEXT NOT NULL, tag BLOB);
"""
#: Tables `storefile` makes sure of on open (`IF NOT EXISTS`, as within schema 2).
URLS_TABLE = """CREATE TABLE IF NOT EXISTS urls(article TEXT NOT NULL, url TEXT NOT NULL,
                                         tag BLOB, PRIMARY KEY(article, url))"""
DEPLOYED_TABLE = """CREATE TABLE IF NOT EXISTS deployed(target TEXT NOT NULL, path TEXT NOT NULL,
                                             sha TEXT NOT NULL, etag TEXT NOT NULL, tag BLOB,
                                             PRIMARY KEY(target, path))"""
IMAGES_TABLE = """CREATE TABLE IF NOT EXISTS images(url TEXT PRIMARY KEY, hash TEXT NOT NULL,
                                           etag TEXT NOT NULL, modified TEXT NOT NULL,
                                           tag BLOB)"""
_CHUNK = 500


class Store(LastBuild):
    """An open content store (use `open_store`): its records, derived data, deploy and image
    rows here, its meta rows and plumbing in `StoreCore`, the last build's in `LastBuild`."""

    # --- records ---------------------------------------------------------------------

    def article_records(self) -> Iterator[tuple[str, str]]:
        """(id, JSON record) of every stored article that verifies, by id."""
        check = self.seals.check
        for ident, record, found in self._query(
                "SELECT id, record, tag FROM articles ORDER BY id"):
            if check("article", str(ident), record, found) is not None:
                yield str(ident), str(record)

    def _article_rows(self, ids: list[str]) -> dict[str, tuple[str, bytes]]:
        """The stored records and tags of the articles *ids* (those stored)."""
        found: dict[str, tuple[str, bytes]] = {}
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start:start + _CHUNK]
            found.update((str(i), (str(r), t)) for i, r, t in self._query(
                f"SELECT id, record, tag FROM articles WHERE id IN "
                f"({','.join('?' * len(chunk))})", tuple(chunk)))
        return found

    def rest_records(self) -> dict[str, str]:
        """JSON records of the workspace's other lists by kind (see the module docstring)."""
        return {str(k): str(v) for k, v, t in self._query("SELECT kind, record, tag FROM rest")
                if self.seals.check("rest", str(k), v, t) is not None}

    def save_content(self, meta: Mapping[str, str], articles: Mapping[str, str | None],
                     rest: Mapping[str, str]) -> bool:
        """Make the stored content exactly *articles* and *rest*, with *meta*; True if it changed.

        An article given as None keeps its stored row (the caller read it from there); the
        others are compared with what is stored, so an unchanged sync writes nothing but its
        meta, and the content version grows only when a record changed.
        """
        ids = {str(i) for (i,) in self._query("SELECT id FROM articles")}
        given = {i: (r, self.seals.tag("article", i, r.encode("utf-8", "surrogateescape")))
                 for i, r in articles.items() if r is not None}
        if any(r is None and i not in ids for i, r in articles.items()):
            raise KeyError("an article given as stored is not in the store")
        stored = self._article_rows([i for i in given if i in ids])
        changed = [(i, *row) for i, row in given.items() if stored.get(i) != row]
        gone = [(i,) for i in ids - articles.keys()]
        old_rest = self.rest_records()
        rest_changed = dict(rest) != old_rest or bool(self.seals.purge("rest"))
        updates = dict(meta)
        differs = bool(changed or gone or rest_changed) or any(
            self.get(name) != value for name, value in meta.items())
        if differs:
            updates["content_version"] = str(self.content_version() + 1)
        with self.transaction():
            self.db.executemany("INSERT OR REPLACE INTO articles VALUES (?, ?, ?)", changed)
            self.db.executemany("DELETE FROM articles WHERE id = ?", gone)
            if rest_changed:
                self.db.execute("DELETE FROM rest")
                self.db.executemany("INSERT INTO rest VALUES (?, ?, ?)", (
                    (k, r, self.seals.tag("rest", k, r.encode())) for k, r in rest.items()))
            self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?, ?)",
                                self._meta_rows(updates))
        self.seals.purge("article")
        return differs

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
                else:
                    self.seals.forget(1)
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

    # --- what deploy targets hold ---------------------------------------------------

    def deployed(self, target: str) -> dict[str, tuple[str, str]]:
        """path → (sha256, etag) of what *target*'s bucket holds, as last confirmed (a row
        that does not verify is left out: that file is uploaded again)."""
        return {str(p): (str(s), str(e)) for p, s, e, t in self._query(
            "SELECT path, sha, etag, tag FROM deployed WHERE target = ?", (target,))
            if self.seals.check("deployed", f"{target}\0{p}", f"{s}\0{e}", t) is not None}

    def save_deployed(self, target: str, confirmed: Mapping[str, tuple[str, str]],
                      gone: Iterable[str] = (), *, replace: bool = False) -> None:
        """Record uploads *confirmed* (path → (sha256, etag)) and deletions *gone* of *target*.

        *replace* starts the target's record afresh (a listing of its bucket).
        """
        tag = self.seals.tag
        with self.transaction():
            if replace:
                self.db.execute("DELETE FROM deployed WHERE target = ?", (target,))
            self.db.executemany("INSERT OR REPLACE INTO deployed VALUES (?, ?, ?, ?, ?)", (
                (target, p, s, e, tag("deployed", f"{target}\0{p}", f"{s}\0{e}".encode()))
                for p, (s, e) in confirmed.items()))
            self.db.executemany("DELETE FROM deployed WHERE target = ? AND path = ?",
                                ((target, p) for p in gone))

    # --- images fetched ---------------------------------------------------------------

    def image_rows(self) -> dict[str, tuple[str, str, str]]:
        """image URL → (sha256 of its bytes, ETag, Last-Modified) of every image fetched."""
        try:
            rows = self.db.execute("SELECT url, hash, etag, modified, tag FROM images")
            return {str(u): (str(h), str(e), str(m)) for u, h, e, m, t in rows
                    if self.seals.check("imagerow", str(u), f"{h}\0{e}\0{m}", t) is not None}
        except sqlite3.OperationalError:  # a read-only store from before the table
            return {}
        except sqlite3.DatabaseError as error:
            raise failure(self.path, error) from None

    def save_images(self, rows: Mapping[str, tuple[str, str, str]], sources: Mapping[str, bytes],
                    keep: Iterable[str]) -> None:
        """Add image URL *rows* and source bytes (hash → bytes, `derived` kind `image`) in one
        transaction; then keep only the URLs in *keep* and the sources they name."""
        wanted, tag = set(keep), self.seals.tag
        with self.transaction():
            self.db.executemany("DELETE FROM images WHERE url = ?", self.seals.purge("imagerow"))
            self.db.executemany("INSERT OR REPLACE INTO images VALUES (?, ?, ?, ?, ?)",
                                [(url, *row, tag("imagerow", url, "\0".join(row).encode()))
                                 for url, row in rows.items()])
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
