"""The images stage of the build: found → fetched once → processed → written → `ImageMap`.

Role: between the model and the render, make every image the site shows its own
(`sitegen.images`): an image URL the store knows is never requested again (unless
`--refresh`); a new one is fetched (`sitegen.fetch.images`, only when the build may fetch)
and its bytes kept in the store by sha256; each image's variants are made once per
(content hash, settings), their list and their files kept in the store (`derived`, kinds
`imageinfo` and `imagevariants`: an empty output, as in CI, encodes nothing again), and
written through the writer (a previous build's intact file is kept unread). An image that
cannot be fetched or decoded is a warning naming where it is shown and its URL, in every
build while it is shown: a permanent failure (a 404, not an image, an SVG, too large...)
is remembered and not asked again until `--refresh` or a change of the limits or of the
code that decided it; a passing one (a timeout, a 5xx) backs off (`sitegen.images.failures`).
Downloads stop at `[images] budget` seconds from the stage's start (one warning). The page
keeps the image's URL when it is absolute, and links a relative one at the service unless it
is known to be unusable there; an image refused for its address (not public) shows its alt
text; an image not fetched at all (offline, past the budget) is linked where it lives
(`ImageMap`). It must never write the output but through the writer, and never stop the
build for an image (any exception while processing one is that image's warning).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import PIL

from sitegen import fileset
from sitegen.config import Config
from sitegen.emit.writer import OutputWriter
from sitegen.fetch.images import Counts, Downloaded, Failed, ImageFetcher
from sitegen.images.collect import collect, markdown_bodies, own_files, parse_key
from sitegen.images.failures import Failure, FailureMemory
from sitegen.images.picture import DROPPED, Dropped, ImageMap, Picture
from sitegen.images.process import ImageRefused, Processed, Settings, process
from sitegen.model.views import Site
from sitegen.store import Store
from sitegen.urls import service_url

log = logging.getLogger("sitegen.images")
INFO_KIND = "imageinfo"
VARIANTS_KIND = "imagevariants"  #: an image's variant files (`sitegen.fileset`), by hash:settings
REFS_KIND = "imagerefs"  #: a markdown body's image URLs, by parser key and body hash


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


def _settings(config: Config) -> Settings:
    section = config.images
    return Settings(tuple(section.widths), tuple(section.formats), section.quality,
                    section.max_pixels)


def _picture(info: Mapping[str, object]) -> Picture:
    files = tuple((str(n), int(w), str(f)) for n, w, f, _ in info["files"])  # type: ignore[attr-defined]
    return Picture(int(info["width"]), int(info["height"]),  # type: ignore[call-overload]
                   str(info["fallback"]), files)


def _info(processed: Processed) -> dict[str, object]:
    return {"width": processed.width, "height": processed.height,
            "fallback": processed.fallback,
            "files": [[v.name, v.width, v.format, hashlib.sha256(v.data).hexdigest()]
                      for v in processed.variants]}


def prepare_images(config: Config, site: Site, store: Store, writer: OutputWriter, *,
                   fetch: bool, refresh: bool = False,
                   transport: httpx.AsyncBaseTransport | None = None
                   ) -> tuple[ImageMap, ImageStats]:
    """The build's images (see the module docstring)."""
    deadline = time.monotonic() + config.images.budget  # (the stage's one deadline)
    stats = ImageStats()
    service = config.api.base_url
    if not config.images.enabled:
        return ImageMap(service=service, local=own_files(site)), stats
    refs_key, with_images = parse_key(), markdown_bodies(site)
    refs = {k.split(":", 1)[1]: tuple(json.loads(v)) for k, v in store.derived(
        REFS_KIND, (f"{refs_key}:{h}" for h in with_images)).items()}
    found = collect(site, refs)
    if found.parsed:  # (and the entries of bodies gone since are dropped)
        store.save_derived(REFS_KIND, {f"{refs_key}:{h}": json.dumps(u).encode()
                                       for h, u in found.parsed.items()},
                           (f"{refs_key}:{h}" for h in with_images))
    written = {url: service_url(url, service) for url in found.where}
    rows = store.image_rows()
    wanted = {u for u in written.values() if u is not None}
    memory = FailureMemory(store, failure_key(config), time.time())
    # the failures of earlier builds: permanent ones, passing ones still waiting
    failures = memory.recall(u for u in wanted if u not in rows)
    missing = sorted(u for u in wanted if refresh or (u not in rows and u not in failures))
    fresh: dict[str, tuple[str, str, str]] = {}
    sources: dict[str, bytes] = {}
    results: dict[str, Downloaded | Failed] = {}
    if fetch and missing:
        fetcher = ImageFetcher(service, config.images.max_bytes, config.images.timeout,
                               config.images.concurrency, transport=transport,
                               counts=stats.counts)
        results = fetcher.fetch_all(missing, deadline)
        fresh, sources = _fetched(results, rows, failures, memory)
        _over_budget(config, missing, results)
    known = {**rows, **fresh}
    settings = _settings(config)
    setting_key = hashlib.sha256(settings.key().encode()).hexdigest()[:12]
    hashes = {known[u][0] for u in wanted if u in known and u not in failures}
    infos = {k.split(":", 1)[0]: json.loads(v) for k, v in store.derived(
        INFO_KIND, (f"{h}:{setting_key}" for h in hashes)).items()}
    pictures, refused, new_infos = _make(hashes, infos, sources, store, writer, settings,
                                         setting_key)
    infos.update(new_infos)
    for url in wanted:  # an image that will not decode never will: remembered as such
        if url not in failures and url in known and known[url][0] in refused:
            failures[url] = Failure(*refused[known[url][0]])
    entries: dict[str, Picture | Dropped] = {}
    for url, absolute in sorted(written.items()):
        failure = failures.get(absolute) if absolute else Failure("it is not an http(s) URL",
                                                                  True)
        digest = known.get(absolute, ("",))[0] if absolute else ""
        if failure is None and digest in pictures:
            entries[url] = pictures[digest]
        elif failure is not None:  # (else not fetched: linked where it lives, `ImageMap`)
            stats.failed += 1
            cut = absolute in results and getattr(results[absolute], "cut", False)
            entry = None if cut else unusable(  # (those the budget cut: one warning)
                url, absolute, found.where[url], _reason(failure, memory.now),
                failure.permanent, nonpublic=failure.nonpublic)
            if entry is not None:
                entries[url] = entry
    stats.images, stats.processed = len(found.where), len(entries) - sum(
        1 for e in entries.values() if isinstance(e, Dropped))
    keep_sources = {u for u in wanted if u in known and u not in failures}
    store.save_images({u: r for u, r in fresh.items() if u in keep_sources},
                      {d: b for d, b in sources.items() if d not in refused},
                      keep_sources if fetch else set(rows) | keep_sources)
    store.save_derived(INFO_KIND, {f"{d}:{setting_key}": json.dumps(i).encode()
                                   for d, i in new_infos.items()},
                       (f"{d}:{setting_key}" for d in infos))
    memory.save({u: f for u, f in failures.items() if u in wanted},
                (u for u in wanted if u not in results and u not in known))
    bodies = {h: urls for h, urls in found.bodies.items() if urls}
    return ImageMap(entries, bodies, service, own_files(site)), stats


