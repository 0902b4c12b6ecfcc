"""The writer's file-system primitives: new files, folders, links, the swap, leftovers.

Role: the low-level half of `sitegen.emit.writer`, its only caller. It creates a
staged file (new only, never through an existing one: `write_new`), makes the
folders of a staged path (`make_folders`), carries a file of the live output into
staging as a hard link (`link_into`), lists what in the live output sitegen did not
write (`foreign_entries`), tells whether a file holds given bytes (`holding`), swaps
staging and output in one step (`exchange_dirs`) and removes what an interrupted
build left beside the output (`recover_leftovers`).
Failures are `OSError`s; the writer turns them into one-line errors (`failing`). It must never
write outside the output folder and its `.NAME.sitegen-*` siblings (and the one
`.NAME.git-set-aside-*` a planted or forgotten `.git` is moved to), and never follow
a symlink.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import os
import shutil
import stat
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sitegen.errors import BuildError

#: How a staged file is created: a new file only (as `open(path, "xb")`), never inherited.
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
#: How a kept file is read to check its bytes: never through a symlink, never blocking.
_READ_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def sibling(output: Path, kind: str) -> Path:
    """The writer's own file or folder *kind* beside *output*: `.NAME.sitegen-KIND`."""
    return output.parent / f".{output.name}.sitegen-{kind}"


def write_new(target: str, data: bytes) -> os.stat_result:
    """Create the file *target* (new only) holding *data*; return its stat once written."""
    handle = os.open(target, _NEW_FILE, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(handle, view):]
        return os.fstat(handle)
    finally:
        os.close(handle)


def write_staged(root: str, rel: str, data: bytes) -> os.stat_result:
    """`write_new` of *rel* under the fresh tree *root*, making its folders as needed.

    Safe from several threads at once (a folder another made meanwhile is fine).
    """
    folder = rel.rpartition("/")[0]
    if folder:
        os.makedirs(os.path.join(root, folder), exist_ok=True)
    return write_new(os.path.join(root, rel), data)


def make_folders(root: str, folder: str, made: set[str]) -> None:
    """Make *folder* (relative to the fresh tree *root*) and its missing parents.

    *made* holds the folders already made and grows. Only the writer makes folders
    in *root*, so there is never a symlink on the way.
    """
    missing: list[str] = []
    while folder and folder not in made:
        missing.append(folder)
        folder = folder.rpartition("/")[0]
    for name in reversed(missing):
        os.mkdir(os.path.join(root, name))
        made.add(name)


def link_into(source: str, target: str) -> None:
    """Put *source* (a file or a symlink, never followed) at *target* as a hard link.

    Where the file system refuses hard links, a copy that keeps the mtime (a symlink
    is made anew with the same target).
    """
    try:
        os.link(source, target, follow_symlinks=False)
    except OSError as error:
        if error.errno not in (errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EMLINK):
            raise
        if os.path.islink(source):
            os.symlink(os.readlink(source), target)
        else:
            shutil.copy2(source, target, follow_symlinks=False)


def carry_all(output: str, staging: str, rels: Iterable[str], made: set[str]) -> None:
    """`link_into` each of *rels* (output-relative) of the live *output* into the fresh tree
    *staging*, making its folders (`make_folders`; *made* grows). The commit carries every
    unchanged file so: one loop, no per-file bookkeeping."""
    source, target = output + "/", staging + "/"
    for rel in rels:
        folder = rel.rpartition("/")[0]
        if folder and folder not in made:
            make_folders(staging, folder, made)
        link_into(source + rel, target + rel)


def holding(path: str, digest: str, size: int) -> os.stat_result | None:
    """The stat of *path* when it is a regular file of *size* bytes whose sha256 (hex) is
    *digest*; else None (an unreadable file too).

    One open (never through a symlink, never waiting on a FIFO), one fstat and one read of
    the whole file (`file_sha256`): after a cache restore every kept file is checked here.
    """
    try:
        handle = os.open(path, _READ_FILE)
    except OSError:
        return None
    try:
        found = os.fstat(handle)
        if not stat.S_ISREG(found.st_mode) or found.st_size != size:
            return None
        same = file_sha256(path, handle, size) == digest
    except OSError:
        return None
    finally:
        os.close(handle)
    return found if same else None


