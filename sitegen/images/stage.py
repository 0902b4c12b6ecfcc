"""The images stage of the build: found → fetched once → processed → written → `ImageMap`.

Role: between the model and the render, make every image the site shows its own
(`sitegen.images`): an image URL the store knows is never requested again (unless
`--refresh`); a new one is fetched (`sitegen.fetch.images`, only when the build may fetch)
and its bytes kept in the store by sha256; each image's variants are made once per
(content hash, settings), their list kept in the store (`derived`, kind `imageinfo`), and
written through the writer (a previous build's intact file is kept unread). An image that
cannot be fetched or decoded is a warning naming where it is shown and its URL; the page
keeps that URL when it is absolute http(s), else shows the alt text. It must never write
the output but through the writer, and never stop the build for an image.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import httpx

from sitegen.config import Config
from sitegen.emit.writer import OutputWriter
from sitegen.fetch.images import Counts, Downloaded, Failed, ImageFetcher
from sitegen.images.collect import collect, markdown_bodies, parse_key, resolve
from sitegen.images.picture import DROPPED, Dropped, ImageMap, Picture
from sitegen.images.process import ImageRefused, Processed, Settings, process
from sitegen.model.views import Site
from sitegen.store import Store

log = logging.getLogger("sitegen.images")
INFO_KIND = "imageinfo"
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
    stats = ImageStats()
    if not config.images.enabled:
        return ImageMap(), stats
    refs_key, with_images = parse_key(), markdown_bodies(site)
    refs = {k.split(":", 1)[1]: tuple(json.loads(v)) for k, v in store.derived(
        REFS_KIND, (f"{refs_key}:{h}" for h in with_images)).items()}
    found = collect(site, refs)
    if found.parsed:  # (and the entries of bodies gone since are dropped)
        store.save_derived(REFS_KIND, {f"{refs_key}:{h}": json.dumps(u).encode()
                                       for h, u in found.parsed.items()},
                           (f"{refs_key}:{h}" for h in with_images))
    service = config.api.base_url
    written = {url: resolve(url, service) for url in found.where}
    rows = store.image_rows()
    wanted = {u for u in written.values() if u is not None}
    missing = sorted(u for u in wanted if refresh or u not in rows)
    fresh: dict[str, tuple[str, str, str]] = {}
    sources: dict[str, bytes] = {}
    failures: dict[str, str] = {}
    if fetch and missing:
        fetcher = ImageFetcher(service, config.images.max_bytes, config.images.timeout,
                               config.images.concurrency, transport=transport,
                               counts=stats.counts)
        for url, result in fetcher.fetch_all(missing).items():
            if isinstance(result, Failed):
                failures[url] = result.reason
                continue
            assert isinstance(result, Downloaded)
            digest = hashlib.sha256(result.data).hexdigest()
            fresh[url] = (digest, result.etag, result.modified)
            sources[digest] = result.data
    known = {**rows, **fresh}
    settings = _settings(config)
    setting_key = hashlib.sha256(settings.key().encode()).hexdigest()[:12]
    hashes = {known[u][0] for u in wanted if u in known and u not in failures}
    infos = {k.split(":", 1)[0]: json.loads(v) for k, v in store.derived(
        INFO_KIND, (f"{h}:{setting_key}" for h in hashes)).items()}
    pictures, refused, new_infos = _make(hashes, infos, sources, store, writer, settings)
    for digest, info in new_infos.items():
        infos[digest] = info
    entries: dict[str, Picture | Dropped] = {}
    for url, absolute in sorted(written.items()):
        reason = failures.get(absolute or "") if absolute else "it is not an http(s) URL"
        digest = known.get(absolute or "", ("",))[0] if absolute else ""
        if reason is None and digest in refused:
            reason = refused[digest]
        if reason is None and digest in pictures:
            entries[url] = pictures[digest]
            continue
        if reason is None:  # not fetched in this build (offline, or a given workspace)
            continue
        stats.failed += 1
        keep = url.lower().startswith(("http://", "https://"))
        log.warning("the image %s shown by %s cannot be used: %s; %s", url, found.where[url],
                    reason, "the page links to it where it is" if keep else
                    "the page shows its alt text instead")
        if not keep:
            entries[url] = DROPPED
    stats.images, stats.processed = len(found.where), len(entries) - sum(
        1 for e in entries.values() if isinstance(e, Dropped))
    keep_sources = {u for u in wanted if u in known and known[u][0] not in refused}
    store.save_images({u: r for u, r in fresh.items() if r[0] not in refused},
                      {d: b for d, b in sources.items() if d not in refused},
                      keep_sources if fetch else set(rows) | keep_sources)
    store.save_derived(INFO_KIND, {f"{d}:{setting_key}": json.dumps(i).encode()
                                   for d, i in new_infos.items()},
                       (f"{d}:{setting_key}" for d in infos))
    bodies = {h: urls for h, urls in found.bodies.items() if urls}
    return ImageMap(entries, bodies), stats


def _make(hashes: set[str], infos: dict[str, dict[str, object]], sources: dict[str, bytes],
          store: Store, writer: OutputWriter, settings: Settings
          ) -> tuple[dict[str, Picture], dict[str, str], dict[str, dict[str, object]]]:
    """Each image's variants in the output: kept when intact, else made from its source."""
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
    missing = [d for d in todo if d not in sources]
    sources = {**sources, **store.derived("image", missing)}
    refused: dict[str, str] = {}
    made: dict[str, dict[str, object]] = {}
    work = [d for d in todo if d in sources]

    def one(digest: str) -> tuple[str, Processed | str]:
        try:
            return digest, process(sources[digest], settings)
        except ImageRefused as error:
            return digest, str(error)

    with ThreadPoolExecutor(max_workers=4) as pool:
        for digest, result in pool.map(one, work):
            if isinstance(result, str):
                refused[digest] = result
                continue
            for variant in result.variants:
                writer.write(f"media/{variant.name}", variant.data)
            made[digest] = _info(result)
            pictures[digest] = _picture(made[digest])
    return pictures, refused, made