def _fetched(results: Mapping[str, Downloaded | Failed], stored: Mapping[str, object],
             failures: dict[str, Failure], memory: FailureMemory
             ) -> tuple[dict[str, tuple[str, str, str]], dict[str, bytes]]:
    """The rows (url → sha256, ETag, Last-Modified) and bytes (by sha256) of the images
    downloaded; each failure replaces what *failures* said of its URL (a passing one backs
    off longer: `FailureMemory.passing`), but a passing one of a URL *stored* already (a
    `--refresh`) leaves the stored image standing."""
    rows: dict[str, tuple[str, str, str]] = {}
    sources: dict[str, bytes] = {}
    for url, result in results.items():
        failures.pop(url, None)
        if isinstance(result, Failed):
            if result.permanent:
                failures[url] = Failure(result.reason, True, result.nonpublic)
            elif url not in stored:
                failures[url] = memory.passing(url, result.reason)
            continue
        digest = hashlib.sha256(result.data).hexdigest()
        rows[url] = (digest, result.etag, result.modified)
        sources[digest] = result.data
    return rows, sources


def _over_budget(config: Config, asked: list[str],
                 results: Mapping[str, Downloaded | Failed]) -> None:
    """One warning for the images the stage's budget left unfetched (none: nothing)."""
    left = sum(1 for u in asked if u not in results or getattr(results[u], "cut", False))
    if left:
        log.warning("the images stage stopped fetching when its budget of %g s ran out "
                    "([images] budget): %d image(s) not fetched are linked where they live "
                    "for now and fetched by a later build; raise [images] budget to wait "
                    "longer", config.images.budget, left)


def _reason(failure: Failure, now: float) -> str:
    """The warning's reason: a passing failure says when it is asked again."""
    if failure.permanent or failure.until <= now:
        return failure.reason
    hours = (failure.until - now) / 3600
    wait = f"{max(1, round(hours))} h" if hours < 36 else f"{round(hours / 24)} days"
    return f"{failure.reason} (asked again in {wait}, or now with --refresh)"


