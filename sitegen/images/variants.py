"""Decode and encode: each image's variants in the output, made once per (image, settings).

Role: for each image the site shows (by the sha256 of its bytes), name its variant files
to the output: kept when the previous build's files are intact (nothing read), else written
from the store (`imagevariants`), else made from its bytes in child processes under the
stage's deadlines (`sitegen.images.worker`: CPU seconds per image, the stage's end) and
stored. Bytes that will not decode, or not in time, are refused (`Made.refused`: the reason,
and whether it is for good); the images the stage's deadline left unmade (`Made.unmade`)
and those whose stored data no longer verifies and whose bytes this build does not have
(`Made.unverified`: sealed with another key, or changed) are told apart, never refused.
Any exception while processing one image is that image's refusal, never the build's
failure. It must never fetch, never write the output but through the `Output` it is given,
and never warn (the stage names the image's URL).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from sitegen.cores import core_count
from sitegen.images import stored
from sitegen.images.picture import Picture
from sitegen.images.process import Processed
from sitegen.images.settings import ImageSettings
from sitegen.images.worker import Limits, process_all
from sitegen.store import Store

WORKERS = 4  #: images made at once, at most (one child process each, one per core)


class Output(Protocol):
    """What this stage needs of the build's output (`sitegen.emit.writer.OutputWriter`)."""

    def recorded(self, path: str) -> str | None:
        """The sha256 the last build recorded for *path* (None: none)."""
        ...

    def intact(self, path: str) -> bool:
        """Whether the previous build's file *path* is as it was left."""
        ...

    def keep(self, path: str) -> object:
        """Carry the previous build's file *path* into the new output."""
        ...

    def write(self, path: str, data: bytes) -> object:
        """Put *data* at *path* in the new output."""
        ...


@dataclass(slots=True)
class Made:
    """What the stage made of each image (by sha256)."""

    pictures: dict[str, Picture] = field(default_factory=dict)
    #: Images whose bytes will not do: (the reason, whether asking again would not help).
    refused: dict[str, tuple[str, bool]] = field(default_factory=dict)
    #: Images the stage's deadline left unmade (their bytes are kept: a later build).
    unmade: set[str] = field(default_factory=set)
    #: Images with nothing usable stored (nothing verifies) and no bytes in this build.
    unverified: set[str] = field(default_factory=set)


@dataclass(slots=True)
class Pending:
    """What is left after the stored data was used: the images to make from their bytes."""

    infos: dict[str, stored.Info]
    made: Made
    todo: list[str]  #: by sha256, sorted
    sources: dict[str, bytes]  #: the bytes of those of *todo* this build has


def start_variants(digests: set[str], fresh: Mapping[str, bytes], store: Store,
                   output: Output, settings: ImageSettings) -> Pending:
    """Keep or write the stored variants of the images *digests*; *fresh* holds the bytes
    fetched by this build (the others' are read from the store when they must be made).
    `Pending.made.unverified`: those left with no bytes (the stage may fetch them again)."""
    infos = stored.load_infos(store, settings.variants_key, digests)
    made = Made()
    todo = _keep_intact(sorted(digests), infos, output, made)
    todo = _write_stored(todo, infos, store, output, settings, made)
    sources = {d: fresh[d] for d in todo if d in fresh}
    sources.update(stored.load_sources(store, [d for d in todo if d not in fresh]))
    made.unverified = {d for d in todo if d not in sources}
    return Pending(infos, made, todo, sources)


def finish_variants(pending: Pending, more: Mapping[str, bytes], store: Store,
                    output: Output, settings: ImageSettings, until: float) -> Made:
    """Make the images left (with *more* bytes fetched since, by sha256) within the
    stage's deadline *until* (`time.monotonic()`), and store what was made."""
    made, key = pending.made, settings.variants_key
    sources = {**pending.sources, **more}
    made.unverified = {d for d in made.unverified if d not in sources}
    todo = sorted({d for d in pending.todo if d in sources} | {
        d for d in more if d not in made.pictures})
    new = _encode(todo, sources, output,
                  Limits(settings.decode_seconds, until, min(WORKERS, core_count())),
                  settings, made)
    kept = made.unverified | made.unmade  # (their stored rows may verify under another key)
    stored.save_variant_files(store, key, {d: files for d, (_, files) in new.items()},
                              set(made.pictures) | kept)
    stored.save_infos(store, key, {d: info for d, (info, _) in new.items()},
                      set(pending.infos) | set(new) | kept)
    return made


def make_variants(digests: set[str], fresh: Mapping[str, bytes], store: Store,
                  output: Output, settings: ImageSettings, until: float) -> Made:
    """`start_variants` and `finish_variants` with nothing fetched in between."""
    return finish_variants(start_variants(digests, fresh, store, output, settings), {},
                           store, output, settings, until)


def _keep_intact(digests: list[str], infos: Mapping[str, stored.Info], output: Output,
                 made: Made) -> list[str]:
    """Keep the images whose files are the previous build's, intact; the others are left."""
    left: list[str] = []
    for digest in digests:
        info = infos.get(digest)
        paths = info.paths() if info is not None else []
        if info is None or not all(output.recorded(p) == sha and output.intact(p)
                                   for p, sha in paths):
            left.append(digest)
            continue
        for path, _ in paths:
            output.keep(path)
        made.pictures[digest] = info.picture
    return left


def _write_stored(digests: list[str], infos: Mapping[str, stored.Info], store: Store,
                  output: Output, settings: ImageSettings, made: Made) -> list[str]:
    """Write the images whose variant files the store holds, whole; the others are left."""
    files = stored.load_variant_files(store, settings.variants_key,
                                      [d for d in digests if d in infos])
    left: list[str] = []
    for digest in digests:
        variants = files.get(digest)
        if variants is None or sorted(variants) != sorted(
                name for name, _, _ in infos[digest].picture.files):
            left.append(digest)
            continue
        for name, data in sorted(variants.items()):
            output.write(f"media/{name}", data)
        made.pictures[digest] = infos[digest].picture
    return left


def _encode(digests: list[str], sources: Mapping[str, bytes], output: Output,
            limits: Limits, settings: ImageSettings, made: Made
            ) -> dict[str, tuple[stored.Info, dict[str, bytes]]]:
    """Decode and encode each image of *digests* within *limits*, its files written;
    (info, files) of each made, by sha256."""
    new: dict[str, tuple[stored.Info, dict[str, bytes]]] = {}
    results = process_all({d: sources[d] for d in digests}, settings.variants, limits) \
        if digests else {}
    for digest in digests:
        result = results.get(digest)
        if result is None:
            made.unmade.add(digest)
        elif isinstance(result, tuple):
            made.refused[digest] = result
        else:
            for variant in result.variants:
                output.write(f"media/{variant.name}", variant.data)
            info = _info(result)
            made.pictures[digest] = info.picture
            new[digest] = info, {v.name: v.data for v in result.variants}
    return new


def _info(processed: Processed) -> stored.Info:
    picture = Picture(processed.width, processed.height, processed.fallback,
                      tuple((v.name, v.width, v.format) for v in processed.variants))
    return stored.Info(picture, tuple(hashlib.sha256(v.data).hexdigest()
                                      for v in processed.variants))
