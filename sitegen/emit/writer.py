"""The only module that writes the output folder: staging, reuse, atomic swap.

Role: the build names every file of the new site, by its bytes (`write`) or as the
previous build's file, still `intact` (`keep`). New bytes go into a staging folder
beside the output (a render worker stages the pages it renders: the building process
`reserve`s their paths before the fork, the worker `stage`s the bytes, the building
process `adopt`s what it sends back); `commit` hard-links the unchanged files into it,
writes the manifest, swaps it with the output in one step and deletes the previous tree,
so nothing the build did not name survives (a site's own files come from `static/`): no
`.git` or other dot-folder either, whoever put it there (a restored CI cache is anyone's).
When nothing changed and nothing else is there, the output is not touched. A build that
fails or is killed leaves the previous output as it was (the next one removes its
leftovers); a lock keeps builds apart.

The output is untrusted (a CI cache can be written by others): what the previous build
left is known only from the store's sealed record (`record`: each file's sha256, inode,
size and ctime, and the manifest's stat), never from the output's manifest. A file is
intact when its inode, size and ctime are the recorded ones (a ctime older than the
recorded manifest's, so no edit hid in the same clock tick), or else when its bytes hash
to the recorded sha256. A folder that is not empty and is not sitegen's output (no
manifest, no record) is refused rather than emptied. It must never write outside the
output and its `.NAME.sitegen-*` siblings, never follow a symlink, and never keep a
second copy of the site.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import stat
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from sitegen.emit import tree
from sitegen.emit.lock import OutputLock
from sitegen.emit.manifest import FileEntry, Manifest, safe_relpath
from sitegen.errors import BuildError, ConfigError
from sitegen.folders import check_output
from sitegen.outputnames import MANIFEST_NAME

log = logging.getLogger("sitegen.emit")
_TICK_NS = 20_000_000  # (longer than the coarse clock tick a file's ctime is taken from)


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
    #: (sha256, inode, size, ctime_ns) of every file of the new output, and the manifest's
    #: (inode, size, ctime_ns): what the store records for `OutputWriter(record=...)`.
    stats: dict[str, tuple[str, int, int, int]] = field(default_factory=dict)
    manifest: tuple[int, int, int] | None = field(default=None, compare=False)

    @property
    def record(self) -> tuple[dict[str, tuple[str, int, int, int]], tuple[int, int, int] | None]:
        """What the store keeps of this output (`Store.save_output_record`)."""
        return self.stats, self.manifest


class OutputWriter:
    """Stage a whole site beside *output* and swap it in at `commit`.

    A context manager: entering takes the lock, removes leftovers and reads the previous
    manifest; leaving (on any exception too) removes the staging folder, frees the lock.
    """

    def __init__(self, output: Path, *, lock_timeout: float = 60.0,
                 record: tuple[Mapping[str, tuple[str, int, int, int]],
                               tuple[int, int, int] | None] | None = None) -> None:
        self.output = Path(os.path.realpath(output))
        check_output(self.output)  # (not /, ~, nor any sources: `sitegen.folders`)
        self._staging = tree.sibling(self.output, "staging")
        self._lock = OutputLock(tree.sibling(self.output, "lock"), lock_timeout)
        files, manifest = record or ({}, None)
        #: what the previous build left, as the store's sealed record says (trusted)
        self._previous = {path: FileEntry(*row) for path, row in files.items()}
        self._had_manifest = False  # else the output is not sitegen's yet: always committed
        self._paths: frozenset[str] = frozenset(self._previous)
        #: files recorded with a ctime from here on are checked by content
        self._horizon_ns = manifest[2] if manifest is not None else -1
        self._vouched: set[str] = set()  # files hashed in this build, their stat taken
        self._new: dict[str, FileEntry] = {}  # every path of the new site
        self._carried: set[str] = set()  # those taken unchanged from the live output
        self._folders: set[str] = set()  # the folders the new site's paths need
        self._made: set[str] = set()  # folders made in staging
        self._reserved: set[str] = set()  # claimed for a render worker (`reserve`)
        self._open = False
        self._committed = False

    def __enter__(self) -> OutputWriter:
        if self.output.exists() and not self.output.is_dir():
            raise ConfigError(f"the output {self.output} is a file, not a folder: remove it "
                              "or choose another output folder")
        self._lock.acquire()
        try:
            with tree.failing(f"cannot remove what an interrupted build left beside {self.output}"):
                tree.recover_leftovers(self.output)
            self._had_manifest = self._is_sitegens()
        except BaseException:
            self._lock.release()
            raise
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

    def _is_sitegens(self) -> bool:
        """Whether the output holds a sitegen manifest; any other non-empty one is refused."""
        path = self.output / MANIFEST_NAME
        with tree.failing(f"cannot read {path} (check its permissions)"):
            if self._previous and os.path.lexists(path):
                return True  # (the record says whose it is: the manifest is not parsed)
            found = os.path.isfile(path) and not os.path.islink(path) and \
                Manifest.from_bytes(path.read_bytes()) is not None
            if not found and not self._previous and self.output.is_dir() and \
                    tree.holds_anything(self.output):
                raise ConfigError(
                    f"the output folder {self.output} holds files but was not written by "
                    "sitegen, and a build replaces all it holds: move your files into the "
                    "site's static/ folder (or elsewhere), or choose an empty output folder")
        return found

    def previous_paths(self) -> frozenset[str]:
        """The paths the store records (what the last build wrote)."""
        return self._paths

    def intact(self, path: str) -> bool:
        """True when the previous build wrote *path* and the file is still what it wrote: its
        recorded stat (a ctime older than the recorded manifest's, or a stat `vouch`ed for
        in this build), else its bytes' sha256."""
        verdict = self._verdict(path)
        if isinstance(verdict, FileEntry):  # known good now: record its stat for the next build
            self._previous[path] = verdict
        return verdict is not False

    def _verdict(self, path: str) -> bool | FileEntry:
        """`intact`'s answer, changing nothing (a file its bytes show intact: its entry now)."""
        if (entry := self._previous.get(path)) is None:
            return False
        full = os.path.join(self.output, path)
        try:
            found = os.lstat(full)
        except OSError:
            return False
        if stat.S_ISREG(found.st_mode) and found.st_size == entry.size and \
                (found.st_ino, found.st_ctime_ns) == (entry.ino, entry.ctime_ns) and \
                (0 <= entry.ctime_ns < self._horizon_ns or path in self._vouched):
            return True
        hashed = tree.holding(full, entry.sha256, entry.size)
        return hashed is not None and FileEntry.of(entry.sha256, hashed)

    def hashed_intact(self, paths: Iterable[str]) -> list[tuple[str, str, int, int, int]]:
        """Of *paths*, those only their bytes show `intact`, for `vouch` (in a forked process),
        whose ctime is older than the hashing: any later change shows in their stat."""
        before = time.time_ns() - _TICK_NS
        return [(path, *found) for path in paths
                if isinstance(found := self._verdict(path), FileEntry) and found[3] < before]

    def vouch(self, found: Iterable[tuple[str, str, int, int, int]]) -> None:
        """Take *found* (`hashed_intact`) as checked: their `intact` is one `lstat` now."""
        for path, sha, ino, size, ctime in found:
            self._previous[path] = FileEntry(sha, ino, size, ctime)
            self._vouched.add(path)

    def recorded(self, path: str) -> str | None:
        """The sha256 the store records for *path* (None: the last build did not write it)."""
        return entry.sha256 if (entry := self._previous.get(path)) is not None else None

    def paths(self) -> frozenset[str]:
        """Every path of the new site named so far (written or kept)."""
        return frozenset(self._new)

    def digest(self, path: str) -> str | None:
        """The sha256 of the new site's *path* (None when this build has not named it)."""
        return entry.sha256 if (entry := self._new.get(safe_relpath(path))) is not None else None

    def source(self, path: str) -> str | None:
        """The file holding the new site's *path* until the commit (staged or kept)."""
        if (rel := safe_relpath(path)) not in self._new:
            return None
        return os.path.join(self.output if rel in self._carried else self._staging, rel)

    def read(self, path: str) -> bytes | None:
        """The bytes of the new site's *path* (staged or kept), or None when it has none."""
        try:
            with open(self.source(path) or "", "rb") as handle:
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
        """Add *path* to the new site with *data* (the same bytes as an intact file keep
        it); returns the bytes' sha256 (hex), as the manifest records it."""
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
        if old is None and (same := tree.holding(os.path.join(self.output, rel), digest,
                                                 len(data))) is not None:  # (a lost store)
            return Staged(FileEntry.of(digest, same), kept=True)
        if not self._made:
            self._staged("")
        with tree.failing(f"cannot write {rel!r} into {self._staging}"):
            written = tree.write_staged(os.fspath(self._staging), rel, data)
        return Staged(FileEntry.of(digest, written), kept=False)

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
        with tree.failing(f"cannot write {rel!r} into {self._staging}"):
            if not self._made:
                os.mkdir(self._staging, 0o755)
                if self.output.is_dir():
                    shutil.copymode(self.output, self._staging)
                self._made.add("")
            tree.make_folders(os.fspath(self._staging), rel.rpartition("/")[0], self._made)
        return os.path.join(self._staging, rel)

    def _carry(self, rels: Iterable[str]) -> None:
        """Hard-link the live output's *rels* into staging (a symlink stays a symlink)."""
        self._staged("")
        try:
            tree.carry_all(os.fspath(self.output), os.fspath(self._staging), rels, self._made)
        except OSError as error:
            rel = os.path.relpath(error.filename or "?", self.output)
            raise BuildError(f"cannot carry {rel!r} of {self.output} into the new output: "
                             f"{error.strerror} (was it changed during the build? build again)") \
                from None

    def commit(self) -> WriteResult:
        """Swap the new site in, or leave the output untouched when nothing changed."""
        self._check_open()
        self._committed = True  # (once only, and nothing more to add)
        if self._reserved:
            raise BuildError(f"{len(self._reserved)} reserved output path(s) were never "
                             "written: this is a bug in sitegen")
        written = sorted(self._new.keys() - self._carried)
        strays = self._strays()
        removed = sorted(self._paths.difference(self._new).union(
            rel for rel in strays if not rel.endswith("/")))
        result = WriteResult(written, sorted(self._carried), removed, touched_output=False)
        manifest = Manifest(self._new).to_bytes()
        if not written and not removed and not strays and self._had_manifest \
                and self._manifest_is(manifest):  # the same, all carried
            return self._recorded(result, set())
        self._carry(result.unchanged)
        with tree.failing(f"cannot write the manifest into {self._staging}"):
            tree.write_new(self._staged(MANIFEST_NAME), manifest)
        with tree.failing(f"cannot swap the new output into {self.output}"):
            previous = tree.exchange_dirs(self._staging, self.output)
        result.touched_output = True
        if previous is not None:  # (what cannot be removed now, the next build removes)
            if ".git/" in strays and (kept := tree.set_aside_git(previous, self.output)):
                log.warning("%s held a .git folder the build did not write: it is no longer "
                            "in the output and was moved to %s (build into a folder of its "
                            "own and copy it into a checkout)", self.output, kept)
            shutil.rmtree(previous, ignore_errors=True)
        return self._recorded(result, self._carried)

    def _strays(self) -> list[str]:
        """What in the output this build does not name: files, and folders it needs not."""
        if not self.output.is_dir():
            return []
        try:
            files, folders = tree.foreign_entries(os.fspath(self.output),
                                                  frozenset(self._new) | {MANIFEST_NAME})
        except OSError as error:
            raise BuildError(f"cannot list {error.filename}: {error.strerror}; sitegen removes "
                             "every file of the output it did not write, so it must read them") \
                from None
        return files + [folder + "/" for folder in folders if folder not in self._folders]

    def _manifest_is(self, data: bytes) -> bool:
        """Whether the output's manifest is a regular file holding exactly *data*."""
        path = os.path.join(self.output, MANIFEST_NAME)
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):
                return False
            with open(path, "rb") as handle:
                return handle.read() == data
        except OSError:
            return False

    def _recorded(self, result: WriteResult, moved: set[str]) -> WriteResult:
        """*result* with what the store is to record: each file's stat as the output holds it
        (the files in *moved* were linked and unlinked: their ctime changed, so they are
        stat again) and the manifest's, whose ctime is made later than every file's."""
        stats: dict[str, tuple[str, int, int, int]] = {}
        prefix, path = os.fspath(self.output) + "/", ""
        try:
            for path, entry in self._new.items():
                stats[path] = FileEntry.of(entry.sha256, os.lstat(prefix + path)) \
                    if path in moved else entry
        except OSError as error:
            raise BuildError(f"cannot read {path!r} of {self.output}: {error.strerror}") \
                from None
        target = os.path.join(self.output, MANIFEST_NAME)
        newest = max((row[3] for row in stats.values()), default=-1)
        with tree.failing(f"cannot update the manifest of {self.output}"):
            made = os.lstat(target)
            while made.st_ctime_ns <= newest:  # a later clock tick than every file's, so a
                time.sleep(0.002)  # file edited in the tick it was recorded is not trusted
                os.utime(target, ns=(made.st_atime_ns, made.st_mtime_ns), follow_symlinks=False)
                made = os.lstat(target)
        result.stats, result.manifest = stats, (made.st_ino, made.st_size, made.st_ctime_ns)
        return result
