"""The spare tree: the output's previous generation, recycled as the next staging folder.

Role: building a fresh staging folder means one mkdir per output folder and one
hard link per unchanged file — thousands of slow file-system calls for a site
where one article changed. After a swap the writer keeps the swapped-out tree
beside the output (`.NAME.sitegen-spare`) instead of deleting it; the next build
renames it to the staging folder (`adopt`) and only repairs what differs. Nothing
in a spare is trusted: adopting removes every symlink and records the inode of
every regular file, a file counts as in place only when it is the very inode of
the live file it stands for (a hard link, so equal bytes and mtime), and
`prune` removes every file and folder the new site does not have. The walk can be
the output survey's (`sitegen.emit.survey`, taken under the same lock) when the
adopted folder is the one it pictured. This module
only ever changes the staging folder it was given (never the live output, never
anything outside it) and never follows a symlink.
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
from collections.abc import Container
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sitegen.emit.survey import SparePicture

log = logging.getLogger("sitegen.emit")


@dataclass
class SpareIndex:
    """What an adopted spare holds: regular files (rel → inode) and folders (rel)."""

    files: dict[str, int] = field(default_factory=dict)
    folders: set[str] = field(default_factory=set)

    def in_place(self, rel: str, inode: int) -> bool:
        """True when the staging file at *rel* is the live file with *inode* (a hard link)."""
        return self.files.get(rel) == inode

    def forget(self, rel: str) -> None:
        self.files.pop(rel, None)


def adopt(spare: str, staging: str, picture: SparePicture | None = None) -> SpareIndex | None:
    """Rename *spare* to *staging* and index it (symlinks and odd files removed), or None.

    *picture* (the output survey's, taken under the same lock) stands for the walk
    when the adopted folder is the very one it pictured.
    """
    try:
        if os.path.islink(spare) or not os.path.isdir(spare):
            return None
        os.rename(spare, staging)
        found = os.stat(staging, follow_symlinks=False)
    except OSError:
        return None
    if picture is not None and (found.st_dev, found.st_ino) == picture.identity:
        try:
            for rel in picture.odd:
                os.unlink(os.path.join(staging, rel))
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
            return None
        return SpareIndex(dict(picture.files), set(picture.folders))
    index = SpareIndex()
    stack = [(staging, "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            log.debug("could not list %s of the spare tree; starting afresh", folder)
            shutil.rmtree(staging, ignore_errors=True)
            return None
        for entry in entries:
            rel = prefix + entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    index.folders.add(rel)
                    stack.append((entry.path, rel + "/"))
                elif entry.is_file(follow_symlinks=False):
                    index.files[rel] = entry.inode()
                else:  # symlinks (a user's, carried again at commit), sockets, fifos
                    os.unlink(entry.path)
            except OSError:
                shutil.rmtree(staging, ignore_errors=True)
                return None
    return index


def clear_path(staging: str, rel: str) -> None:
    """Remove whatever the spare left at *rel* (a file or a whole folder), never following links."""
    target = os.path.join(staging, rel)
    if os.path.isdir(target) and not os.path.islink(target):
        shutil.rmtree(target)
    else:
        os.unlink(target)


def clear_file_parents(staging: str, rel: str, claimed: Container[str]) -> bool:
    """Unlink spare files that sit where *rel*'s folders must go; False if one is *claimed*."""
    parts = rel.split("/")[:-1]
    prefix = ""
    for part in parts:
        prefix = f"{prefix}/{part}" if prefix else part
        target = os.path.join(staging, prefix)
        if os.path.islink(target) or (os.path.lexists(target) and not os.path.isdir(target)):
            if prefix in claimed:
                return False
            os.unlink(target)
    return True


def prune(staging: str, index: SpareIndex, keep: set[str], empty_folders: set[str]) -> int:
    """Remove the spare's files not in *keep* and its folders the new site does not use.

    *keep* holds every output-relative file path of the new tree; *empty_folders* the
    user's empty folders carried over. Returns how many files were removed.
    """
    removed = 0
    for rel, inode in index.files.items():
        if rel in keep:
            continue
        path = os.path.join(staging, rel)
        try:
            found = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            continue  # its folder was cleared for a file of the new site
        if found.st_ino == inode and not stat.S_ISDIR(found.st_mode):
            os.unlink(path)
            removed += 1
    needed = set(empty_folders)
    for folder in {rel.rpartition("/")[0] for rel in keep}:  # POSIX relative paths
        while folder and folder not in needed:
            needed.add(folder)
            folder = folder.rpartition("/")[0]
    for rel in sorted(index.folders - needed, key=len, reverse=True):
        try:
            os.rmdir(os.path.join(staging, rel))
        except FileNotFoundError:
            pass
        except OSError:  # not empty: something the new site has under it after all
            log.debug("kept the folder %s of the spare tree", rel)
    return removed
