"""The pictures a commit leaves for the next build's output survey.

Role: the output survey (`sitegen.emit.survey`) used to list every folder of the
live output and of the spare tree, ~12,000 folders at 4,000 articles. Listing a
folder reads its entries from disk when the page cache no longer holds them, as it
seldom does after a minute on the development VM: the survey then took 0.5 s
instead of 0.2 s, the build gave up waiting for it and walked the trees itself,
and a one-article rebuild took 0.8-1.3 s instead of 0.4 s. An `lstat` needs only
the inode, which stays cached far longer (12,000 of them: 0.03 s either way).

At its commit the writer knows both trees exactly: the live output it has just
checked folder by folder (`recheck`) becomes the spare, and the staging folder it
filled becomes the output. It records each tree here — its identity, every
folder's mtime and inode, every file's name (and inode, for the spare) — with the
moment the folders were checked. The next survey checks every recorded folder
with one `lstat`: a folder that gained, lost or renamed an entry has a new mtime,
and one whose mtime is too close to that moment to prove anything (a "racy"
timestamp) is listed again, exactly as `recheck` does at the commit. File stats
are always taken anew. A missing, damaged or foreign record is no record: the
survey walks, as before.

It must never be written but by the writer's commit (under the output lock), and
to read it, it imports nothing beyond the standard library's `marshal` and `os`:
the surveying child loads it.
"""

from __future__ import annotations

import marshal
import os

RECORD_FORMAT = 1


class TreeRecord:
    """One tree as the commit left it: (st_dev, st_ino) of its top folder, when its
    folders were checked (ns), folder rel → (mtime_ns, inode) ("" is the top folder),
    file rel → inode (0 where not recorded)."""

    __slots__ = ("identity", "checked_ns", "folders", "files")

    def __init__(self, identity: tuple[int, int], checked_ns: int,
                 folders: dict[str, tuple[int, int]], files: dict[str, int]) -> None:
        self.identity = identity
        self.checked_ns = checked_ns
        self.folders = folders
        self.files = files


def record_path(output: str) -> str:
    """Where the pictures of *output* (an absolute path) are kept: a sibling of it."""
    parent, name = os.path.split(output)
    return os.path.join(parent, f".{name}.sitegen-pictures")


def save_records(output: str, live: TreeRecord, spare: TreeRecord | None) -> bool:
    """Keep the pictures of the new *live* output and of the *spare* tree; False on failure.

    Written whole or not at all (`replace_atomically`, imported here: the child only reads).
    """
    from pathlib import Path

    from sitegen.atomicfile import replace_atomically

    data = marshal.dumps((RECORD_FORMAT, _pack(live), None if spare is None else _pack(spare)))
    try:
        replace_atomically(Path(record_path(output)), data)
    except OSError:
        return False
    return True


def forget_records(output: str) -> None:
    """Remove the pictures of *output* (its trees changed without a record)."""
    try:
        os.unlink(record_path(output))
    except OSError:
        pass


def load_records(output: str) -> tuple[TreeRecord | None, TreeRecord | None]:
    """The recorded (live output, spare) pictures of *output*; None for each one missing
    or not well-formed."""
    try:
        with open(record_path(output), "rb") as handle:
            form, live, spare = marshal.loads(handle.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None, None
    if form != RECORD_FORMAT:
        return None, None
    return _unpack(live), _unpack(spare)


def _pack(tree: TreeRecord,
          ) -> tuple[tuple[int, int], int, dict[str, tuple[int, int]], dict[str, int]]:
    return (tree.identity, tree.checked_ns, tree.folders, tree.files)


def _unpack(packed: object) -> TreeRecord | None:
    """A record from its marshal form, or None unless every part has the right shape."""
    if not (isinstance(packed, tuple) and len(packed) == 4):
        return None
    identity, checked_ns, folders, files = packed
    if not (isinstance(identity, tuple) and len(identity) == 2):
        return None
    dev, ino = identity
    if not (isinstance(dev, int) and isinstance(ino, int) and isinstance(checked_ns, int)
            and isinstance(folders, dict) and isinstance(files, dict) and "" in folders):
        return None
    for rel, value in folders.items():
        if not (isinstance(rel, str) and (rel == "" or _inside(rel))
                and isinstance(value, tuple) and len(value) == 2
                and isinstance(value[0], int) and isinstance(value[1], int)):
            return None
    for rel, inode in files.items():
        if not (isinstance(rel, str) and _inside(rel) and isinstance(inode, int)):
            return None
    return TreeRecord((dev, ino), checked_ns, folders, files)


def _inside(rel: str) -> bool:
    """True for a relative POSIX path that stays inside its tree ("a/b", not "../a" or "/a")."""
    return not (rel in (".", "..") or rel.startswith(("/", "./", "../"))
                or rel.endswith(("/", "/.", "/..")) or "//" in rel or "/./" in rel
                or "/../" in rel)
