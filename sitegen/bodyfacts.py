"""The model's facts kept between builds: one JSON file in the cache folder.

Role: `build_site` derives word counts, first images, content hashes and repairs
from every article's body (`sitegen.model.body`), a pass over every block of every
article, and scores every article against the others for related links. It hands
back what it derived (`Site.body_facts`, `Site.related_memo`); this module keeps
both in `body-facts.json` beside the content cache and reads them back for the next
build, which then skips the body pass for every article whose facts still belong to
it, and the scoring when no article's place, cluster or tags changed. The file names
the code that derived the facts (a hash of the modules involved and the sitegen
version): facts from other code, or a file that cannot be read, are ignored and
derived again. Losing the file costs time, never correctness. It must never hold
anything but facts `build_site` produced, and never write outside its own file.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from sitegen import __version__
from sitegen.atomicfile import replace_atomically
from sitegen.model.body import BodyFacts
from sitegen.model.related import RelatedMemo

log = logging.getLogger("sitegen.model")

FACTS_FILE = "body-facts.json"
FACTS_FORMAT = 2
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
    digest = hashlib.sha256(f"{FACTS_FORMAT}|{__version__}".encode())
    for name in _DERIVING:
        digest.update(b"\x00" + (here / name).read_bytes())
    return digest.hexdigest()[:24]


def _facts(row: Any) -> BodyFacts:
    updated, length, count, kind, kept, words, image, body_hash, repairs = row
    if kind not in ("blocks", "markdown"):
        raise ValueError(kind)
    return BodyFacts((str(updated), int(length), int(count)), kind,
                     tuple(int(i) for i in kept), int(words), str(image), str(body_hash),
                     tuple(str(r) for r in repairs))


def _related(raw: Any) -> RelatedMemo | None:
    if raw is None:
        return None
    return RelatedMemo(str(raw["key"]), tuple(tuple(int(i) for i in chosen)
                                              for chosen in raw["positions"]))


def load_facts(folder: Path) -> StoredFacts:
    """The facts stored in *folder* by this code (empty when there are none usable)."""
    try:
        data = json.loads((folder / FACTS_FILE).read_bytes())
    except FileNotFoundError:
        return StoredFacts()
    except (OSError, ValueError) as error:
        log.debug("ignored the body facts in %s (%s)", folder, error)
        return StoredFacts()
    if not isinstance(data, dict) or data.get("code") != code_fingerprint():
        return StoredFacts()
    try:
        return StoredFacts({str(key): _facts(row) for key, row in data["facts"].items()},
                           _related(data.get("related")))
    except (AttributeError, KeyError, TypeError, ValueError) as error:
        log.debug("ignored the body facts in %s (malformed: %r)", folder, error)
        return StoredFacts()


def save_facts(folder: Path, facts: StoredFacts, previous: StoredFacts) -> bool:
    """Store *facts* unless they equal *previous* (what was loaded); True when written.

    A failure to write is not an error: the next build derives the facts again.
    """
    if facts == previous:
        return False
    rows = {key: [*f.guard, f.kind, list(f.kept), f.words, f.image, f.hash, list(f.repairs)]
            for key, f in sorted(facts.bodies.items())}
    related = facts.related
    payload = json.dumps({
        "format": FACTS_FORMAT, "code": code_fingerprint(), "facts": rows,
        "related": None if related is None else {
            "key": related.key, "positions": [list(chosen) for chosen in related.positions]},
    }, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        replace_atomically(folder / FACTS_FILE, payload)
    except OSError as error:
        log.debug("could not store the body facts in %s (%s)", folder, error)
        return False
    return True
