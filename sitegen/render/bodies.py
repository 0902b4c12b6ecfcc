"""Rendered article bodies kept between builds: an SQLite file in the cache folder.

Role: rendering markdown and blocks is the costliest part of a page, and a body's
HTML depends only on its source (`ArticleView.body_hash`) and on how bodies are
rendered: the `blocks/` templates of the theme chain, the render code, the
markdown and highlighting libraries and the site's base URL (external links).
`body_fingerprint` hashes exactly that, so a build after a theme tweak that does
not touch `blocks/` still reuses every body, and `BodyStore` maps
(fingerprint, body hash) → (HTML, table of contents). Only the build's main
process opens the file (never a forked worker: SQLite connections do not survive
fork); workers get bodies through the Renderer's memory they inherit. A store
that cannot be opened or read is ignored (bodies are rendered again). This
module must never render, never hold anything but sanitized HTML produced by
this sitegen, and never write outside its own file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path

from sitegen import __version__
from sitegen.render.markdown import Heading

log = logging.getLogger("sitegen.render")

STORE_FORMAT = "1"
STORE_FILE = "bodies.sqlite"
_BATCH = 500
#: The libraries whose versions decide a rendered body, by distribution name.
RENDER_LIBRARIES = ("markdown-it-py", "pygments", "jinja2", "markupsafe")
_RENDER_CODE = ("blocks.py", "markdown.py", "highlight.py", "urls.py", "filters.py")
_NESTING = ("{% include", "{% import", "{% from", "{% extends", "{%- include", "{%- import",
            "{%- from", "{%- extends")

Body = tuple[str, list[Heading]]


def body_fingerprint(template_dirs: Iterable[Path], base_url: str, whole_chain: str) -> str:
    """What decides a body's HTML besides its source (see the module docstring).

    *whole_chain* (the theme set's fingerprint) is used instead of the `blocks/`
    files when a block template pulls in another template.
    """
    from sitegen.pkgversions import versions_of

    digest = hashlib.sha256(f"{STORE_FORMAT}|{__version__}|{base_url}".encode())
    versions = versions_of(RENDER_LIBRARIES)
    for package in RENDER_LIBRARIES:
        digest.update(f"|{package}={versions[package] or '?'}".encode())
    here = Path(__file__).resolve().parent
    for name in _RENDER_CODE:
        digest.update(b"\x00" + (here / name).read_bytes())
    digest.update(b"\x00" + (here.parent / "model" / "slugs.py").read_bytes())
    layers = [folder for folder in template_dirs if (folder / "blocks").is_dir()]
    for layer, folder in enumerate(layers):  # only layers with blocks/ count (their order)
        blocks = folder / "blocks"
        for path in sorted(p for p in blocks.rglob("*") if p.is_file()):
            data = path.read_bytes()
            if any(marker.encode() in data for marker in _NESTING):
                digest.update(f"\x00chain:{whole_chain}".encode())
            digest.update(f"\x00{layer}:{path.relative_to(folder).as_posix()}\x00".encode())
            digest.update(data)
    return digest.hexdigest()[:24]


class BodyStore:
    """(fingerprint, body hash) → rendered body, in one SQLite file."""

    def __init__(self, folder: Path, fingerprint: str) -> None:
        self.path = folder / STORE_FILE
        self.fingerprint = fingerprint
        self._db: sqlite3.Connection | None = None
        self._pid = 0
        self._broken = False

    def _connect(self, create: bool) -> sqlite3.Connection | None:
        if self._broken:
            return None
        if self._db is not None and self._pid == os.getpid():
            return self._db
        if not create and not self.path.exists():
            return None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("CREATE TABLE IF NOT EXISTS bodies (fingerprint TEXT NOT NULL, "
                       "hash TEXT NOT NULL, html TEXT NOT NULL, toc TEXT NOT NULL, "
                       "PRIMARY KEY (fingerprint, hash)) WITHOUT ROWID")
            # The keys alone: the table's rows hold the bodies, so listing its keys read
            # every body (~0.05 s at 4,000 articles); this index makes it ~0.005 s.
            db.execute("CREATE INDEX IF NOT EXISTS bodies_keys ON bodies (fingerprint, hash)")
        except sqlite3.Error as error:
            log.debug("the body store %s is unusable (%s); bodies are rendered", self.path, error)
            self._broken = True
            return None
        self._db, self._pid = db, os.getpid()
        return db

    def get_many(self, hashes: Iterable[str]) -> dict[str, Body]:
        """The stored bodies among *hashes* (missing ones are simply absent)."""
        db = self._connect(create=False)
        wanted = sorted(set(hashes))
        found: dict[str, Body] = {}
        if db is None or not wanted:
            return found
        try:
            for start in range(0, len(wanted), _BATCH):
                batch = wanted[start:start + _BATCH]
                marks = ",".join("?" * len(batch))
                rows = db.execute(
                    f"SELECT hash, html, toc FROM bodies WHERE fingerprint = ? "  # noqa: S608
                    f"AND hash IN ({marks})", [self.fingerprint, *batch])
                for body_hash, html, toc in rows:
                    found[body_hash] = (html, [Heading(*entry) for entry in json.loads(toc)])
        except (sqlite3.Error, ValueError, TypeError) as error:
            log.debug("could not read the body store %s (%s)", self.path, error)
            return {}
        return found

    def update(self, fresh: Mapping[str, Body], keep: Iterable[str]) -> None:
        """Add *fresh* bodies, and drop every body not in *keep* or of another fingerprint.

        Without fresh bodies nothing is done: the store only grows when bodies are added, and
        reading every stored key means reading the whole table (the bodies live in its
        leaves), a cost a warm full build should not pay. The bodies of articles deleted since
        stay until the next build that stores a body.
        """
        if not fresh:
            return
        keep = set(keep)
        db = self._connect(create=True)
        if db is None:
            return
        rows = [(self.fingerprint, body_hash, html,
                 json.dumps([[h.level, h.id, h.text] for h in toc], ensure_ascii=False))
                for body_hash, (html, toc) in fresh.items()]
        try:
            db.execute("BEGIN IMMEDIATE")
            db.executemany("INSERT OR REPLACE INTO bodies VALUES (?, ?, ?, ?)", rows)
            db.execute("DELETE FROM bodies WHERE fingerprint != ?", [self.fingerprint])
            stored = {row[0] for row in db.execute(
                "SELECT hash FROM bodies WHERE fingerprint = ?", [self.fingerprint])}
            stale = [(self.fingerprint, body_hash) for body_hash in stored - keep]
            db.executemany("DELETE FROM bodies WHERE fingerprint = ? AND hash = ?", stale)
            db.execute("COMMIT")
        except sqlite3.Error as error:
            log.debug("could not update the body store %s (%s)", self.path, error)
            try:
                db.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    def close(self) -> None:
        """Close this process's connection (a forked child's inherited one is left alone)."""
        if self._db is not None and self._pid == os.getpid():
            self._db.close()
        self._db = None
