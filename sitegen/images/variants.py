"""Decode and encode: each image's variants in the output, made once per (image, settings).

Role: for each image the site shows (by the sha256 of its bytes), name its variant files
to the output: kept when the previous build's files are intact (nothing read), else written
from the store (`imagevariants`), else made from its bytes (`sitegen.images.process`, four
at a time) and stored. Bytes that will not decode are refused (`Made.refused`: the reason,
and whether it is for good); any exception while processing one image is that image's
refusal, never the build's failure. It must never fetch, never write the output but
through the `Output` it is given, and never warn (the stage names the image's URL).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

from sitegen.images import stored
from sitegen.images.picture import Picture
from sitegen.images.process import ImageRefused, Processed, process
from sitegen.images.settings import ImageSettings
from sitegen.store import Store

WORKERS = 4  #: images encoded at once (Pillow's encoders release the GIL)


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


def make_variants(digests: set[str], fresh: Mapping[str, bytes], store: Store,
                  output: Output, settings: ImageSettings) -> Made:
    """The variants of the images *digests* in *output*; *fresh* holds the bytes fetched by
    this build (the others' are read from the store when they must be encoded)."""
    key = settings.variants_key
    infos = stored.load_infos(store, key, digests)
    made = Made()
    todo = _keep_intact(sorted(digests), infos, output, made)
    todo = _write_stored(todo, infos, store, output, settings, made)
    sources = {**fresh, **stored.load_sources(store, [d for d in todo if d not in fresh])}
    new = _encode([d for d in todo if d in sources], sources, output, settings, made)
    stored.save_variant_files(store, key, {d: files for d, (_, files) in new.items()},
                              made.pictures)
    stored.save_infos(store, key, {d: info for d, (info, _) in new.items()},
                      set(infos) | set(new))
    return made


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
            settings: ImageSettings, made: Made
            ) -> dict[str, tuple[stored.Info, dict[str, bytes]]]:
    """Decode and encode each image of *digests*, its files written; (info, files) of each
    made, by sha256."""
    new: dict[str, tuple[stored.Info, dict[str, bytes]]] = {}

    def one(digest: str) -> tuple[str, Processed | tuple[str, bool]]:
        return digest, _process(sources[digest], settings)

    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        for digest, result in pool.map(one, digests):
            if isinstance(result, tuple):
                made.refused[digest] = result
                continue
            for variant in result.variants:
                output.write(f"media/{variant.name}", variant.data)
            info = _info(result)
            made.pictures[digest] = info.picture
            new[digest] = info, {v.name: v.data for v in result.variants}
    return new


def _process(data: bytes, settings: ImageSettings) -> Processed | tuple[str, bool]:
    """The image made of *data*, or why not (the reason, whether it is for good)."""
    try:
        return process(data, settings.variants)
    except ImageRefused as error:
        return str(error), True
    except MemoryError:  # (this machine's trouble, not the image's: not remembered)
        return "it cannot be processed: out of memory", False
    except Exception as error:  # noqa: BLE001 - an image's trouble is a warning, never the build's
        return f"it cannot be processed ({type(error).__name__}: {error})", True


def _info(processed: Processed) -> stored.Info:
    picture = Picture(processed.width, processed.height, processed.fallback,
                      tuple((v.name, v.width, v.format) for v in processed.variants))
    return stored.Info(picture, tuple(hashlib.sha256(v.data).hexdigest()
                                      for v in processed.variants))