def unusable(url: str, absolute: str | None, where: str, reason: str,
             permanent: bool, *, nonpublic: bool = False) -> Dropped | None:
    """Warn that the image *url* cannot be used; `DROPPED` when the page shows its alt text
    (a relative URL known to be unusable there, no http(s) URL, or an address that is not
    public: a link would have visitors' browsers ask their own network), None when it links
    to it where it is (an absolute URL, or one that may answer next time)."""
    absolute_written = url.lower().startswith(("http://", "https://", "//"))
    linked = absolute is not None and (absolute_written or not permanent) and not nonpublic
    shown = ("the page shows its alt text instead" if not linked else
             "the page links to it where it is" if absolute_written else
             f"the page links to it at {absolute}")
    log.warning("the image %s shown by %s cannot be used: %s; %s", url, where, reason, shown)
    return None if linked else DROPPED


def failure_key(config: Config) -> str:
    """What decides whether a failed image would fail again besides its URL: the limits
    and the service (`[images] max_bytes`, `max_pixels`, `[api] url`), the code that
    fetches and checks, and Pillow's version; part of the key a failure is kept under."""
    digest = hashlib.sha256(f"{config.images.max_bytes}|{config.images.max_pixels}|"
                            f"{config.api.base_url}|{PIL.__version__}".encode())
    package = Path(__file__).resolve().parent.parent
    for name in ("fetch/images.py", "images/process.py"):
        digest.update((package / name).read_bytes())
    return digest.hexdigest()[:12]


def _make(hashes: set[str], infos: dict[str, dict[str, object]], sources: dict[str, bytes],
          store: Store, writer: OutputWriter, settings: Settings, setting_key: str,
          ) -> tuple[dict[str, Picture], dict[str, tuple[str, bool]], dict[str, dict[str, object]]]:
    """Each image's variants in the output: kept when intact, else written from the store
    (`derived`, kind `imagevariants`), else made from its source (and stored)."""
    pictures: dict[str, Picture] = {}
    todo: list[str] = []
    for digest in sorted(hashes):
        info = infos.get(digest)
        files = [(f"media/{n}", sha) for n, _, _, sha in info["files"]  # type: ignore[attr-defined]
                 ] if info is not None else []
        if info is not None and all(writer.recorded(path) == sha and writer.intact(path)
                                    for path, sha in files):
            for path, _ in files:
                writer.keep(path)
            pictures[digest] = _picture(info)
        else:
            todo.append(digest)
    stored = store.derived(VARIANTS_KIND, (f"{d}:{setting_key}" for d in todo if d in infos))
    for key, blob in stored.items():
        digest = key.split(":", 1)[0]
        variants = fileset.unpack(blob)
        if variants is not None and sorted(variants) == sorted(
                n for n, _, _, _ in infos[digest]["files"]):  # type: ignore[attr-defined]
            for name, data in sorted(variants.items()):
                writer.write(f"media/{name}", data)
            pictures[digest] = _picture(infos[digest])
            todo.remove(digest)
    missing = [d for d in todo if d not in sources]
    sources = {**sources, **store.derived("image", missing)}
    refused: dict[str, tuple[str, bool]] = {}  #: digest → (reason, permanent)
    made: dict[str, dict[str, object]] = {}
    blobs: dict[str, bytes] = {}
    work = [d for d in todo if d in sources]

    def one(digest: str) -> tuple[str, Processed | tuple[str, bool]]:
        try:
            return digest, process(sources[digest], settings)
        except ImageRefused as error:
            return digest, (str(error), True)
        except MemoryError:  # (this machine's trouble, not the image's: not remembered)
            return digest, ("it cannot be processed: out of memory", False)
        except Exception as error:  # noqa: BLE001 - an image's trouble is a warning, never the build's
            return digest, (f"it cannot be processed ({type(error).__name__}: {error})", True)

    with ThreadPoolExecutor(max_workers=4) as pool:
        for digest, result in pool.map(one, work):
            if isinstance(result, tuple):
                refused[digest] = result
                continue
            for variant in result.variants:
                writer.write(f"media/{variant.name}", variant.data)
            made[digest] = _info(result)
            pictures[digest] = _picture(made[digest])
            blobs[f"{digest}:{setting_key}"] = fileset.pack(
                {variant.name: variant.data for variant in result.variants})
    store.save_derived(VARIANTS_KIND, blobs, (f"{d}:{setting_key}" for d in pictures))
    return pictures, refused, made
