"""What the images stage keeps in the store, one pair of functions per kind of data.

Role: load and save, through `Store`'s public functions only, the images stage's data:
- `refs`: a markdown body's image URLs (`derived` kind `imagerefs`, by `<finder key>:<body
  hash>`), so a body is parsed for its images once;
- `sources`: each image URL fetched (the `images` table: sha256, ETag, Last-Modified) and
  its bytes (`derived` kind `image`, by sha256);
- `infos`: each image's variants, their names, widths, formats and sha256s (kind
  `imageinfo`, by `<sha256>:<variants key>`);
- `variant files`: those variants' bytes, as one `sitegen.fileset` blob (kind
  `imagevariants`, same key), so an empty output (as in CI) encodes nothing again;
- failures and backoffs: `sitegen.images.failures` (kinds `imagefailed`, `imagewait`).
Each `save_*` keeps the rows named and drops the other rows of its kind. A stored value of
another shape is absent (made again). It must never decide anything about an image.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sitegen import fileset
from sitegen.images.collect import Refs
from sitegen.images.picture import Picture
from sitegen.store import Store

REFS_KIND = "imagerefs"  #: a markdown body's image URLs, by finder key and body hash
SOURCE_KIND = "image"  #: an image's bytes as fetched, by sha256
INFO_KIND = "imageinfo"  #: an image's variants (names, sizes, sha256), by hash:settings
VARIANTS_KIND = "imagevariants"  #: an image's variant files (`sitegen.fileset`), by hash:settings

Row = tuple[str, str, str]  #: an image URL's (sha256 of its bytes, ETag, Last-Modified)


@dataclass(frozen=True, slots=True)
class Info:
    """What is known of one image's variants: the `Picture` and each file's sha256."""

    picture: Picture
    hashes: tuple[str, ...]  #: the sha256 of each of `picture.files`, in that order

    def paths(self) -> list[tuple[str, str]]:
        """(output path, sha256) of each variant file."""
        return [(f"media/{name}", sha) for (name, _, _), sha in
                zip(self.picture.files, self.hashes, strict=True)]


# --- refs ----------------------------------------------------------------------------------


def load_refs(store: Store, key: str, hashes: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The stored image URLs of the markdown bodies *hashes* (those found under *key*)."""
    found: dict[str, tuple[str, ...]] = {}
    for name, value in store.derived(REFS_KIND, (f"{key}:{h}" for h in hashes)).items():
        urls = _json(value)
        if isinstance(urls, list) and all(isinstance(u, str) for u in urls):
            found[name.split(":", 1)[1]] = tuple(urls)
    return found


def save_refs(store: Store, key: str, parsed: Refs, keep: Iterable[str]) -> None:
    """Add the image URLs of the bodies *parsed*; keep only those of the bodies *keep*."""
    store.save_derived(REFS_KIND, {f"{key}:{h}": json.dumps(list(u)).encode()
                                   for h, u in parsed.items()}, (f"{key}:{h}" for h in keep))


# --- sources ------------------------------------------------------------------------------


def load_rows(store: Store) -> dict[str, Row]:
    """Every image URL fetched by an earlier build → its row."""
    return store.image_rows()


def load_sources(store: Store, digests: Iterable[str]) -> dict[str, bytes]:
    """The stored bytes of the images *digests* (sha256)."""
    return store.derived(SOURCE_KIND, digests)


def save_sources(store: Store, rows: Mapping[str, Row], sources: Mapping[str, bytes],
                 keep: Iterable[str]) -> None:
    """Add URL *rows* and image bytes; keep only the URLs *keep* and the bytes they name."""
    store.save_images(rows, sources, keep)


# --- infos --------------------------------------------------------------------------------


def load_infos(store: Store, key: str, digests: Iterable[str]) -> dict[str, Info]:
    """The stored variants of the images *digests* made with the settings *key*."""
    found: dict[str, Info] = {}
    for name, value in store.derived(INFO_KIND, (f"{d}:{key}" for d in digests)).items():
        info = _info(_json(value))
        if info is not None:
            found[name.split(":", 1)[0]] = info
    return found


def save_infos(store: Store, key: str, made: Mapping[str, Info], keep: Iterable[str]) -> None:
    """Add the variants *made*; keep only those of the images *keep* (by sha256)."""
    store.save_derived(INFO_KIND, {f"{d}:{key}": _dump_info(i) for d, i in made.items()},
                       (f"{d}:{key}" for d in keep))


# --- variant files ------------------------------------------------------------------------


def load_variant_files(store: Store, key: str, digests: Iterable[str]
                       ) -> dict[str, dict[str, bytes]]:
    """The stored variant files (name → bytes) of the images *digests*."""
    found: dict[str, dict[str, bytes]] = {}
    for name, blob in store.derived(VARIANTS_KIND, (f"{d}:{key}" for d in digests)).items():
        files = fileset.unpack(blob)
        if files is not None:
            found[name.split(":", 1)[0]] = files
    return found


def save_variant_files(store: Store, key: str, made: Mapping[str, Mapping[str, bytes]],
                       keep: Iterable[str]) -> None:
    """Add the variant files *made* (by image sha256); keep only those of *keep*."""
    store.save_derived(VARIANTS_KIND, {f"{d}:{key}": fileset.pack(dict(files))
                                       for d, files in made.items()},
                       (f"{d}:{key}" for d in keep))


# --- shapes -------------------------------------------------------------------------------


def _json(value: bytes) -> object:
    try:
        return json.loads(value)
    except ValueError:
        return None


def _info(data: object) -> Info | None:
    """An `Info` from its stored JSON; None for any other shape."""
    try:
        files = data["files"]  # type: ignore[index]
        picture = Picture(int(data["width"]), int(data["height"]),  # type: ignore[index]
                          str(data["fallback"]),  # type: ignore[index]
                          tuple((str(n), int(w), str(f)) for n, w, f, _ in files))
        return Info(picture, tuple(str(s) for _, _, _, s in files))
    except (TypeError, ValueError, KeyError):
        return None


def _dump_info(info: Info) -> bytes:
    picture = info.picture
    return json.dumps({"width": picture.width, "height": picture.height,
                       "fallback": picture.fallback,
                       "files": [[n, w, f, s] for (n, w, f), s in
                                 zip(picture.files, info.hashes, strict=True)]}).encode()
