"""The code fingerprint: one hash of the code and the libraries that derive anything.

Role: every kind of derived data (pages' recorded reads, rendered bodies, image variants,
link scans, search bundles) is keyed by what it came from *and* by the code that derived
it. That code is this package's own source (every `*.py` file and the built-in themes'
files) and the versions of the libraries that shape the output (`LIBRARIES`), hashed here
once per process, so a new sitegen, an edited module or an upgraded library makes all
derived data stale at once and no one has to remember to bump a version number.
`fingerprint_of` is the pure function; `code_fingerprint` applies it to the installed
package and caches the answer. This module must never read content, the store or the
output, and never import a stage.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

#: The distributions whose versions decide what sitegen makes, by their index names.
LIBRARIES = ("jinja2", "markupsafe", "markdown-it-py", "pygments", "pillow", "babel",
             "python-slugify", "pydantic", "pagefind", "pagefind-bin")
#: The package's folders of non-Python files that are code too (templates, theme assets).
DATA_FOLDERS = ("themes",)


def library_versions(names: Iterable[str] = LIBRARIES) -> dict[str, str]:
    """Each library's installed version ("-" when it is not installed)."""
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
