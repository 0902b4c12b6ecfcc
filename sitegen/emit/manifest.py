"""What sitegen wrote into an output folder: safe output paths and the manifest.

Role: the pure half of the writer. `safe_relpath` decides whether a path may be
written inside the output at all (no absolute paths, no "..", no backslashes, no
NUL, no empty or dot segments); the `Manifest` lists every file sitegen wrote,
with the SHA-256 of its bytes and the input hash of the page that produced it,
so the next build can reuse unchanged files and remove only its own stale ones.
The manifest is deterministic (sorted, no times, no local paths) because it is
part of the output. This module must never touch the file system.
"""

from __future__ import annotations

import json
import re
from collections import namedtuple

from sitegen.errors import BuildError

MANIFEST_NAME = ".sitegen-manifest.json"
MANIFEST_VERSION = 1
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
    segments = path.split("/")
    for segment in segments:
        if segment in ("", ".", ".."):
            return "it has an empty, '.' or '..' segment"
        if len(segment) * 4 > _MAX_SEGMENT_BYTES and \
                len(segment.encode("utf-8", "surrogatepass")) > _MAX_SEGMENT_BYTES:
            return "a segment is longer than 255 bytes"
    if path == MANIFEST_NAME:
        return "the name is reserved for sitegen's manifest"
    return None


def safe_relpath(path: str) -> str:
    """Return *path* unchanged when it is a safe output-relative path, else raise BuildError."""
    problem = path_problem(path)
    if problem is not None:
        raise BuildError(
            f"refusing to write {path!r} outside or across the output folder ({problem}): "
            "fix the slug, tag or theme file that produced it"
        )
    return path


#: What `json.dumps(text)` and `json.dumps(text, ensure_ascii=False)` return for a str
#: (the json module's own encoders, without the `dumps` call around them).
_quoted_ascii = json.encoder.encode_basestring_ascii
_quoted = json.encoder.encode_basestring


TYPE_CHECKING = False  # (not typing's: see below)
if TYPE_CHECKING:
    from typing import NamedTuple

    class FileEntry(NamedTuple):
        """One file sitegen wrote: the hash of its bytes and of the inputs that produced it."""

        sha256: str
        input_hash: str | None = None
else:
    # The same record for the checker and at run time; at run time a plain namedtuple, as
    # the surveying child parses manifests and `typing` is ~0.005 s of its start. (A tuple:
    # a rebuild makes one per file of the previous manifest, and a frozen dataclass takes
    # a third longer to make.)
    FileEntry = namedtuple("FileEntry", ("sha256", "input_hash"), defaults=(None,))


class Manifest:
    """The files of one build, keyed by output-relative path."""

    def __init__(self, files: dict[str, FileEntry] | None = None) -> None:
        self.files: dict[str, FileEntry] = dict(files or {})

    def __contains__(self, path: object) -> bool:
        return path in self.files

    def __len__(self) -> int:
        return len(self.files)

    def get(self, path: str) -> FileEntry | None:
        """The entry of *path*, or None when sitegen did not write it."""
        return self.files.get(path)

    def to_bytes(self) -> bytes:
        """Deterministic JSON: sorted paths, no times, one file per line for readable diffs."""
        lines = [  # as json.dumps(path, ensure_ascii=False) + ": " + json.dumps([sha, input])
            f"{_quoted(path)}: [{_quoted_ascii(entry.sha256)}, "
            f"{'null' if entry.input_hash is None else _quoted_ascii(entry.input_hash)}]"
            for path, entry in sorted(self.files.items())
        ]
        body = ",\n".join(f"  {line}" for line in lines)
        head = f'{{"generator": "sitegen", "version": {MANIFEST_VERSION}, "files": {{\n'
        return (head + body + ("\n" if lines else "") + "}}\n").encode("utf-8")

    @classmethod
    def from_bytes(cls, data: bytes) -> Manifest | None:
        """Parse a manifest; None when it is unreadable or not sitegen's.

        Entries whose path is unsafe are dropped, so a tampered manifest can never
        make the writer reach outside the output.
        """
        try:
            raw = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return None
        if not isinstance(raw, dict) or raw.get("generator") != "sitegen":
            return None
        if raw.get("version") != MANIFEST_VERSION or not isinstance(raw.get("files"), dict):
            return None
        files: dict[str, FileEntry] = {}
        for path, value in raw["files"].items():
            if path_problem(path) is not None or not isinstance(value, list) or len(value) != 2:
                continue
            digest, input_hash = value
            if not isinstance(digest, str):
                continue
            if input_hash is not None and not isinstance(input_hash, str):
                continue
            files[path] = FileEntry(digest, input_hash)
        return cls(files)
