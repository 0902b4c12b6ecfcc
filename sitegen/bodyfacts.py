"""The body facts kept between builds: one JSON file in the cache folder.

Role: `build_site` derives word counts, first images, content hashes and repairs
from every article's body (`sitegen.model.body`), a pass over every block of every
article. It hands back what it derived (`Site.body_facts`); this module keeps that
in `body-facts.json` beside the content cache and reads it back for the next build,
which then skips the pass for every article whose facts still belong to it. The
file names the code that derived the facts (a hash of the modules involved and the
sitegen version): facts from other code, or a file that cannot be read, are
ignored and derived again. Losing the file costs time, never correctness. It must
never hold anything but facts `build_site` produced, and never write outside its
own file.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from sitegen import __version__
from sitegen.atomicfile import replace_atomically
from sitegen.model.body import BodyFacts

log = logging.getLogger("sitegen.model")

FACTS_FILE = "body-facts.json"
FACTS_FORMAT = 1
#: The modules whose code decides the facts (the body rule, URL checks, record parsing).
_DERIVING = ("model/body.py", "render/urls.py", "fetch/records.py")


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


def load_facts(folder: Path) -> dict[str, BodyFacts]:
    """The facts stored in *folder* by this code (empty when there are none usable)."""
    try:
        data = json.loads((folder / FACTS_FILE).read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        log.debug("ignored the body facts in %s (%s)", folder, error)
        return {}
    if not isinstance(data, dict) or data.get("code") != code_fingerprint():
        return {}
    try:
        return {str(key): _facts(row) for key, row in data["facts"].items()}
    except (AttributeError, KeyError, TypeError, ValueError) as error:
        log.debug("ignored the body facts in %s (malformed: %r)", folder, error)
        return {}


def save_facts(folder: Path, facts: Mapping[str, BodyFacts],
               previous: Mapping[str, BodyFacts]) -> bool:
    """Store *facts* unless they equal *previous* (what was loaded); True when written.

    A failure to write is not an error: the next build derives the facts again.
    """
    if facts == previous:
        return False
    rows = {key: [*f.guard, f.kind, list(f.kept), f.words, f.image, f.hash, list(f.repairs)]
            for key, f in sorted(facts.items())}
    payload = json.dumps({"format": FACTS_FORMAT, "code": code_fingerprint(), "facts": rows},
                         ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        replace_atomically(folder / FACTS_FILE, payload)
    except OSError as error:
        log.debug("could not store the body facts in %s (%s)", folder, error)
        return False
    return True
