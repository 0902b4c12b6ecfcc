"""What a deploy sends, and in which order: the site's manifest against a target's record.

Role: pure decisions. `plan_deploy` compares the output's manifest (path → sha256) with
what the store recorded of the bucket (path → (sha256, etag)) and returns the uploads in
waves, then the deletions: assets first (stylesheets, scripts, images, the search
index), then new pages, then changed pages, then feeds and the sitemap, and deletions
last. Each wave is finished before the next begins, so a reader who meets a page meets
its stylesheet, and a changed page's link to a new page resolves. `reconcile` turns a
listing of the bucket (path → ETag) into a record, keeping what the record and the
listing agree on and adopting objects whose ETag is the MD5 of the site's file; `Drift`
says how a listing disagreed. This module must never touch the network, the store or
the file system.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

#: A target's record: path → (sha256 of the bytes uploaded, the store's ETag). An empty
#: sha256 means "an object is there, its bytes unknown" (found by a listing).
Record = Mapping[str, tuple[str, str]]
WAVES = ("assets", "new pages", "changed pages", "feeds")


def wave_of(path: str, new: bool) -> int:
    """The upload wave of *path* (an index of `WAVES`)."""
    if path.endswith(".html"):
        return 1 if new else 2
    if path.endswith(".xml"):
        return 3
    return 0


@dataclass(frozen=True)
class Plan:
    """The uploads by wave (each sorted) and the deletions, of one target."""

    waves: tuple[tuple[str, ...], ...]
    deletes: tuple[str, ...]
    unchanged: int

    @property
    def uploads(self) -> list[str]:
        """Every upload, in order."""
        return [path for wave in self.waves for path in wave]

    def describe(self) -> list[str]:
        """A line per action, in order: `would upload PATH (WAVE)`, `would delete PATH`."""
        lines = [f"would upload {path} ({WAVES[index]})"
                 for index, wave in enumerate(self.waves) for path in wave]
        return lines + [f"would delete {path}" for path in self.deletes]

    @property
    def empty(self) -> bool:
        """True when the bucket already holds the site."""
        return not self.deletes and not any(self.waves)


def plan_deploy(site: Mapping[str, str], record: Record, *, delete: bool = True) -> Plan:
    """Uploads and deletions that make a bucket holding *record* hold *site* (path → sha256)."""
    waves: list[list[str]] = [[] for _ in WAVES]
    unchanged = 0
    for path, sha in site.items():
        held = record.get(path)
        if held is not None and held[0] == sha:
            unchanged += 1
            continue
        waves[wave_of(path, held is None)].append(path)
    deletes = sorted(path for path in record if path not in site) if delete else []
    return Plan(tuple(tuple(sorted(w)) for w in waves), tuple(deletes), unchanged)


@dataclass(frozen=True)
class Drift:
    """How a listing of the bucket disagreed with the record."""

    missing: int  # recorded, not in the bucket
    extra: int  # in the bucket, not recorded
    changed: int  # in both, another ETag

    def __bool__(self) -> bool:
        return bool(self.missing or self.extra or self.changed)

    def describe(self) -> str:
        """'2 missing, 1 extra, 0 changed'."""
        return f"{self.missing} missing, {self.extra} extra, {self.changed} changed"


def clean_etag(etag: str) -> str:
    """An ETag without its quotes (listings and responses quote them)."""
    return etag.strip().strip('"')


def reconcile(listing: Mapping[str, str], record: Record, site: Mapping[str, str],
              md5_of: Callable[[str], str]) -> tuple[dict[str, tuple[str, str]], Drift]:
    """The record a bucket *listing* (path → ETag) implies, and how it differs from *record*.

    An object keeps its recorded sha256 when its ETag is the recorded one; an object the
    record does not vouch for is adopted when its ETag is the MD5 of the site's file of
    that path (`md5_of`; a single-part upload's ETag is the MD5 of its bytes), else its
    bytes are unknown (sha256 ""), so the plan uploads or deletes it.
    """
    result: dict[str, tuple[str, str]] = {}
    extra = changed = 0
    for path, raw in listing.items():
        etag = clean_etag(raw)
        held = record.get(path)
        if held is None:
            extra += 1
        elif held[1] != etag:
            changed += 1
        if held is not None and held[1] == etag:
            result[path] = held
        elif path in site and md5_of(path) == etag:
            result[path] = (site[path], etag)
        else:
            result[path] = ("", etag)
    missing = sum(1 for path in record if path not in listing)
    return result, Drift(missing, extra, changed)


#: More changed paths than this are invalidated as "/*" (one path for CloudFront).
INVALIDATE_MAX = 50


def invalidation_paths(changed: list[str]) -> list[str]:
    """The CDN paths to invalidate for the *changed* (overwritten or deleted) files.

    A page is invalidated as its file and its pretty URL (`a/index.html`, `a/`); more
    than `INVALIDATE_MAX` paths become the one wildcard `/*`. New files need none.
    """
    paths = {"/" + p for p in changed} | {"/" + p[:-len("index.html")] for p in changed
                                         if p.endswith("index.html")}
    return sorted(paths) if len(paths) <= INVALIDATE_MAX else ["/*"]


__all__ = ["INVALIDATE_MAX", "WAVES", "Drift", "Plan", "Record", "clean_etag",
           "invalidation_paths", "plan_deploy", "reconcile", "wave_of"]