def file_sha256(path: str, handle: int, size: int) -> str:
    """The sha256 (hex) of the bytes of *path*, open as *handle*, read whole (*size* bytes
    expected; a longer file gives another digest)."""
    data = os.read(handle, size + 1)
    while len(data) < size + 1:  # (a short read: rare, but a file may be large)
        more = os.read(handle, size + 1 - len(data))
        if not more:
            break
        data += more
    return hashlib.sha256(data).hexdigest()


def holds_anything(folder: Path) -> bool:
    """Whether the folder *folder* holds any entry (a `.git` too: nothing is kept)."""
    with os.scandir(folder) as listing:
        return any(True for _ in listing)


def foreign_entries(output: str, known: frozenset[str]) -> tuple[list[str], list[str]]:
    """What of *output* is not *known* (sitegen's files): (files, folders), sorted.

    The files are all but folders (symlinks are not followed); the folders are those
    the files are in, and every empty folder but those sitegen's files were in.
    Paths are output-relative; a `.git` or any other dot-folder is listed like the rest
    (the build wrote none of it). An unreadable folder raises.
    """
    files: list[str] = []
    empty: list[str] = []
    pending = [""]
    while pending:
        prefix = pending.pop()
        with os.scandir(os.path.join(output, prefix)) as listing:
            entries = list(listing)
        if prefix and not entries:
            empty.append(prefix)
        for entry in entries:
            rel = f"{prefix}/{entry.name}" if prefix else entry.name
            if entry.is_dir(follow_symlinks=False):
                pending.append(rel)
            elif rel not in known:
                files.append(rel)
    folders = {folder for rel in files for folder in parents(rel)}
    if empty:
        ours = {folder for rel in known for folder in parents(rel)}
        folders.update(rel for rel in empty if rel not in ours)
    return sorted(files), sorted(folders)


def parents(rel: str) -> list[str]:
    """The folders of the output-relative path *rel*, innermost first."""
    found: list[str] = []
    while "/" in rel:
        rel = rel.rpartition("/")[0]
        found.append(rel)
    return found


def _exchange(first: Path, second: Path) -> bool:
    """Atomically exchange two paths (renameat2 RENAME_EXCHANGE); False if unsupported."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False  # not Linux, or a C library without it
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                          ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second),
                 _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), os.fspath(second))


def exchange_dirs(staging: Path, output: Path) -> Path | None:
    """Put *staging* at *output*; return where the previous output is now (None: none was).

    With renameat2 one atomic step, after which *staging* holds the previous tree.
    Without it, the output is renamed to its `old` sibling and staging into place: a
    kill between the two renames is repaired by `recover_leftovers` (*old* comes back).
    """
    old = sibling(output, "old")
    if not os.path.lexists(output):
        os.rename(staging, output)
        return None
    if _exchange(staging, output):
        return staging
    os.rename(output, old)
    os.rename(staging, output)
    return old


def set_aside_git(previous: Path, output: Path) -> Path | None:
    """Move the `.git` folder of the replaced tree *previous* beside *output*, as
    `.NAME.git-set-aside-<UTC time>` (never deleted by sitegen): it is not the site's, so it
    leaves the output, but it may be someone's repository, so it is never destroyed.
    Returns where it went (None: there was none, or it could not be moved: then it is
    deleted with the old tree)."""
    found = previous / ".git"
    if not found.is_dir() or found.is_symlink():
        return None
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = output.parent / f".{output.name}.git-set-aside-{stamp}"
    try:
        os.rename(found, target)
    except OSError:
        return None
    return target


def remove_tree(path: Path) -> None:
    """Delete *path*: a folder with all it holds (symlinks unfollowed), or a file."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()


def recover_leftovers(output: Path) -> None:
    """Repair what an interrupted build of *output* left beside it.

    An output moved away by a swap that did not finish comes back; every other
    `.NAME.sitegen-*` sibling but the lock (a staging folder, an old tree, an older
    sitegen's spare tree) is deleted.
    """
    old = sibling(output, "old")
    if os.path.lexists(old) and not os.path.lexists(output):
        os.rename(old, output)
    prefix, lock = sibling(output, "").name, sibling(output, "lock").name
    for name in sorted(os.listdir(output.parent)):
        if name.startswith(prefix) and name != lock:
            remove_tree(output.parent / name)


@contextmanager
def failing(what: str) -> Iterator[None]:
    """Turn an OSError into the one-line BuildError `<what>: <the system's reason>`."""
    try:
        yield
    except OSError as error:
        raise BuildError(f"{what}: {error.strerror}") from None
