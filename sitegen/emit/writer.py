"""The only module that writes the output folder: staging, reuse, atomic swap.

Role: the build names every file of the new site, by its bytes (`write`) or as the
previous build's file, still `intact` (`keep`). New bytes go into a staging folder
beside the output (a render worker stages the pages it renders: the building process
`reserve`s their paths before the fork, the worker `stage`s the bytes, the building
process `adopt`s what it sends back); `commit` hard-links the unchanged files and the
user's own files (all the previous manifest does not list: CNAME, .git/, ...) into it,
writes the manifest, swaps it with the output in one step and deletes the previous tree. When
nothing changed, the output is not touched. A build that fails or is killed leaves
the previous output as it was (the next one removes its leftovers); a lock keeps
builds apart. It must never write outside the output and its `.NAME.sitegen-*`
siblings, never follow a symlink, never keep a second copy of the site, and never
remove a file sitegen did not write (a site that needs its path is refused).
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import stat
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from sitegen.emit import tree
from sitegen.emit.lock import OutputLock
from sitegen.emit.manifest import MANIFEST_NAME, FileEntry, Manifest, safe_relpath
from sitegen.errors import BuildError
from sitegen.folders import check_output

log = logging.getLogger("sitegen.emit")

@contextmanager
def _failing(what: str) -> Iterator[None]:
    """Turn an OSError into the one-line BuildError `<what>: <the system's reason>`."""
    try:
        yield
    except OSError as error:
        raise BuildError(f"{what}: {error.strerror}") from None


@dataclass(frozen=True)
class Staged:
    """What `OutputWriter.stage` did with a file's bytes: its entry, and whether the
    previous build's intact file was kept (else the bytes are in staging)."""

    entry: FileEntry
    kept: bool


@dataclass
class WriteResult:
    """What a commit did, by output-relative path (each list sorted)."""

    written: list[str]
    unchanged: list[str]
    removed: list[str]
    touched_output: bool  # False when the live output was left as it was
    #: (size, mtime_ns) of every file of the new output, for `OutputWriter(stats=...)`.
    stats: dict[str, tuple[int, int]] = field(default_factory=dict)


