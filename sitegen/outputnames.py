"""The output folder's fixed names: its manifest, and the folders only sitegen writes.

Role: the names every layer agrees on about the output's layout, in the base so the
configuration can check a page path against them (`config`), the folder check can recognise
an output sitegen built by its manifest (`folders`), and the emitter, the headers and the
deploy use the same ones. Content-hashed assets (`render.assets`) go to `static/`, the images
made the site's own (`images.stage`) to `media/`, Pagefind's bundles (`emit.search`) to
`pagefind/`; and the rule every output path keeps (`path_problem`: relative, no `..`, no control
character, not the manifest's name), so the theme's assets are checked by the same rule as the
writer's files. This module must never import anything of sitegen nor touch the filesystem.
"""

from __future__ import annotations

import re

#: The manifest of what a build wrote, at the output's top (`emit.manifest`).
MANIFEST_NAME = ".sitegen-manifest.json"
#: Output folder of the content-hashed assets (`render.assets`): cached for a year.
HASHED_FOLDER = "static/"
#: Output folder of the images made the site's own, `<hash>-<width>.<ext>` (`images.stage`).
MEDIA_FOLDER = "media/"
#: Pagefind's bundles (`[search]`, one per shard: `pagefind/<shard>/`), whose folders of
#: files named by their hash are cached for a year (`emit.headers`).
SEARCH_FOLDER = "pagefind/"
#: Every output folder where only sitegen writes (`emit.ownfiles` refuses an owner's file
#: in them): files named by a hash of their bytes, and the search bundles.
HASHED_FOLDERS = (HASHED_FOLDER, MEDIA_FOLDER, SEARCH_FOLDER)

_MAX_SEGMENT_BYTES = 255
_CONTROL = re.compile("[\x00-\x1f]")
#: Paths that are plainly safe: ASCII segments of 1-63 URL-safe characters that do not
#: start with a dot (so never "", "." or ".."); anything else gets the full check.
_SEGMENT = r"[A-Za-z0-9_~-][A-Za-z0-9._~-]{0,62}"
_PLAIN_PATH = re.compile(f"{_SEGMENT}(?:/{_SEGMENT})*")


def path_problem(path: str) -> str | None:
    """Why *path* may not be written inside the output, or None when it is safe."""
    if isinstance(path, str) and _PLAIN_PATH.fullmatch(path):
        return None  # (the manifest's own name starts with a dot)
    return _full_problem(path)


def _full_problem(path: str) -> str | None:
    if not isinstance(path, str) or not path:
        return "it is empty"
    if "\x00" in path:
        return "it contains a NUL character"
    if _CONTROL.search(path):
        return "it contains a control character"
    if "\\" in path:
        return "it contains a backslash"
    if path.startswith("/"):
        return "it is absolute"
    for segment in path.split("/"):
        if segment in ("", ".", ".."):
            return "it has an empty, '.' or '..' segment"
        if len(segment.encode("utf-8", "surrogatepass")) > _MAX_SEGMENT_BYTES:
            return "a segment is longer than 255 bytes"
    if path == MANIFEST_NAME:
        return "the name is reserved for sitegen's manifest"
    return None
