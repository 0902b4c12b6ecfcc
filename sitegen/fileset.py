"""A set of files as one value of the content store: a zip archive, stored uncompressed.

Role: derived data that is a set of output files (a Pagefind bundle, the variants of one
image) is kept in the store's `derived` table as one blob: `pack` makes it (names sorted,
one fixed timestamp, so the same files give the same bytes) and `unpack` reads it back, or
says None when the blob is not such an archive (a damaged store: the caller makes the files
again). It must never read or write a file on disk.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping

_EPOCH = (1980, 1, 1, 0, 0, 0)


def pack(files: Mapping[str, bytes]) -> bytes:
    """One blob holding *files* (relative path → bytes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name in sorted(files):
            archive.writestr(zipfile.ZipInfo(name, _EPOCH), files[name])
    return buffer.getvalue()


def unpack(blob: bytes) -> dict[str, bytes] | None:
    """The files of a blob `pack` made; None when it is not one (or is damaged)."""
    try:
        with zipfile.ZipFile(io.BytesIO(blob)) as archive:
            return {name: archive.read(name) for name in archive.namelist()}
    except (zipfile.BadZipFile, KeyError, ValueError, EOFError):
        return None
