"""The output as `stat` sees it: checked against the writer's record, or digested.

Role: `output_intact` walks an output folder and says whether it holds exactly the files of
the writer's sealed record (`sitegen.store.OutputRecord`), each with its recorded inode, size
and ctime, and the manifest with its own; `stat_digest` digests the inode and ctime of a list
of its folders and files with one `lstat` each, no walk (`sitegen.unchanged` compares it with
the digest it recorded: a file written changes its own ctime, one added, removed or renamed
changes its folder's). It must never write, read a file's bytes, or open the store.
"""

from __future__ import annotations

import hashlib
import os
import stat
from array import array
from operator import attrgetter
from pathlib import Path

from sitegen.outputnames import MANIFEST_NAME
from sitegen.store import OutputRecord

_INODE, _CTIME = attrgetter("st_ino"), attrgetter("st_ctime_ns")


def folders_of(files: list[str]) -> list[str]:
    """Every folder that holds one of *files* (relative paths), sorted."""
    found: set[str] = set()
    for path in files:
        folder = os.path.dirname(path)
        while folder and folder not in found:
            found.add(folder)
            folder = os.path.dirname(folder)
    return sorted(found)


def stat_digest(output: Path, paths: list[str]) -> str:
    """The digest of the inode and ctime of each of *paths* (relative to *output*) now."""
    base = f"{output}/"
    return stats_digest(list(map(os.lstat, [base + path for path in paths])))


def stats_digest(stats: list[os.stat_result]) -> str:
    """The digest of the inode and ctime of each of *stats*, in order."""
    digest = hashlib.sha256(array("Q", map(_INODE, stats)).tobytes())
    digest.update(array("q", map(_CTIME, stats)).tobytes())
    return digest.hexdigest()


def output_intact(output: Path, record: OutputRecord) -> bool:
    """True when *output* holds exactly the files of *record*, each (and the manifest) with
    its recorded inode, size and ctime, every file's ctime older than the manifest's."""
    from sitegen.emit.tree import GIT  # (not at the top: it loads ctypes, for the writer)

    files, manifest = record
    if manifest is None or not files:
        return False
    seen, pending, has_manifest = 0, [""], False
    try:
        while pending:
            prefix = pending.pop()
            with os.scandir(os.path.join(output, prefix)) as listing:
                entries = list(listing)
            if prefix and not entries:
                return False  # an empty folder: not the build's
            for entry in entries:
                rel = f"{prefix}/{entry.name}" if prefix else entry.name
                if rel == GIT:  # (a publishing branch's checkout: the owner's)
                    continue
                if entry.is_dir(follow_symlinks=False):
                    pending.append(rel)
                    continue
                found = entry.stat(follow_symlinks=False)
                now = (found.st_ino, found.st_size, found.st_ctime_ns)
                if rel == MANIFEST_NAME:
                    if now != manifest or not stat.S_ISREG(found.st_mode):
                        return False
                    has_manifest = True
                    continue
                row = files.get(rel)
                if row is None or not stat.S_ISREG(found.st_mode) or now != row[1:] \
                        or row[3] >= manifest[2]:  # as recent as the manifest: may hide an edit
                    return False
                seen += 1
    except OSError:
        return False
    return has_manifest and seen == len(files)
