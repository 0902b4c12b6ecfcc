"""How each row of the content store is sealed, and the tally of rows that did not verify.

Role: the store's rows (`sitegen.store`) are untrusted input (a CI cache can be written by
others). Each row carries a tag (`sitegen.cachekey.tag`) over its kind, its key and its
value, so a row edited, forged or moved to another key does not verify; `Seals` checks them
and counts the rows it dropped (one warning line per build, `Seals.say`), remembering their
keys so the next write of that table deletes them. A row whose value verifies but cannot be
read is the caller's to drop (a cache miss). Two things bind rows to the store's
*generation*, a random token advanced at each commit (a sealed `meta` row): the output
record (sealed under its name and the generation) and the page plan (the digest of every
`pages` and `reads` tag, sealed in `builds` with the generation), so an older output record,
page row or read row put back from an earlier build is not used. The output record's name
and shape live here too. This module must never open the database, hold a secret (only the
MAC key derived from one, in memory) or print a key.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import struct
from collections.abc import Iterable
from pathlib import Path

from sitegen.cachekey import CACHE_KEY_ENV, tag, take_fresh, unseal, verifies

log = logging.getLogger("sitegen.store")
#: `meta` rows read before any key is known, or that are themselves no secret's word: not sealed.
UNSEALED_META = frozenset({"schema", "source", "key_id"})
#: What the writer left in an output: path → (sha256, inode, size, ctime_ns), and the
#: manifest's (inode, size, ctime_ns) or None.
OutputRecord = tuple[dict[str, tuple[str, int, int, int]], tuple[int, int, int] | None]
#: One key of a row: its primary key's values.
RowKey = tuple[object, ...]


def as_bytes(value: object) -> bytes | None:
    """A stored value as bytes (text as UTF-8); None for anything else (NULL, a number)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    return None


def packed(*parts: bytes) -> bytes:
    """*parts* in one value that no other parts give (each prefixed with its length)."""
    return b"".join(struct.pack(">I", len(part)) + part for part in parts)


class Seals:
    """The tags of one open store's rows, under its MAC key, and the rows that failed."""

    def __init__(self, mac: bytes | None) -> None:
        self.mac = mac
        #: How many rows did not verify since the store was opened.
        self.dropped = 0
        self.bad: dict[str, set[RowKey]] = {}

    def tag(self, kind: str, name: str, value: bytes) -> bytes:
        """The tag a row of *kind* stored as *name* with *value* carries."""
        return tag(self.mac, kind, name, value)

    def check(self, kind: str, name: str, value: object, found: object,
              row: RowKey | None = None) -> bytes | None:
        """*value* as bytes when *found* is its tag; else None, the row (*row*, default
        (*name*,)) counted and remembered for `purge`."""
        data = as_bytes(value)
        if data is not None and verifies(self.mac, kind, name, data, found):
            return data
        self.dropped += 1
        self.bad.setdefault(kind, set()).add(row if row is not None else (name,))
        return None

    def purge(self, kind: str) -> list[RowKey]:
        """The keys of the rows of *kind* that did not verify (forgotten once given)."""
        return sorted(self.bad.pop(kind, set()), key=repr)

    def forget(self, count: int) -> None:
        """Count *count* more rows dropped (a plan of another generation: its rows)."""
        self.dropped += count

    def say(self, key_changed: bool) -> None:
        """The one line of a build that met rows that did not verify (nothing when none)."""
        fresh = take_fresh()  # (made by this process since the last build: said once)
        if key_changed and fresh:  # (a fresh CI machine with no secret, say)
            log.warning("no %s or API key: a new cache key was made, everything derived is "
                        "made again; set %s in CI to keep the cache warm", CACHE_KEY_ENV,
                        CACHE_KEY_ENV)
        elif key_changed:
            log.warning("the cache was sealed with another key (SITEGEN_CACHE_KEY or the API "
                        "key changed): everything in it is fetched or made again this once")
        elif self.dropped:
            log.warning("%d stored row%s did not verify (edited, replayed or sealed with "
                        "another key) and %s fetched or derived again", self.dropped,
                        "" if self.dropped == 1 else "s",
                        "was" if self.dropped == 1 else "were")
        self.dropped = 0


def plan_digest(page_tags: Iterable[object], read_tags: Iterable[object]) -> str:
    """The digest of the plan's tags: every `pages` row's (by path), then every `reads`
    row's (by id), so a row added, removed or put back from another build changes it."""
    digest = hashlib.sha256()
    for tags in (page_tags, read_tags):
        for found in tags:
            digest.update(as_bytes(found) or b"?")
        digest.update(b"\0")
    return digest.hexdigest()


def output_name(store_file: Path, output: str) -> str:
    """The meta name of *output*'s record: the output's path relative to the store's folder,
    so a site folder moved or restored elsewhere (a CI cache) keeps its record."""
    return "output:" + os.path.relpath(output, os.path.abspath(store_file.parent))


def read_output_record(name: str, value: str | None, mac: bytes | None,
                       generation: str = "") -> OutputRecord:
    """The record that the meta value *name* = *value* holds; empty when it is missing or
    its seal does not verify under *mac* and the store's *generation*."""
    try:
        text = unseal(mac, "output", f"{name}@{generation}", bytes.fromhex(value or ""))
        raw = json.loads(text) if text is not None else {}
        files = {str(path): (str(sha), int(ino), int(size), int(ctime))
                 for path, (sha, ino, size, ctime) in raw.get("files", {}).items()}
        found = raw.get("manifest")
        manifest = (int(found[0]), int(found[1]), int(found[2])) if found else None
    except (ValueError, TypeError, AttributeError):
        return {}, None
    return files, manifest
