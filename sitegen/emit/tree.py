"""The writer's file-system primitives: how staged files and trees are made and swapped.

Role: the low-level half of `sitegen.emit.writer` — create a staged file (new only,
never through an existing one), make its folders (tolerantly, several render
workers at once: `stage_new_file`, `FreshStager`), hard-link a kept file into
staging (`place_file`), exchange the staging folder with the output in one step
(`exchange_dirs`, renameat2 where the kernel has it), repair what a killed build
left (`recover_leftovers`) and remove a retired tree in the background. Only the
writer and the render workers it licenses (`OutputWriter.worker_staging`) call
these; they must never write outside the output folder and its siblings, and
never follow a symlink into somewhere else.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from sitegen.emit.manifest import Manifest, safe_relpath
from sitegen.errors import BuildError

log = logging.getLogger("sitegen.emit")

#: How a staged file is created: a new file only (as `open(path, "xb")`), never inherited.
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)

def write_new(target: str, rel: str, data: bytes) -> None:
    """Create the staged file *target* (new only: O_EXCL) holding *data*."""
    try:
        handle = os.open(target, _NEW_FILE, 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(handle, view):]
        finally:
            os.close(handle)
    except IsADirectoryError:
        raise BuildError(
            f"the output path {rel!r} is also a folder of this build: rename the slug or "
            "tag that produces it"
        ) from None
    except FileExistsError:
        raise BuildError(f"the output path {rel!r} was produced twice in one build") from None
    except OSError as error:
        raise BuildError(f"cannot write {rel!r} into the output: {error.strerror}") from None


def stage_new_file(staging: str, rel: str, data: bytes, made: set[str]) -> None:
    """Create *rel* (a safe relative path) in the fresh folder *staging*, its folders made.

    *made* holds folders known to exist (this process made or met them) and grows.
    Several processes may stage into one folder at once: folders are made tolerantly,
    files only ever created (a path produced twice fails on the second creator).
    """
    target = os.path.join(staging, rel)
    parent = os.path.dirname(target)
    if parent not in made:
        make_folder(staging, rel, parent, made)
    write_new(target, rel, data)


def make_folder(staging: str, rel: str, parent: str, made: set[str],
                repair: Callable[[str], bool] | None = None) -> None:
    """Make *parent*, the folder of the staged path *rel*, and note it in *made*.

    The common case is one mkdir: the folder's own parent was made (or met) by this
    build (makedirs would stat every level first). A folder already there (another
    worker's, an adopted spare's) is fine. A file in the way is the build producing a
    path through another of its files, unless *repair(rel)* clears it (a stale file of
    a recycled tree) — a one-line `BuildError` otherwise, as is any other failure.
    """
    if os.path.dirname(parent) in made:
        try:
            os.mkdir(parent)
        except OSError:
            pass  # there already, or a file: makedirs below tells which
        else:
            made.add(parent)
            return
    try:
        try:
            os.makedirs(parent, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            if repair is None or not repair(rel):
                raise
            os.makedirs(parent, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise BuildError(
            f"the output path {rel!r} runs through a file this build also writes: "
            "rename the slug or tag that produces it"
        ) from None
    except OSError as error:
        raise BuildError(f"cannot write {rel!r} into the output: {error.strerror}") from None
    # No symlink can be on the way: staging is fresh, only real folders are made in it,
    # and the user's symlinks are carried over after every sitegen file is placed.
    while parent not in made and len(parent) > len(staging):
        made.add(parent)
        parent = os.path.dirname(parent)


class FreshStager:
    """A render worker's licence to create fresh files in a freshly made staging folder.

    Made by `OutputWriter.worker_staging` before the fork and used in the forked
    workers: `stage` writes a file only when the writer would simply have created it
    (a safe path not claimed before the fork, and bytes the previous output does not
    have), so the parent gets back the path and digest instead of the bytes.
    """

    __slots__ = ("staging", "previous", "claimed", "_made")

    def __init__(self, staging: str, previous: Manifest, claimed: frozenset[str]) -> None:
        self.staging = staging
        self.previous = previous
        self.claimed = claimed
        self._made: set[str] = set()

    def stage(self, path: str, data: bytes, digest: str) -> bool:
        """Create *path* in staging and return True, or False: the parent writes it."""
        rel = safe_relpath(path)
        if rel in self.claimed:
            return False
        old = self.previous.get(rel)
        if old is not None and old.sha256 == digest:
            return False
        if not self._made:
            try:
                os.mkdir(self.staging, 0o755)
            except FileExistsError:
                pass
            except OSError as error:
                raise BuildError(f"cannot make the staging folder {self.staging}: "
                                 f"{error.strerror}") from None
            self._made.add(self.staging)
        stage_new_file(self.staging, rel, data, self._made)
        return True


_RENAME_EXCHANGE = 2


def _renameat2_exchange(first: Path, second: Path) -> bool:
    """Atomically exchange two paths with renameat2(RENAME_EXCHANGE); False if unsupported."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                          ctypes.c_uint]
    at_fdcwd = -100
    result = renameat2(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second),
                       _RENAME_EXCHANGE)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise BuildError(f"cannot swap the new output into {second}: {os.strerror(code)}")


