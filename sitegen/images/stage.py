"""The images stage of the build, as a recipe: collect → fetch → decode and encode → store.

Role: between the model and the render, make every image the site shows its own
(`sitegen.images`), in steps that each do one job:
1. settings: `[images]` read once (`images.settings`);
2. collect (pure, from the model): every image URL shown and where (`images.collect`); a
   markdown body's image URLs come from the render's parse, handed down by the build
   (`FindImages`), each body parsed once in its life (`images.stored` keeps the URLs);
3. fetch: the URLs the store knows neither the bytes of nor a failure still standing of
   (every one with `--refresh`), only when the build may fetch, all under `[images]
   budget` (`images.download`; the downloads are `sitegen.fetch.images`); and again the
   URLs whose stored data no longer verifies (sealed with another key: one warning when
   the build cannot fetch, and the pages show them as images refused);
4. decode and encode: each image's variants, made once per (content hash, settings),
   written through the output (`images.variants`), in child processes under `[images]
   decode_seconds` of CPU each and the stage's `[images] deadline` (`images.worker`);
5. store: the rows, bytes, variants and failures kept for the next build (`images.stored`,
   `images.failures`: a permanent failure is not asked again until `--refresh` or a change
   of what decided it, a passing one backs off);
then the `ImageMap` each page reads (`images.shown`: an image that cannot be used is a
warning naming where it is shown, in every build while it is shown). It must never write
the output but through the `Output` it is given (the build's writer), never stop the build
for an image, and never import the render or the emitter.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

from sitegen.config import Config
from sitegen.fetch.images import Counts
from sitegen.images import stored
from sitegen.images.collect import FindImages, Refs, collect, markdown_sources, own_files
from sitegen.images.download import Fetched, download, settle, to_ask
from sitegen.images.failures import Failure, FailureMemory
from sitegen.images.picture import Dropped, ImageMap
from sitegen.images.settings import ImageSettings, read_settings
from sitegen.images.shown import Known, entries, left_for_later, origin
from sitegen.images.variants import Made, Output, finish_variants, start_variants
from sitegen.model.views import Site
from sitegen.store import Store
from sitegen.urls import service_url

log = logging.getLogger("sitegen.images")

@dataclass(slots=True)
class ImageStats:
    """What the stage did, for the build summary and `--report` (`images` there)."""

    images: int = 0
    processed: int = 0
    failed: int = 0
    counts: Counts = field(default_factory=Counts)

    def to_report(self) -> dict[str, int]:
        """The `images` object of the JSON report."""
        return {"images": self.images, "processed": self.processed, "failed": self.failed,
                "requests": self.counts.requests, "downloaded": self.counts.downloaded}


def prepare_images(config: Config, site: Site, store: Store, output: Output, *,
                   find: FindImages, fetch: bool, refresh: bool = False,
                   transport: httpx.AsyncBaseTransport | None = None
                   ) -> tuple[ImageMap, ImageStats]:
    """The build's images (see the module docstring)."""
    settings, stats = read_settings(config), ImageStats()
    if not settings.enabled:
        own = {h: find(s) for h, s in markdown_sources(site, articles=False).items()}
        return ImageMap(service=settings.service, local=own_files(site, own)), stats
    started = time.monotonic()  # (the stage's deadlines: downloads, then everything)
    clock = Clock(started + min(settings.budget, settings.deadline),
                  started + settings.deadline)
    refs = body_refs(site, store, find)
    found = collect(site, refs)
    written, wanted = _service_urls(found.where, settings)
    rows = stored.load_rows(store)
    memory = FailureMemory(store, settings.failure_key, time.time())
    failures = memory.recall(u for u in wanted if u not in rows)
    asked = to_ask(wanted, rows, failures, refresh=refresh)
    fetched = download(settings, asked, clock.fetching, transport=transport,
                       counts=stats.counts) if fetch and asked else Fetched()
    failures = settle(failures, fetched, rows, memory)
    known = {**rows, **fetched.rows}
    digests = _digests(wanted, known, failures)
    pending = start_variants(set(digests.values()), fetched.sources, store, output, settings)
    lost = sorted(u for u, d in digests.items() if d in pending.made.unverified)
    if lost and fetch:  # (stored with another key, or changed: fetched again)
        again = download(settings, lost, clock.fetching, transport=transport,
                         counts=stats.counts)
        failures = settle(failures, again, {u: r for u, r in rows.items() if u not in lost},
                          memory)
        fetched.add(again)
        known.update(again.rows)
        digests = _digests(wanted, known, failures)
    made = finish_variants(pending, fetched.sources, store, output, settings, clock.making)
    usable, unverified = _usable(digests, failures, made)
    unfetched = set() if fetch else _unfetched(wanted, known, failures, settings.service)
    unverified |= unfetched
    later = _left_for_later(settings, fetched.left(),
                            _unmade(usable, digests, made.unmade))
    shown, stats.failed = entries(written, found.where, Known(
        digests, failures, made.pictures, memory.now, unverified, settings.service,
        later=later))
    _not_verified(len(unverified) - len(unfetched))
    _not_fetched(len(unfetched))
    stats.images = len(found.where)
    stats.processed = len(shown) - sum(isinstance(e, Dropped) for e in shown.values())
    _save_sources(store, fetched, made, usable, usable if fetch else set(rows) | usable)
    _save_failures(memory, failures, wanted, fetched, known)
    bodies = {h: urls for h, urls in found.bodies.items() if urls}
    return ImageMap(shown, bodies, settings.service, own_files(site, refs)), stats


