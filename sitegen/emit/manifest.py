"""What sitegen wrote into an output folder: safe output paths and the manifest.

Role: the pure half of the writer. `safe_relpath` decides whether a path may be
written inside the output at all (no absolute paths, no "..", no backslashes, no
control characters, no empty or dot segments). The `Manifest` lists every file
sitegen wrote with the SHA-256 of its bytes, for people, `sitegen deploy` and other
tools. It is part of the output, so it is deterministic: sorted, one file per line, no
time and no local path. The output is untrusted (a CI cache), so the writer never takes a
hash from it: what each file's bytes, inode, size and ctime were when the writer left it
(`FileEntry`) is kept, sealed, in the content store (`OutputWriter(record=...)`). This
module must never touch the file system.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import NamedTuple

from sitegen.errors import BuildError
from sitegen.outputnames import MANIFEST_NAME as MANIFEST_NAME  # (the manifest's own name)
from sitegen.outputnames import path_problem as path_problem  # (the output's path rules)

MANIFEST_VERSION = 3


def safe_relpath(path: str) -> str:
    """Return *path* unchanged when it is a safe output-relative path, else raise BuildError."""
    problem = path_problem(path)
    if problem is not None:
        raise BuildError(
            f"refusing to write {path!r} outside or across the output folder ({problem}): "
            "fix the slug, tag or theme file that produced it"
        )
    return path


class FileEntry(NamedTuple):
    """One file sitegen wrote: the hash of its bytes, and its inode, size and ctime as left.

    An inode, size or ctime of -1 (no record of them) matches no file on disk; such a file
    is trusted only after its bytes are hashed again. The ctime is what the kernel sets on
    any change of a file and no one can set back (an mtime can be, by `touch` or `tar`).
    """

    sha256: str
    ino: int = -1
    size: int = -1
    ctime_ns: int = -1

    @classmethod
    def of(cls, sha256: str, found: os.stat_result) -> FileEntry:
        """The entry of a file whose bytes hash to *sha256*, as *found* (its stat) now."""
        return cls(sha256, found.st_ino, found.st_size, found.st_ctime_ns)


#: What `json.dumps(text, ensure_ascii=False)` returns for a str (the json module's own
#: encoder, without the `dumps` call around it: a manifest has a line per file).
_quoted = json.encoder.encode_basestring


@dataclass(frozen=True)
class Manifest:
    """The files of one build, keyed by output-relative path."""

    files: dict[str, FileEntry] = field(default_factory=dict)

    def to_bytes(self) -> bytes:
        """JSON sorted by path, a line per file: `"path": "sha256"` (no stat: deterministic)."""
        lines = [f"  {_quoted(path)}: {_quoted(entry.sha256)}"
                 for path, entry in sorted(self.files.items())]
        head = f'{{"generator": "sitegen", "version": {MANIFEST_VERSION}, "files": {{\n'
        return (head + ",\n".join(lines) + ("\n" if lines else "") + "}}\n").encode("utf-8")

    @classmethod
    def from_bytes(cls, data: bytes) -> Manifest | None:
        """Parse a manifest (any version this sitegen wrote); None when not sitegen's.

        Entries whose path is unsafe are dropped, so a tampered manifest can never make
        the writer reach outside the output. Stats are never read from it.
        """
        try:
            raw = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return None
        if not isinstance(raw, dict) or raw.get("generator") != "sitegen":
            return None
        version, listed = raw.get("version"), raw.get("files")
        if type(version) is not int or version not in (1, 2, MANIFEST_VERSION) \
                or not isinstance(listed, dict):  # (not true, not 3.0)
            return None
        files: dict[str, FileEntry] = {}
        for path, value in listed.items():
            digest = value[0] if isinstance(value, list) and value else value
            if path_problem(path) is None and isinstance(digest, str):
                files[path] = FileEntry(digest)
        return cls(files)
