"""Installed distributions' versions, read from the names of their metadata folders.

Role: `installed_versions` answers what `importlib.metadata.version` answers, for the
few libraries whose versions key the render caches (`sitegen.render.bodies`), without
importing `importlib.metadata`: that import pulls in `email`, `csv`, `zipfile` and
`socket`, 0.034-0.040 s of every build on the development VM (measured in a fresh
interpreter), while listing the few `sys.path` folders takes well under a millisecond.
It looks where importlib.metadata's path finder looks: each `sys.path` folder in order,
for `NAME-VERSION.dist-info` or `NAME-VERSION[-pyX.Y].egg-info`, names compared
normalized (PEP 503), the first found winning; a folder whose name carries no version
has it read from the `Version:` field of its metadata file. A distribution found
nowhere is None; `versions_of` then asks importlib.metadata after all (a zip on
`sys.path`, a custom finder), so the answer is never worse than it would give. It must
never import the packages it names, and never raise on a folder it cannot list or a
file it cannot read.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Sequence

_METADATA_SUFFIXES = (".dist-info", ".egg-info")


def normalized(name: str) -> str:
    """A distribution name as PEP 503 compares it: `Markdown_It.py` → `markdown-it-py`."""
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_versions(names: Iterable[str], path: Sequence[str] | None = None,
                       ) -> dict[str, str | None]:
    """The version of each distribution in *names* installed on *path* (`sys.path`)."""
    wanted = {normalized(name): name for name in names}
    found: dict[str, str | None] = dict.fromkeys(wanted.values())
    for folder in sys.path if path is None else path:
        if not wanted:
            break
        try:
            entries = os.listdir(folder or ".")
        except OSError:  # a zip file, a missing folder
            continue
        for entry in entries:  # in the folder's order, as importlib.metadata takes them
            if not entry.endswith(_METADATA_SUFFIXES):
                continue
            stem = entry.rsplit(".", 1)[0]
            name, _, rest = stem.partition("-")
            key = normalized(name)
            if key not in wanted:
                continue
            version = rest.partition("-")[0] or _version_field(os.path.join(folder, entry))
            if version is None:
                continue
            found[wanted.pop(key)] = version
    return found


def versions_of(names: Iterable[str], path: Sequence[str] | None = None,
                ) -> dict[str, str | None]:
    """`installed_versions`, with importlib.metadata asked for the names not found."""
    found = installed_versions(names, path)
    missing = [name for name, version in found.items() if version is None]
    if missing:
        from importlib.metadata import PackageNotFoundError, version

        for name in missing:
            try:
                found[name] = version(name)
            except PackageNotFoundError:
                pass
    return found


def _version_field(location: str) -> str | None:
    """The `Version:` of the metadata at *location* (a metadata folder, or an egg-info file)."""
    candidates = [location]
    if os.path.isdir(location):
        candidates = [os.path.join(location, name) for name in ("METADATA", "PKG-INFO")]
    for candidate in candidates:
        try:
            with open(candidate, encoding="utf-8", errors="replace") as handle:
                for line in handle:
                    if not line.strip():
                        break  # the headers end at the first empty line
                    field, _, value = line.partition(":")
                    if field.strip().lower() == "version" and value.strip():
                        return value.strip()
        except OSError:
            continue
    return None