def exchange_dirs(staging: Path, output: Path, old: Path) -> None:
    """Put *staging* at *output*; afterwards *staging* holds the previous tree (if any).

    With renameat2 the exchange is one atomic step. Without it, the output is renamed
    to *old* and staging into place; a kill between the two renames is repaired by
    `recover_leftovers`, which puts *old* back.
    """
    try:
        if not output.exists():
            os.rename(staging, output)
            return
        if _renameat2_exchange(staging, output):
            return
        os.rename(output, old)
        os.rename(staging, output)
        os.rename(old, staging)
    except OSError as error:
        raise BuildError(f"cannot swap the new output into {output}: {error.strerror}") from None


def detached_remove(folder: Path) -> bool:
    """Start `rm -rf folder` in the background (orphaned, so never a zombie); False if not."""
    shell = shutil.which("sh")
    if shell is None or shutil.which("rm") is None:
        return False
    target = folder.parent / f"{folder.name.split('.sitegen-trash')[0]}.sitegen-trash." \
        f"{os.getpid()}.{time.monotonic_ns()}"
    try:
        os.rename(folder, target)
    except OSError:
        return False
    try:
        pid = os.posix_spawn(shell, [shell, "-c", 'rm -rf -- "$1" >/dev/null 2>&1 &', "sh",
                                     os.fspath(target)], dict(os.environ))
        os.waitpid(pid, 0)
    except OSError:
        shutil.rmtree(target, ignore_errors=True)
    return True


def ignore_in_git(folder: str) -> None:
    """Keep the spare out of `git status` of a site repository (new file only, never a user's).

    The next build prunes it like any file the new site does not have.
    """
    try:
        handle = os.open(os.path.join(folder, ".gitignore"),
                         os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except OSError:
        return  # the old output had one (the user's, hard-linked): left as it is
    try:
        os.write(handle, b"# sitegen's spare copy of an older output: never commit it\n*\n")
    finally:
        os.close(handle)


def recover_leftovers(output: Path, staging: Path, old: Path) -> None:
    """Repair what a killed build left: restore a moved-away output, drop stale staging."""
    if old.exists():
        if not output.exists():
            os.rename(old, output)
        else:
            shutil.rmtree(old, ignore_errors=True)
    if staging.exists() or staging.is_symlink():
        if staging.is_dir() and not staging.is_symlink():
            shutil.rmtree(staging, ignore_errors=True)
        else:
            staging.unlink()
        log.debug("removed the staging folder of an interrupted build")


def place_file(source: str, target: str) -> None:
    """Hard-link *source* at *target* (symlinks are recreated, not followed).

    Falls back to a copy that keeps the mtime where the file system has no hard links.
    """
    try:
        try:
            os.link(source, target, follow_symlinks=False)
        except OSError as error:
            if error.errno not in (errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EMLINK):
                raise
            if os.path.islink(source):
                os.symlink(os.readlink(source), target)
            else:
                shutil.copy2(source, target, follow_symlinks=False)
    except (FileExistsError, IsADirectoryError, NotADirectoryError):
        raise BuildError(f"{os.path.basename(target)} collides with a path of the new "
                         "site") from None
    except OSError as error:
        raise BuildError(f"cannot carry {source} into the new output: {error.strerror}") from None