def _service_urls(where: Iterable[str], settings: ImageSettings
                  ) -> tuple[dict[str, str | None], set[str]]:
    """Each URL as written → as the service serves it (None: not one it may fetch), and the
    set of those it may fetch."""
    written = {url: service_url(url, settings.service) for url in where}
    return written, {u for u in written.values() if u is not None}


def _usable(digests: Mapping[str, str], failures: dict[str, Failure], made: Made
            ) -> tuple[set[str], set[str]]:
    """The URLs shown whose images can be used (bytes that would not decode, `made.refused`,
    never will: noted in *failures*), and those of them whose stored data did not verify."""
    for url, digest in digests.items():
        if digest in made.refused:
            failures[url] = Failure(*made.refused[digest])
    usable = {u for u in digests if u not in failures}
    return usable, {u for u in usable if digests[u] in made.unverified}


def _save_sources(store: Store, fetched: Fetched, made: Made, usable: set[str],
                  keep: set[str]) -> None:
    """Keep the rows of the *usable* URLs fetched and the bytes that decoded; the stored
    rows of URLs not in *keep* go (an offline build keeps every stored row)."""
    stored.save_sources(store, {u: r for u, r in fetched.rows.items() if u in usable},
                        {d: b for d, b in fetched.sources.items() if d not in made.refused},
                        keep)


@dataclass(frozen=True, slots=True)
class Clock:
    """The stage's deadlines (`time.monotonic()`): for downloads (`[images] budget`, within
    the stage's), and for everything (`[images] deadline`)."""

    fetching: float
    making: float


def _digests(wanted: Iterable[str], known: Mapping[str, stored.Row],
             failures: Mapping[str, Failure]) -> dict[str, str]:
    """URL → the sha256 of its bytes, for the URLs shown whose bytes are known, not failed."""
    return {u: known[u][0] for u in wanted if u in known and u not in failures}


def _unmade(usable: Iterable[str], digests: Mapping[str, str], unmade: set[str]) -> set[str]:
    """The URLs of *usable* whose images the deadline left *unmade* (by sha256)."""
    return {u for u in usable if digests[u] in unmade}


def _left_for_later(settings: ImageSettings, unfetched: set[str], unmade: set[str]
                    ) -> set[str]:
    """The stage's one warning for the images its budget left unfetched, and one for those
    its deadline left unmade; both, for `Known.later`."""
    service = origin(settings.service)
    for step, key, seconds, left in (("fetching", "budget", settings.budget, unfetched),
                                     ("making images", "deadline", settings.deadline, unmade)):
        left_for_later(step, key, seconds, len(left),
                       sum(1 for u in left if origin(u) == service))
    return unfetched | unmade


def _not_verified(count: int) -> None:
    """One warning for the images whose stored data does not verify, not fetched again
    (an offline build): the pages show them as images that cannot be used."""
    if count:
        log.warning("%d cached image(s) could not be verified (sealed with another key, or "
                    "changed) and cannot be fetched offline: the pages show them as images "
                    "that cannot be used; build online once to fetch them again", count)


def _unfetched(wanted: Iterable[str], known: Mapping[str, stored.Row],
               failures: Mapping[str, Failure], service: str) -> set[str]:
    """The service's own images (at `[api] url`'s origin) an offline build has no stored
    bytes of (never fetched, or their row in the store did not verify): shown as refused
    images, never linked at the service (whose media URLs are not the site's to hot-link)."""
    origin = urlsplit(service)
    return {u for u in wanted if u not in known and u not in failures
            and urlsplit(u)[:2] == origin[:2]}


def _not_fetched(count: int) -> None:
    """One warning for the service's images an offline build has no bytes of."""
    if count:
        log.warning("%d image(s) of the service were never fetched, or their record in the "
                    "store did not verify, and cannot be fetched offline: the pages show them "
                    "as images that cannot be used; build online once to fetch them", count)


def body_refs(site: Site, store: Store, find: FindImages) -> Refs:
    """The image URLs of every markdown body that may hold one: as stored, else found by
    the render's parse (*find*) and stored; the stored URLs of bodies gone since go."""
    sources = markdown_sources(site)
    refs = stored.load_refs(store, find.key, sources)
    parsed = {h: find(s) for h, s in sources.items() if h not in refs}
    if parsed:
        stored.save_refs(store, find.key, parsed, sources)
    return {**refs, **parsed}


def _save_failures(memory: FailureMemory, failures: Mapping[str, Failure],
                   wanted: Iterable[str], fetched: Fetched, known: Mapping[str, object]
                   ) -> None:
    """Keep the failures of the URLs shown, and the backoff of those not asked again."""
    shown = set(wanted)
    memory.save({u: f for u, f in failures.items() if u in shown},
                (u for u in shown if u not in fetched.results and u not in known))
