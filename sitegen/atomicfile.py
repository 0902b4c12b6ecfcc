"""Replacing one file atomically: a temporary file beside it, then a rename over it.

Role: the cache folder's files (the content cache, the build stamp) are rewritten this
way, so a reader or a killed build only ever sees the old file or the new one. This module
must never write anywhere but beside *path*, and never leave its temporary file behind.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def replace_atomically(path: Path, data: bytes, *, durable: bool = False) -> None:
    """Write *data* to *path* all at once (fsync'ed first when *durable*); raises OSError."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp",
                                         dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            if durable:
                stream.flush()
                os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
