"""The last build's rows in the content store: its page plan, facts, output record, URLs.

Role: one part of `sitegen.store`'s split by concern. `LastBuild` reads and writes the
`pages`, `reads`, `builds` and `urls` tables and the output record (a `meta` row), each row
sealed (`sitegen.storeseal`): a row that does not verify or cannot be read is left out (its
page rendered again, its URL forgotten), and the output record and the page plan are bound
to the store's generation, advanced at each commit, so neither can be put back from an
earlier build. It must never open the database (`sitegen.storefile` does), render, or write
the output.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from array import array
from collections.abc import Iterable, Mapping

from sitegen.cachekey import seal
from sitegen.storecore import StoreCore, failure
from sitegen.storeseal import OutputRecord, output_name, packed, plan_digest, read_output_record

#: A page row: (sha256 of its bytes, context fingerprint, read ids), and a read row.
PageRow = tuple[bytes, bytes, bytes]
ReadRow = tuple[str, bytes]


class LastBuild(StoreCore):
    """The last build's rows of an open content store (see `sitegen.store.Store`)."""

    def last_plan(self, code: str) -> tuple[dict[str, PageRow], dict[int, ReadRow]]:
        """The last build's page rows and read rows, when that build ran this *code* and its
        plan is of this generation; each row that does not verify left out, and each page
        that names a read left out (its page is rendered again). ({}, {}) otherwise."""
        facts = self.build_facts()
        check = self.seals.check
        pages: dict[str, PageRow] = {}
        page_tags: list[object] = []
        for path, sha, context, reads, found in self._query(
                "SELECT path, sha, context, reads, tag FROM pages ORDER BY path"):
            page_tags.append(found)
            row = tuple(v if isinstance(v, bytes) else b"" for v in (sha, context, reads))
            if check("page", str(path), packed(*row), found) is not None \
                    and len(row[2]) % 4 == 0:
                pages[str(path)] = (row[0], row[1], row[2])
        reads_: dict[int, ReadRow] = {}
        read_tags: list[object] = []
        for ident, key, fp, found in self._query("SELECT id, key, fp, tag FROM reads ORDER BY id"):
            read_tags.append(found)
            value = packed(str(key).encode("utf-8", "surrogateescape"),
                           fp if isinstance(fp, bytes) else b"")
            if check("read", str(ident), value, found, (ident,)) is not None:
                reads_[int(ident)] = (str(key), bytes(fp))
        plan = facts.get("plan")
        if facts.get("code") != code or not pages:
            return {}, {}
        if plan != [self.get("generation"), plan_digest(page_tags, read_tags)]:
            self.seals.forget(len(page_tags))  # (put back from another build: all redone)
            return {}, {}
        known = set(reads_)
        return {path: row for path, row in pages.items()
                if known.issuperset(array("I", row[2]))}, reads_

    def save_build(self, pages: Mapping[str, PageRow], gone: Iterable[str],
                   reads: Mapping[int, ReadRow], stale: Iterable[int],
                   facts: Mapping[str, object], *, replace: bool = False) -> None:
        """Update the last build's records (one transaction; *replace*: start them afresh).

        *pages* and *reads* are added or replaced, the pages *gone* and the reads *stale*
        removed (and every row that did not verify), and the facts replaced, with the
        plan's digest and the store's generation (`last_plan`).
        """
        tag = self.seals.tag
        with self.transaction():
            if replace:
                self.db.execute("DELETE FROM pages")
                self.db.execute("DELETE FROM reads")
            self.db.executemany("INSERT OR REPLACE INTO pages VALUES (?, ?, ?, ?, ?)",
                                ((p, *row, tag("page", p, packed(*row)))
                                 for p, row in pages.items()))
            self.db.executemany("DELETE FROM pages WHERE path = ?",
                                [*((p,) for p in gone), *self.seals.purge("page")])
            self.db.executemany("INSERT OR REPLACE INTO reads VALUES (?, ?, ?, ?)", (
                (i, k, f, tag("read", str(i), packed(k.encode("utf-8", "surrogateescape"), f)))
                for i, (k, f) in reads.items()))
            self.db.executemany("DELETE FROM reads WHERE id = ?",
                                [*((i,) for i in stale), *self.seals.purge("read")])
            digest = plan_digest(
                (t for (t,) in self.db.execute("SELECT tag FROM pages ORDER BY path")),
                (t for (t,) in self.db.execute("SELECT tag FROM reads ORDER BY id")))
            self.db.execute("DELETE FROM builds")
            self.db.executemany("INSERT INTO builds VALUES (?, ?, ?)", (
                (n, text, tag("build", n, text.encode())) for n, v in
                {**facts, "plan": [self.get("generation"), digest]}.items()
                if (text := json.dumps(v))))

    def build_facts(self) -> dict[str, object]:
        """What `save_build` recorded of the last build ({} when none); a fact that does not
        verify or cannot be read is left out."""
        facts: dict[str, object] = {}
        for name, value, found in self._query("SELECT name, value, tag FROM builds"):
            text = self.seals.check("build", str(name), value, found)
            try:
                facts[str(name)] = json.loads(text) if text is not None else None
            except ValueError:
                continue
        return {n: v for n, v in facts.items() if v is not None}

    def output_record(self, output: str) -> OutputRecord:
        """What the last build left in *output* (see `output_name`): each file's sha256,
        inode, size and ctime, and the manifest's stat; empty when unknown or when its seal
        does not verify (then every file of the output is hashed, or written again)."""
        name = output_name(self.path, output)
        return read_output_record(name, self.get(name), self._mac,
                                  self.get("generation") or "")

    def save_output_record(self, output: str, record: OutputRecord) -> str:
        """Remember (sealed) what the writer left in *output*, in a new generation: an
        output record or a page plan of an earlier one is not used again. Returns the
        sealed value, which `output_record_is` compares."""
        files, manifest = record
        text = json.dumps({"files": files, "manifest": manifest}, separators=(",", ":"))
        name, generation = output_name(self.path, output), secrets.token_hex(16)
        sealed = seal(self._mac, "output", f"{name}@{generation}", text.encode()).hex()
        self.set_state({"generation": generation, name: sealed})
        return sealed

    def output_record_is(self, output: str, sealed: str) -> bool:
        """Whether *output*'s record is still the one saved as *sealed* (no other build's
        since), without reading it again."""
        return self.get(output_name(self.path, output)) == sealed

    def forget_build(self) -> None:
        """Drop the last build's records (`--force`: every page is rendered again)."""
        with self.transaction():
            for table in ("pages", "reads", "builds"):
                self.db.execute(f"DELETE FROM {table}")

    # --- the URLs articles have had -------------------------------------------------

    def url_history(self) -> dict[str, list[str]]:
        """article id → every URL it had in a committed build (sorted; {} when none): each
        row that verifies and is a site path (`/…/`, no `..`, no `//`)."""
        history: dict[str, list[str]] = {}
        try:
            rows = self.db.execute("SELECT article, url, tag FROM urls ORDER BY article, url")
            for article, url, found in rows:
                text = self.seals.check("url", str(article), url, found, (article, url))
                if text is not None and _site_path(str(url)):
                    history.setdefault(str(article), []).append(str(url))
        except sqlite3.OperationalError:  # a read-only store from before the table
            return {}
        except sqlite3.DatabaseError as error:
            raise failure(self.path, error) from None
        return history

    def save_urls(self, current: Mapping[str, str]) -> None:
        """Remember each article's *current* URL (article id → URL) beside its old ones."""
        with self.transaction():
            self.db.executemany("DELETE FROM urls WHERE article = ? AND url = ?",
                                self.seals.purge("url"))
            self.db.executemany("INSERT OR REPLACE INTO urls VALUES (?, ?, ?)", (
                (a, u, self.seals.tag("url", a, u.encode())) for a, u in current.items()))


def _site_path(url: str) -> bool:
    """True when *url* is a path of the site that a redirect may be written at."""
    parts = url.split("/")
    return url.startswith("/") and url.endswith("/") and "\\" not in url and not any(
        part in (".", "..") for part in parts) and "//" not in url and all(
        part.isprintable() for part in parts)
