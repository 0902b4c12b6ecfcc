"""The deploy marker: one object in a target's bucket naming the deploy that made it what it is.

Role: pure decisions about `.sitegen-deploy.json` (under the target's prefix; a name no site
file can take: the output has no hidden files, and `run` refuses one that has it). Each
deploy that changes the bucket writes the marker with a fresh random generation before its
first change (state `deploying`) and with another fresh one after its last (`deployed`);
the store keeps the generation it wrote, or adopted from a listing, beside its record of
the bucket. A record is trusted only when the bucket's marker carries its generation:
otherwise (another store deployed since, an older copy of this store, a deploy under way
or cut short, no marker at all) the deploy lists the bucket and reconciles (`why_list`).
The generation travels as user metadata, so one HEAD reads it; the body repeats it for
people, with the time and a digest of the site (nothing a visitor could use: the marker is
served like any object of a public bucket). This module must never touch the network, the
store or the file system.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass

#: The marker's name, relative to the target's prefix.
MARKER = ".sitegen-deploy.json"
DEPLOYING, DEPLOYED = "deploying", "deployed"
#: Its headers: never cached (a CDN must not answer a HEAD with an old generation).
MARKER_HEADERS = {"ContentType": "application/json", "CacheControl": "no-store"}
#: Where the store keeps a target's generation (`meta`, beside the `deployed` record).
STATE_PREFIX = "deployed-generation:"
_GENERATION = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True)
class Marker:
    """A generation of a bucket, and whether the deploy that wrote it had finished."""

    generation: str
    state: str

    @classmethod
    def fresh(cls, state: str) -> Marker:
        """A marker with a new random generation (no two deploys share one)."""
        return cls(secrets.token_hex(16), state)

    @property
    def done(self) -> bool:
        """True when the deploy that wrote it had sent everything."""
        return self.state == DEPLOYED

    def metadata(self) -> dict[str, str]:
        """The object's user metadata (what a HEAD reads back)."""
        return {"generation": self.generation, "state": self.state}

    def body(self, site: Mapping[str, str], when: str) -> bytes:
        """The object's bytes: the metadata again, the time (*when*, UTC) and the site's digest."""
        return json.dumps({**self.metadata(), "time": when, "files": len(site),
                           "site_sha256": site_digest(site)}, indent=2, sort_keys=True
                          ).encode() + b"\n"


def site_digest(site: Mapping[str, str]) -> str:
    """The sha256 of a site's manifest (path → sha256), independent of its order."""
    return hashlib.sha256(json.dumps(dict(site), sort_keys=True, separators=(",", ":"))
                          .encode()).hexdigest()


def read_marker(metadata: Mapping[str, str] | None) -> Marker | None:
    """The marker a HEAD's metadata describes (None: there is no marker). One edited by
    hand or by anything else reads as an unfinished deploy of no generation, which no store
    holds or adopts."""
    if metadata is None:
        return None
    generation, state = metadata.get("generation", ""), metadata.get("state", "")
    if not _GENERATION.fullmatch(generation) or state not in (DEPLOYING, DEPLOYED):
        return Marker("", DEPLOYING)
    return Marker(generation, state)


def why_list(has_record: bool, generation: str | None, found: Marker | None) -> str | None:
    """Why a target's record (non-empty: *has_record*; of *generation*) cannot be trusted
    given the bucket's marker *found*, as a clause for one line; None when it can."""
    if not has_record or (found is not None and found.generation == generation):
        return None  # (no record: listed anyway; the same generation: our own deploy)
    if found is None:
        return ("the bucket has no deploy marker (emptied or edited by hand, or last "
                "deployed by an older sitegen)")
    if not found.generation:
        return "the bucket's deploy marker is not one sitegen wrote"
    if not found.done:
        return "another deploy to the bucket is under way or was cut short"
    return ("another store deployed to the bucket since this one's last deploy (another "
            "machine or CI, or an older copy of this store)")


__all__ = ["DEPLOYED", "DEPLOYING", "MARKER", "MARKER_HEADERS", "STATE_PREFIX", "Marker",
           "read_marker", "site_digest", "why_list"]
