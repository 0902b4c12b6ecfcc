"""The code fingerprint: one hash of the code and the libraries that derive anything.

Role: every kind of derived data (pages' recorded reads, rendered bodies, image variants,
link scans, search bundles) is keyed by what it came from *and* by the code that derived
it. That code is this package's own source (every `*.py` file and the built-in themes'
files) and the versions of the libraries that shape the output (`LIBRARIES`), hashed here
once per process, so a new sitegen, an edited module or an upgraded library makes all
derived data stale at once and no one has to remember to bump a version number.
`fingerprint_of` is the pure function; `code_fingerprint` applies it to the installed
package and caches the answer. `code_signature` is what lets the no-change stage
(`sitegen.unchanged`) skip computing it: a digest of the stat (no read) of every file and
folder entry the fingerprint reads or finds its libraries by (the package's files, the
entries of `sys.path`, the distributions' metadata in them). A change of any of them
changes the signature; an equal signature means an equal fingerprint, a different one
only that the fingerprint must be computed again to tell. This module must never read
content, the store or the output, and never import a stage.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterable
from functools import cache
from pathlib import Path

#: The distributions whose versions decide what sitegen makes, by their index names.
LIBRARIES = ("jinja2", "markupsafe", "markdown-it-py", "pygments", "pillow", "babel",
             "python-slugify", "pydantic", "pagefind", "pagefind-bin")
#: The names (lower case) of the entries on `sys.path` that hold a distribution's metadata,
#: and the metadata files inside them: what `importlib.metadata` finds versions by.
_DISTRIBUTIONS = (".dist-info", ".egg-info", ".egg")
_METADATA = ("METADATA", "PKG-INFO", "EGG-INFO/PKG-INFO")
#: The package's folders of non-Python files that are code too (templates, theme assets).
DATA_FOLDERS = ("themes",)


def library_versions(names: Iterable[str] = LIBRARIES) -> dict[str, str]:
    """Each library's installed version ("-" when it is not installed)."""
    from importlib.metadata import PackageNotFoundError, version  # (its import costs more
    # than the no-change stage's whole look: `code_signature` needs none)

    found: dict[str, str] = {}
    for name in names:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "-"
    return found


def _code_files(root: Path) -> list[Path]:
    files = [p for p in root.rglob("*.py") if "__pycache__" not in p.parts]
    for folder in DATA_FOLDERS:
        files += [p for p in (root / folder).rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".py"]
    return sorted(files)


def fingerprint_of(root: Path, libraries: dict[str, str]) -> str:
    """A hash of the code under *root* (see the module docstring) and *libraries*'
    versions: each file by its path relative to *root* and its bytes."""
    digest = hashlib.sha256()
    for name, found in sorted(libraries.items()):
        digest.update(f"{name}={found}\x00".encode())
    for path in _code_files(root):
        data = path.read_bytes()
        digest.update(f"{path.relative_to(root).as_posix()}\x00{len(data)}\x00".encode())
        digest.update(data)
    return digest.hexdigest()[:32]


@cache
def code_fingerprint() -> str:
    """The fingerprint of this sitegen: its package's code and its libraries (computed
    once per process; forked render workers inherit it)."""
    return fingerprint_of(Path(__file__).resolve().parent, library_versions())


def _stat_line(path: str) -> str:
    """The inode, size, mtime and ctime of *path* (not followed when a symlink), or "-"."""
    try:
        found = os.lstat(path)
    except OSError:
        return f"{path}\0-\n"
    return (f"{path}\0{found.st_ino}\0{found.st_size}\0{found.st_mtime_ns}"
            f"\0{found.st_ctime_ns}\n")


def _entries(folder: str) -> list[str]:
    """The sorted names in *folder* ([] when it is not a readable folder)."""
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def code_signature(root: Path | None = None, path: Iterable[str] | None = None) -> str:
    """The stat signature of the fingerprint's inputs (see the module docstring): every file
    under *root* (the package) but bytecode, and each entry of *path* (`sys.path`) with
    every distribution's metadata found in it, each by its inode, size, mtime and ctime
    (`sys.path[0]` is the current folder for `python -m sitegen`: entries other than
    distributions do not count)."""
    package = str(root or Path(__file__).resolve().parent)
    digest = hashlib.sha256()
    for here, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            digest.update(_stat_line(os.path.join(here, name)).encode("utf-8", "surrogateescape"))
    for entry in sys.path if path is None else path:
        folder = os.path.abspath(entry or ".")
        names = _entries(folder)  # (a folder by its distributions only: its own mtime
        # changes with any file added to it, such as the current folder's report)
        lines = [f"{folder}\0folder\n" if os.path.isdir(folder) else _stat_line(folder)]
        for name in names:
            if name.lower().endswith(_DISTRIBUTIONS):
                lines.append(_stat_line(os.path.join(folder, name)))
                lines += [_stat_line(os.path.join(folder, name, meta)) for meta in _METADATA]
        digest.update(f"{entry}\0".encode("utf-8", "surrogateescape"))
        digest.update("".join(lines).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()[:32]
