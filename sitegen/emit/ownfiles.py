"""The site owner's own files: `static/` beside site.toml, copied into the output root as is.

Role: read every file of `static/` (same relative path, same bytes: never renamed or hashed,
unlike a theme's static files), leaving out hidden files and folders (`.git`, `.DS_Store`)
and editor backups, except `.well-known/`; let a `robots.txt` of the owner's replace
sitegen's (`REPLACEABLE`: which crawlers a site admits is the owner's call); and refuse (a
configuration error naming both) any other file that would land where sitegen writes a page
or a file of its own, or on a folder of one, or in a folder of files named by their hash
(`static/`, `media/`, Pagefind's: `outputnames.HASHED_FOLDERS`), which hosts cache for a year.
A symbolic link out of `static/` (or `static` itself, out of the site folder) is refused
(`sitegen.sitefolder`). It must never write the output (the writer does) and never read a
file from outside `static/`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from sitegen.emit.manifest import path_problem
from sitegen.errors import ConfigError
from sitegen.outputnames import HASHED_FOLDERS
from sitegen.sitefolder import source_files

if TYPE_CHECKING:
    from pathlib import Path

    from sitegen.model.views import Page, Site

STATIC_DIR = "static"
#: Files sitegen writes that the owner's `static/` may replace (sitegen's allows every crawler).
REPLACEABLE = frozenset({"robots.txt"})


def _hidden(rel: str) -> bool:
    parts = rel.split("/")
    if parts[0] == ".well-known":
        parts = parts[1:]
    return any(p.startswith((".", "~")) or p.endswith("~") for p in parts)


def collect_own_static(root: Path) -> dict[str, bytes]:
    """Every publishable file of *root*/static/ by its output path (sorted)."""
    files: dict[str, bytes] = {}
    for rel, entry in source_files(root, STATIC_DIR, skip=_hidden):
        problem = path_problem(rel)
        if problem is not None:
            raise ConfigError(f"static/{rel} cannot be published ({problem}): rename it")
        if rel.startswith(HASHED_FOLDERS):
            hashed = next(f for f in HASHED_FOLDERS if rel.startswith(f))
            raise ConfigError(
                f"static/{rel} would be published in /{hashed}, where sitegen writes only "
                "files named by their content's hash (cached for a year): move it to "
                "another folder of static/")
        try:
            files[rel] = entry.read_bytes()
        except OSError as error:
            raise ConfigError(f"cannot read static/{rel} ({error.strerror}): check its "
                              "permissions") from None
    return files


def own_static_paths(root: Path) -> frozenset[str]:
    """The output paths of *root*/static/'s publishable files (their bytes unread)."""
    return frozenset(rel for rel, _ in source_files(root, STATIC_DIR, skip=_hidden))


def rendered_files(site: Site, own: Mapping[str, bytes]) -> list[Page]:
    """The site files drawn by templates (`site.files`) the build renders with its pages:
    all but one the owner's `static/` replaces (*own*: its files by output path)."""
    return [page for page in site.files if page.path not in REPLACEABLE or page.path not in own]


def check_collisions(own: Iterable[str], generated: Iterable[str]) -> None:
    """Refuse an own static file that would land on (or around) a file sitegen writes."""
    for rel, clash in clashes(own, generated).items():
        raise ConfigError(f"static/{rel} would overwrite {clash}, which sitegen writes: "
                          "rename or remove the file in static/")


def clashes(own: Iterable[str], generated: Iterable[str]) -> dict[str, str]:
    """Each own static file on (or around) a file of *generated*: that file, by own path
    (sorted)."""
    made = set(generated)
    folders = {rel.rpartition("/")[0] for rel in made}
    for rel in list(folders):
        while rel:
            rel = rel.rpartition("/")[0]
            folders.add(rel)
    found: dict[str, str] = {}
    for rel in sorted(own):
        clash = rel if rel in made else None
        if clash is None and rel in folders:
            clash = next(p for p in sorted(made) if p.startswith(rel + "/"))
        parent = rel.rpartition("/")[0]
        while clash is None and parent:
            if parent in made:
                clash = parent
            parent = parent.rpartition("/")[0]
        if clash is not None:
            found[rel] = clash
    return found
