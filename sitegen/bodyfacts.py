"""The model's facts kept between builds: one file in the cache folder.

Role: `build_site` derives word counts, first images, content hashes and repairs
from every article's body (`sitegen.model.body`), a pass over every block of every
article, and scores every article against the others for related links. It hands
back what it derived (`Site.body_facts`, `Site.related_memo`); this module keeps
both in `body-facts.bin` beside the content cache and reads them back for the next
build, which then skips the body pass for every article whose facts still belong to
it, and the scoring when no article's place, cluster or tags changed. The file names
the code that derived the facts (a hash of the modules involved and the sitegen
version): facts from other code, or a file that cannot be read, are ignored and
derived again. Losing the file costs time, never correctness. The file is `marshal`
data (a tagged header, then tuples of plain values): read back ~4x faster than the
JSON it replaced, and every value is type-checked on the way in, as JSON's were. It
must never hold anything but facts `build_site` produced, and never write outside
its own file (and the JSON file of earlier versions, which it removes).
"""

from __future__ import annotations

import hashlib
import logging
import marshal
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from sitegen import __version__
from sitegen.atomicfile import replace_atomically
from sitegen.model.body import BodyFacts
from sitegen.model.related import RelatedMemo

log = logging.getLogger("sitegen.model")

FACTS_FILE = "body-facts.bin"
#: The JSON file of sitegen before facts format 3 (removed when the new one is written).
OLD_FACTS_FILE = "body-facts.json"
FACTS_FORMAT = 3
_MAGIC = b"sitegen body facts\n"
_KINDS = frozenset({"blocks", "markdown"})
#: The modules whose code decides the facts (the body rule, URL checks, record parsing,
#: related links).
_DERIVING = ("model/body.py", "render/urls.py", "fetch/records.py", "model/related.py")


@dataclass
class StoredFacts:
    """What one build hands the next: body facts by article id, and the related links."""

    bodies: dict[str, BodyFacts] = field(default_factory=dict)
    related: RelatedMemo | None = None


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of the code that derives body facts, and of the sitegen version."""
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256(f"{FACTS_FORMAT}|{__version__}|{marshal.version}|"
                            f"{sys.version_info[:2]}".encode())
    for name in _DERIVING:
        digest.update(b"\x00" + (here / name).read_bytes())
    return digest.hexdigest()[:24]


def _facts(row: Any) -> tuple[str, BodyFacts]:
    """One stored row as (article id, facts); ValueError when any value has the wrong type."""
    if type(row) is not tuple or len(row) != 10:
        raise ValueError("a row is not a 10-tuple")
    key, updated, length, count, kind, kept, words, image, body_hash, repairs = row
    if not (type(key) is str and type(updated) is str and type(length) is int
            and type(count) is int and kind in _KINDS and type(kept) is tuple
            and type(words) is int and type(image) is str and type(body_hash) is str
            and type(repairs) is tuple and all(type(i) is int for i in kept)
            and all(type(r) is str for r in repairs)):
        raise ValueError(f"the row of {key!r} has a value of the wrong type")
    return key, BodyFacts((updated, length, count), kind, kept, words, image, body_hash,
                          repairs)


def _related(raw: Any) -> RelatedMemo | None:
    if raw is None:
        return None
    key, positions = raw
    if type(key) is not str or type(positions) is not tuple or not all(
            type(chosen) is tuple and all(type(i) is int for i in chosen)
            for chosen in positions):
        raise ValueError("the related-links memo has a value of the wrong type")
    return RelatedMemo(key, positions)


def load_facts(folder: Path) -> StoredFacts:
    """The facts stored in *folder* by this code (empty when there are none usable)."""
    try:
        data = (folder / FACTS_FILE).read_bytes()
    except FileNotFoundError:
        return StoredFacts()
    except OSError as error:
        log.debug("ignored the body facts in %s (%s)", folder, error)
        return StoredFacts()
    if not data.startswith(_MAGIC):
        log.debug("ignored the body facts in %s (not a facts file)", folder)
        return StoredFacts()
    try:
        code, rows, related = marshal.loads(data[len(_MAGIC):])
        if code != code_fingerprint():
            return StoredFacts()
        if type(rows) is not tuple:
            raise ValueError("the rows are not a tuple")
        return StoredFacts(dict(_facts(row) for row in rows), _related(related))
    except (EOFError, ValueError, TypeError) as error:
        log.debug("ignored the body facts in %s (malformed: %s)", folder, error)
        return StoredFacts()


def save_facts(folder: Path, facts: StoredFacts, previous: StoredFacts) -> bool:
    """Store *facts* unless they equal *previous* (what was loaded); True when written.

    A failure to write is not an error: the next build derives the facts again.
    """
    if facts == previous:
        return False
    rows = tuple((key, *f.guard, f.kind, tuple(f.kept), f.words, f.image, f.hash,
                  tuple(f.repairs)) for key, f in sorted(facts.bodies.items()))
    related = facts.related
    memo = None if related is None else (
        related.key, tuple(tuple(chosen) for chosen in related.positions))
    payload = _MAGIC + marshal.dumps((code_fingerprint(), rows, memo))
    try:
        folder.mkdir(parents=True, exist_ok=True)
        replace_atomically(folder / FACTS_FILE, payload)
        (folder / OLD_FACTS_FILE).unlink(missing_ok=True)
    except OSError as error:
        log.debug("could not store the body facts in %s (%s)", folder, error)
        return False
    return True