class OutputWriter:
    """Stage a whole site beside *output* and swap it in at `commit`.

    A context manager: entering takes the lock, removes leftovers and reads the previous
    manifest; leaving (on any exception too) removes the staging folder, frees the lock.
    """

    def __init__(self, output: Path, *, lock_timeout: float = 60.0,
                 stats: Mapping[str, tuple[int, int]] | None = None) -> None:
        self.output = Path(os.path.realpath(output))
        check_output(self.output)  # (not /, ~, nor any sources: `sitegen.folders`)
        self._staging = tree.sibling(self.output, "staging")
        self._lock = OutputLock(tree.sibling(self.output, "lock"), lock_timeout)
        self._stats = stats or {}  # (size, mtime_ns) each file had when last written
        self._previous: dict[str, FileEntry] = {}  # what the previous manifest lists
        self._had_manifest = False  # else the output is not sitegen's yet: always committed
        self._paths: frozenset[str] = frozenset()
        self._racy_ns = 0  # files recorded with an mtime from here on are checked by content
        self._new: dict[str, FileEntry] = {}  # every path of the new site
        self._carried: set[str] = set()  # those taken unchanged from the live output
        self._folders: set[str] = set()  # the folders the new site's paths need
        self._made: set[str] = set()  # folders made in staging
        self._reserved: set[str] = set()  # claimed for a render worker (`reserve`)
        self._open = False
        self._committed = False

    def __enter__(self) -> OutputWriter:
        if self.output.exists() and not self.output.is_dir():
            raise BuildError(f"the output {self.output} is a file, not a folder: remove it or "
                             "choose another output folder")
        self._lock.acquire()
        try:
            with _failing(f"cannot remove what an interrupted build left beside {self.output}"):
                tree.recover_leftovers(self.output)
            found = self._read_manifest()
            self._had_manifest, self._previous = found is not None, found or {}
        except BaseException:
            self._lock.release()
            raise
        self._paths = frozenset(self._previous)
        self._open = True
        return self

    def __exit__(self, *exception: object) -> None:
        if not self._open:
            return
        self._open = False
        try:
            tree.recover_leftovers(self.output)  # the staging folder, or a swap cut short
        except OSError as problem:
            log.warning("could not remove %s: %s (the next build will)", problem.filename,
                        problem.strerror)
        finally:
            self._lock.release()

    def _read_manifest(self) -> dict[str, FileEntry] | None:
        """The previous manifest (its mtime noted: an entry as recent may hide an edit)."""
        path = self.output / MANIFEST_NAME
        if not os.path.lexists(path):
            return None
        with _failing(f"cannot read {path} (check its permissions)"):
            found = os.lstat(path)
            listed = Manifest.from_bytes(path.read_bytes() if stat.S_ISREG(found.st_mode)
                                         else b"")
        if listed is None:
            log.warning("%s is not a sitegen manifest; the output's files are kept as the "
                        "user's own", path)
        self._racy_ns = found.st_mtime_ns
        if listed is None:
            return None
        stats = self._stats
        return {path: FileEntry(entry.sha256, *stats.get(path, (-1, -1)))
                for path, entry in listed.files.items()}

    def previous_paths(self) -> frozenset[str]:
        """The paths the previous manifest lists (what the last build wrote)."""
        return self._paths

    def intact(self, path: str) -> bool:
        """True when the previous build wrote *path* and the file is still what it wrote.

        Its lstat (a regular file, size, mtime) must equal the record of the build that
        wrote it. A file with no such record, or whose mtime is not older than the
        manifest's (it could have been edited in the same clock tick, keeping its stat),
        has its bytes hashed instead.
        """
        entry = self._previous.get(path)
        if entry is None:
            return False
        full = os.path.join(self.output, path)
        try:
            found = os.lstat(full)
            if not stat.S_ISREG(found.st_mode):
                return False
            if entry.size >= 0 and (found.st_size, found.st_mtime_ns) != entry[1:]:
                return False
            if 0 <= entry.mtime_ns < self._racy_ns:
                return True
            with open(full, "rb") as handle:
                same = hashlib.file_digest(handle, "sha256").hexdigest() == entry.sha256
            if same:  # known good now: record its stat for the next build
                self._previous[path] = FileEntry(entry.sha256, found.st_size, found.st_mtime_ns)
            return same
        except OSError:
            return False

    def recorded(self, path: str) -> str | None:
        """The sha256 the previous manifest records for *path* (None: not sitegen's file)."""
        entry = self._previous.get(path)
        return entry.sha256 if entry is not None else None

    def paths(self) -> frozenset[str]:
        """Every path of the new site named so far (written or kept)."""
        return frozenset(self._new)

    def digest(self, path: str) -> str | None:
        """The sha256 of the new site's *path* (None when this build has not named it)."""
        entry = self._new.get(safe_relpath(path))
        return entry.sha256 if entry is not None else None

    def read(self, path: str) -> bytes | None:
        """The bytes of the new site's *path* (staged or kept), or None when it has none."""
        rel = safe_relpath(path)
        if rel not in self._new:
            return None
        folder = self.output if rel in self._carried else self._staging
        try:
            with open(os.path.join(folder, rel), "rb") as handle:
                return handle.read()
        except OSError:
            return None

    def keep(self, path: str) -> bool:
        """Carry the previous build's *path* unchanged, if `intact` (else False: `write` it)."""
        if not self.intact(path):
            return False
        self._claim(path)
        self._new[path] = self._previous[path]
        self._carried.add(path)
        return True

    def write(self, path: str, data: bytes) -> str:
        """Add *path* to the new site with *data*; the same bytes as an intact file keep it.

        Returns the bytes' sha256 (hex), as the manifest records it.
        """
        rel = self._claim(path)
        staged = self.stage(rel, data)
        self.adopt(rel, staged)
        return staged.entry.sha256

    def reserve(self, paths: Iterable[str]) -> None:
        """Claim *paths* for files another process will `stage` (a render worker), and make
        the staging folder; each is then named with `adopt`."""
        for path in paths:
            self._reserved.add(self._claim(path))
        self._staged("")

    def stage(self, path: str, data: bytes) -> Staged:
        """Put *data* into staging as *path*, unless an intact file of the previous build
        holds the same bytes (then it is kept). Safe in a forked render worker: it changes
        nothing of this writer's records (`adopt` does, in the building process)."""
        rel = safe_relpath(path)
        digest = hashlib.sha256(data).hexdigest()
        old = self._previous.get(rel)
        if old is not None and old.sha256 == digest and self.intact(rel):
            return Staged(self._previous[rel], kept=True)  # (with the stat `intact` confirmed)
        if not self._made:
            self._staged("")
        with _failing(f"cannot write {rel!r} into {self._staging}"):
            written = tree.write_staged(os.fspath(self._staging), rel, data)
        return Staged(FileEntry(digest, written.st_size, written.st_mtime_ns), kept=False)

    def adopt(self, path: str, staged: Staged) -> None:
        """Name *path* as `stage` left it (claimed by `write` or `reserve`)."""
        rel = safe_relpath(path)
        self._reserved.discard(rel)
        self._new[rel] = staged.entry
        if staged.kept:
            self._carried.add(rel)
            return
        folder = rel.rpartition("/")[0]
        while folder and folder not in self._made:  # (made by `tree.write_staged`)
            self._made.add(folder)
            folder = folder.rpartition("/")[0]

    def _check_open(self) -> None:
        if not self._open or self._committed:
            raise BuildError("the output writer is not open: this is a bug in sitegen")

    def _claim(self, path: str) -> str:
        """Check that *path* is safe and new to this build, file or folder; note its folders."""
        self._check_open()
        rel = safe_relpath(path)
        if rel in self._new or rel in self._reserved:
            raise BuildError(f"two files of this build want the same output path {rel!r}: "
                             "rename one of the slugs, tags or theme files that produce it")
        if rel in self._folders:
            raise BuildError(f"the output path {rel!r} is also a folder of this build: rename "
                             "the slug or tag that produces it")
        folder, parents = rel.rpartition("/")[0], []
        while folder and folder not in self._folders:
            if folder in self._new:
                raise BuildError(f"the output path {rel!r} runs through {folder!r}, a file of "
                                 "this build: rename the slug or tag that produces it")
            parents.append(folder)
            folder = folder.rpartition("/")[0]
        self._folders.update(parents)
        return rel

    def _staged(self, rel: str) -> str:
        """The staging path of *rel*, with the staging folder and *rel*'s folders made."""
        with _failing(f"cannot write {rel!r} into {self._staging}"):
            if not self._made:
                os.mkdir(self._staging, 0o755)
                if self.output.is_dir():
                    shutil.copymode(self.output, self._staging)
                self._made.add("")
            tree.make_folders(os.fspath(self._staging), rel.rpartition("/")[0], self._made)
        return os.path.join(self._staging, rel)

    def _carry(self, rel: str) -> None:
        """Hard-link the live output's *rel* into staging (a symlink stays a symlink)."""
        target = self._staged(rel)
        with _failing(f"cannot carry {rel!r} of {self.output} into the new output (was it "
                      "changed during the build? then build again)"):
            tree.link_into(os.path.join(self.output, rel), target)

    def commit(self) -> WriteResult:
        """Swap the new site in, or leave the output untouched when nothing changed."""
        self._check_open()
        self._committed = True  # (once only, and nothing more to add)
        if self._reserved:
            raise BuildError(f"{len(self._reserved)} reserved output path(s) were never "
                             "written: this is a bug in sitegen")
        written = sorted(self._new.keys() - self._carried)
        removed = sorted(self._paths.difference(self._new))
        result = WriteResult(written, sorted(self._carried), removed, touched_output=False,
                             stats={path: (entry.size, entry.mtime_ns)
                                    for path, entry in self._new.items() if entry.size >= 0})
        if not written and not removed and self._had_manifest:  # the same, all carried
            return result
        for rel in result.unchanged:
            self._carry(rel)
        target = self._staged(MANIFEST_NAME)  # the last of sitegen's files: its mtime
        with _failing(f"cannot write the manifest into {self._staging}"):  # bounds trust
            made = tree.write_new(target, Manifest(self._new).to_bytes())
            newest = max((self._new[rel].mtime_ns for rel in written), default=-1)
            while made.st_mtime_ns <= newest:  # a later clock tick than every file written,
                time.sleep(0.002)  # so a file edited in the tick it was written is not trusted
                os.utime(target)
                made = os.lstat(target)
        if self.output.is_dir():
            self._carry_foreign()
        with _failing(f"cannot swap the new output into {self.output}"):
            previous = tree.exchange_dirs(self._staging, self.output)
        result.touched_output = True
        if previous is not None:  # (what cannot be removed now, the next build removes)
            shutil.rmtree(previous, ignore_errors=True)
        return result

    def _carry_foreign(self) -> None:
        """Carry what in the output sitegen did not write (`tree.foreign_entries`).

        Done last before the swap: a file dropped into the output after it is not seen.
        """
        try:
            files, folders = tree.foreign_entries(os.fspath(self.output),
                                                  self._paths | {MANIFEST_NAME})
        except OSError as error:
            raise BuildError(f"cannot list {error.filename}: {error.strerror}; sitegen keeps "
                             "every file of the output it did not write, so it must read them") \
                from None
        clashes = [rel for rel in files if rel in self._new or rel in self._folders]
        clashes += [rel for rel in folders if rel in self._new]
        if clashes:
            shown = ", ".join(sorted(clashes)[:5]) + (", ..." if len(clashes) > 5 else "")
            raise BuildError(f"{self.output} holds files sitegen did not write where the new "
                             f"site puts its own ({shown}): move them out of the output folder")
        for rel in folders:
            with _failing(f"cannot carry the folder {rel!r} into the new output"):
                tree.make_folders(os.fspath(self._staging), rel, self._made)
                shutil.copymode(self.output / rel, self._staging / rel)
        for rel in files:
            self._carry(rel)
