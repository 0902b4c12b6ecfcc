"""The only module that writes the output folder: staging, reuse, atomic swap.

Role: a build hands the writer every file of the new site (`write`) or asks it to
reuse an unchanged one (`keep`); nothing touches the live output until `commit`.
New bytes go into a staging folder beside the output (same file system); at the
commit, unchanged files and the user's own files (CNAME, .nojekyll, .git, ...:
anything the previous manifest does not list) are hard-linked in, the manifest is
written, and the staging folder is swapped in by rename (an atomic exchange where
the kernel has one). A failed, interrupted or killed build therefore leaves the
previous output byte-for-byte as it was; leftovers are cleaned by the next build,
which also holds an exclusive lock so two builds never write the same output.
Files whose bytes did not change keep their inode and mtime. When nothing changed
at all, the output is not touched. With `keep_spare` the swapped-out tree is kept
as `.NAME.sitegen-spare` and recycled as the next staging folder
(`sitegen.emit.spare`), so a small rebuild repairs a few files instead of making
thousands of folders and links. With `start_survey`, the previous manifest and the
pictures of the spare tree and of the live output come from a child process that
took them while the build ran (`sitegen.emit.survey`); the commit checks the
output's folders again before it trusts them. The file-system primitives (new files, links,
the exchange, leftovers) live in `sitegen.emit.tree`; this module decides what
they do. It must never write outside the output folder and its siblings (staging,
spare, lock, trash), and never remove a file that sitegen did not write.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from sitegen.emit import spare as spare_tree
from sitegen.emit.lock import OutputLock
from sitegen.emit.manifest import (
    MANIFEST_NAME,
    FileEntry,
    Manifest,
    safe_relpath,
)
from sitegen.emit.pictures import TreeRecord, forget_records, save_records
from sitegen.emit.survey import OutputPicture, Survey, SurveyAhead, output_entries, recheck
from sitegen.emit.tree import (
    FreshStager,
    detached_remove,
    exchange_dirs,
    ignore_in_git,
    make_folder,
    place_file,
    recover_leftovers,
    write_new,
)
from sitegen.errors import BuildError

log = logging.getLogger("sitegen.emit")


def _identity(path: str) -> tuple[int, int] | None:
    """(st_dev, st_ino) of the folder at *path*, or None."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


def sha256_hex(data: bytes) -> str:
    """The hex SHA-256 of *data* (the content hash the manifest records)."""
    return hashlib.sha256(data).hexdigest()

#: The smallest previous manifest worth a survey (~500 files): below it the writer's own walks
#: take a few milliseconds (207 files: ~4 ms), less than a child's start (~0.1 s) it may wait for.
SURVEY_MIN_MANIFEST = 64 * 1024


@dataclass
class WriteResult:
    """What a commit did, by output-relative path (sorted)."""

    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    touched_output: bool = False


def _worth_surveying(output: str) -> bool:
    """True when *output* holds a previous build big enough to survey in a child."""
    try:
        size = os.stat(os.path.join(output, MANIFEST_NAME)).st_size
    except OSError:
        return False  # nothing built here yet: nothing to survey
    return size >= SURVEY_MIN_MANIFEST  # a small site: walking it here is quicker


@dataclass
class EarlySurvey:
    """A survey started before the build opened its writer (`survey_early`)."""

    output: str
    stamp_path: str | None
    ahead: SurveyAhead

    def close(self) -> None:
        """End the child if nobody took it over (ending a collected survey does nothing)."""
        self.ahead.close()


def survey_early(output: Path, stamp_path: str | None) -> EarlySurvey | None:
    """Start the output survey before the writer for *output* is even opened.

    A build with work to do before it takes the output lock (loading its
    configuration) gives the surveying child that much of a head start, which a
    rebuild whose site model comes from the memo needs: its model stage is shorter
    than the child's walks. The survey is as safe then as later (nothing in it is
    taken on trust, see `sitegen.emit.survey`); the writer takes it over only for the
    same output and stamp (`OutputWriter.start_survey`). None when no survey is worth
    starting, or a killed build's leftovers are there to repair first.
    """
    out = os.path.abspath(output)
    parent, name = os.path.split(out)
    if any(os.path.lexists(os.path.join(parent, f".{name}.sitegen-{kind}"))
           for kind in ("staging", "old")):
        return None
    if not _worth_surveying(out):
        return None
    ahead = SurveyAhead.start(out, os.path.join(parent, f".{name}.sitegen-spare"), stamp_path)
    return EarlySurvey(out, stamp_path, ahead) if ahead is not None else None


class OutputWriter:
    """Stage a whole site beside *output* and swap it in at `commit`.

    Use as a context manager: entering takes the lock and cleans leftovers of a
    killed build; leaving without a commit throws the staging folder away.
    """

    def __init__(self, output: Path, *, lock_timeout: float = 60.0,
                 background_cleanup: bool = False, keep_spare: bool = False) -> None:
        self.output = Path(os.path.abspath(output))
        if self.output.parent == self.output or self.output == Path.home():
            raise BuildError(
                f"refusing to use {self.output} as the output folder: choose a dedicated "
                "folder such as _site"
            )
        name = self.output.name
        self.staging = self.output.parent / f".{name}.sitegen-staging"
        self.old = self.output.parent / f".{name}.sitegen-old"
        self.trash = self.output.parent / f".{name}.sitegen-trash"
        self.spare = self.output.parent / f".{name}.sitegen-spare"
        self.background_cleanup = background_cleanup
        self.keep_spare = keep_spare
        self._stamp_path: str | None = None
        self._survey: SurveyAhead | None = None
        self._surveyed: Survey | None = None
        self._live: dict[str, tuple[int, int, int]] | None = None
        self._index: spare_tree.SpareIndex | None = None
        #: When the commit checked the live output, and its picture then (a survey's).
        self._checked_live: tuple[int, OutputPicture] | None = None
        self._lock = OutputLock(self.output.parent / f".{name}.sitegen-lock", lock_timeout)
        self._previous_manifest: Manifest | None = Manifest()
        self._new: dict[str, FileEntry] = {}
        self._reused: set[str] = set()
        self._written: set[str] = set()
        self._made: set[str] = set()
        self._trusted: dict[str, tuple[int, int, int]] = {}
        self._confirmed: dict[str, tuple[int, int, int]] = {}
        self._staging_str = os.fspath(self.staging)
        self._output_str = os.fspath(self.output)
        self._staged = False
        self._worker_staging = False
        self._repaired = False
        self._open = False
        self._committed = False

    # --- lifecycle -----------------------------------------------------------------

    def __enter__(self) -> OutputWriter:
        self.open()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def open(self) -> None:
        """Take the lock, clean up after a killed build and read the previous manifest."""
        if self.output.exists() and not self.output.is_dir():
            raise BuildError(
                f"the output {self.output} is a file, not a folder: remove it or choose "
                "another output folder"
            )
        self._lock.acquire()
        self._open = True
        self._repaired = os.path.lexists(self.staging) or os.path.lexists(self.old)
        try:
            if self.keep_spare and not os.path.lexists(self.spare):
                try:  # a killed build's staging is as good a spare as any: all is checked
                    if self.staging.is_dir() and not self.staging.is_symlink():
                        os.rename(self.staging, self.spare)
                except OSError:
                    pass
            recover_leftovers(self.output, self.staging, self.old)
            for leftover in sorted(self.output.parent.glob(f"{self.trash.name}*")):
                if leftover.is_dir() and not leftover.is_symlink():
                    self._discard(leftover)
            self._previous_manifest = None  # read when first needed (or surveyed)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Discard an uncommitted staging folder and release the lock."""
        if not self._open:
            return
        if self._survey is not None:
            self._survey.close()
        try:
            if self.staging.exists():
                self._retire(self.staging)
        finally:
            self._open = False
            self._lock.release()

    def start_survey(self, stamp_path: str | None = None,
                     early: EarlySurvey | None = None) -> bool:
        """Have a child process survey the output's trees while the build goes on.

        Call it once the writer is open and before it is used; *stamp_path* (a
        `StampKey.path`) lets the child read the last stamp's file stats too
        (`surveyed_trust`). False when no survey started (the writer walks itself): no
        previous build, a small one (`SURVEY_MIN_MANIFEST`), or no child could start.
        An *early* survey (`survey_early`, started before the writer opened) is taken
        over when it surveys this output with this stamp and the writer found no killed
        build to repair; otherwise it is ended and a survey starts now.
        """
        if (not self._open or self._survey is not None or self._surveyed is not None
                or self._previous_manifest is not None or self._staged):
            if early is not None:
                early.close()
            return False
        if early is not None:
            if (early.output == self._output_str and early.stamp_path == stamp_path
                    and not self._repaired):
                self._stamp_path = stamp_path
                self._survey = early.ahead
                return True
            early.close()
        if not _worth_surveying(self._output_str):
            return False
        self._stamp_path = stamp_path
        self._survey = SurveyAhead.start(self._output_str, os.fspath(self.spare), stamp_path)
        return self._survey is not None

    def _survey_result(self) -> Survey | None:
        """The survey's findings (collected once, waiting for the child if need be), or None."""
        if self._survey is not None:
            waited = time.perf_counter()
            self._surveyed = self._survey.result()
            self._survey = None
            if self._surveyed is None:
                log.debug("the output survey gave nothing usable; the writer walks the trees")
            else:
                log.debug("took the output survey (waited %.3f s for it)",
                          time.perf_counter() - waited)
                if self._surveyed.output is not None:
                    self._live = self._surveyed.output.files
        return self._surveyed

    @property
    def _previous(self) -> Manifest:
        found = self._previous_manifest
        if found is None:
            found = self._surveyed_manifest()  # an empty one is an answer (Manifest has a len)
            if found is None:
                found = self._read_manifest()
            self._previous_manifest = found
        return found

    def _surveyed_manifest(self) -> Manifest | None:
        """The previous manifest as the survey parsed it, if the file is still the same."""
        surveyed = self._survey_result()
        if surveyed is None or surveyed.manifest is None:
            return None
        try:
            st = os.stat(os.path.join(self._output_str, MANIFEST_NAME), follow_symlinks=False)
        except OSError:
            return None
        if (st.st_size, st.st_mtime_ns, st.st_ino) != surveyed.manifest_stat:
            return None
        return Manifest({rel: FileEntry(sha, input_hash)
                         for rel, (sha, input_hash) in surveyed.manifest.items()})

    def _read_manifest(self) -> Manifest:
        path = self.output / MANIFEST_NAME
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return Manifest()
        except OSError as error:
            raise BuildError(
                f"cannot read {path}: {error.strerror}; check its permissions"
            ) from None
        manifest = Manifest.from_bytes(data)
        if manifest is None:
            log.warning("%s is not a sitegen manifest; the output's files are kept as the "
                        "user's own", path)
            return Manifest()
        return manifest

    # --- the build's side --------------------------------------------------------

    @property
    def previous(self) -> Manifest:
        """The manifest of the output as it was when the writer opened."""
        return self._previous

    def _claim(self, path: str) -> str:
        if not self._open or self._committed:
            raise BuildError("the output writer is not open: this is a bug in sitegen")
        if path in self._previous.files and path not in self._new:
            return path  # the manifest's paths were checked when it was read
        rel = safe_relpath(path)
        if rel in self._new:
            raise BuildError(
                f"two files of this build want the same output path {rel!r}: rename one of "
                "the slugs, tags or theme files that produce it"
            )
        return rel

    def trust_stats(self, stats: dict[str, tuple[int, int, int]]) -> None:
        """(size, mtime_ns, inode) of output files as the last commit left them.

        `keep` then accepts a file whose stat is unchanged without reading and hashing
        it again (any change of bytes changes its size or mtime, a replacement its inode).
        """
        self._trusted = stats

    def surveyed_trust(self) -> dict[str, tuple[int, int, int]] | None:
        """The last stamp's file stats the survey read (those still on disk), or None.

        None when no survey of the output was asked with a stamp or could be used: the
        caller then reads the stamp itself (`sitegen.emit.stamprecord.recorded_stats`). An
        empty answer is an answer (no stamp, or none of its files as it left them).
        """
        surveyed = self._survey_result()
        if surveyed is None or surveyed.output is None or self._stamp_path is None:
            return None
        return surveyed.trusted

    def keep(self, path: str, input_hash: str) -> bool:
        """Reuse the previous build's file at *path* when its inputs and bytes are unchanged.

        True means the caller need not produce the file: the previous manifest lists
        the same input hash and the file on disk still has the recorded content hash
        (or the very stat it had when that was checked, see `trust_stats`).
        """
        entry = self._previous.files.get(path)
        if entry is None or entry.input_hash != input_hash:
            return False
        rel = self._claim(path)
        if not self._unchanged_stat(rel):
            try:
                with open(os.path.join(self._output_str, rel), "rb") as handle:
                    data = handle.read()
            except OSError:
                return False
            if sha256_hex(data) != entry.sha256:
                return False
        self._new[rel] = entry
        self._reused.add(rel)
        return True

    def keep_all(self, wanted: Iterable[tuple[str, str]]) -> list[str]:
        """`keep` for many (path, input hash) pairs; returns the paths it could not keep.

        One loop for a whole site's pages: the common case (a surveyed file with its
        trusted stat) is decided here, anything else by `keep` itself.
        """
        if not self._open or self._committed:
            raise BuildError("the output writer is not open: this is a bug in sitegen")
        previous = self._previous.files
        new, reused, confirmed = self._new, self._reused, self._confirmed
        trusted, live = self._trusted, self._live
        missed: list[str] = []
        for path, input_hash in wanted:
            entry = previous.get(path)
            if entry is None or entry.input_hash != input_hash:
                missed.append(path)
                continue
            known = trusted.get(path)
            if (known is not None and live is not None and path not in new
                    and live.get(path) == known):
                confirmed[path] = known
                new[path] = entry
                reused.add(path)
            elif not self.keep(path, input_hash):
                missed.append(path)
        return missed

    def _unchanged_stat(self, rel: str) -> bool:
        """True (and confirmed) when *rel* has the trusted stat: as surveyed, else on disk.

        A surveyed stat stands until the commit, which checks the folders again.
        """
        known = self._trusted.get(rel)
        if known is None:
            return False
        if self._live is not None:
            found = self._live.get(rel)
        else:
            try:
                st = os.stat(os.path.join(self._output_str, rel), follow_symlinks=False)
            except OSError:
                return False
            found = (st.st_size, st.st_mtime_ns, st.st_ino)
        if found != known:
            return False
        self._confirmed[rel] = known
        return True

    def confirmed_stats(self) -> dict[str, tuple[int, int, int]]:
        """The trusted stats `keep` found unchanged on disk (rel → (size, mtime_ns, inode)).

        A committed build links those very inodes into the new output, so after the
        commit they are still those files' stats (the stamp records them unread).
        """
        return dict(self._confirmed)

    def write(self, path: str, data: bytes, input_hash: str | None = None) -> None:
        """Add one file of the new site; bytes equal to the previous file reuse it (same mtime)."""
        self.write_hashed(path, data, sha256_hex(data), input_hash)

    def write_hashed(self, path: str, data: bytes, digest: str,
                     input_hash: str | None = None) -> None:
        """`write` with *data*'s sha256 hex digest already computed (by a render worker)."""
        rel = self._claim(path)
        entry = FileEntry(digest, input_hash)
        old = self._previous.get(rel)
        if old is not None and old.sha256 == digest and self._same_bytes(rel, data):
            self._new[rel] = entry
            self._reused.add(rel)
            return
        self._stage_bytes(rel, data)
        self._new[rel] = entry
        self._written.add(rel)

    def _same_bytes(self, rel: str, data: bytes) -> bool:
        try:
            return (self.output / rel).read_bytes() == data
        except OSError:
            return False

    def worker_staging(self) -> FreshStager | None:
        """Let forked render workers create plain fresh files in staging themselves, or None.

        Call it just before forking. Given only when the staging folder is (or will be)
        freshly made, not an adopted spare tree; the workers then stage every file that
        is new to the output (`FreshStager.stage`) and the parent records each one with
        `record_staged` instead of `write_hashed`. Anything else goes the usual way.
        """
        if not self._open or self._committed:
            return None
        if self._staged:
            if self._index is not None:
                return None
        elif self.keep_spare and self.output.is_dir() and os.path.lexists(self.spare):
            return None  # the spare will be adopted: its files need the parent's decisions
        self._worker_staging = True
        return FreshStager(self._staging_str, self._previous, frozenset(self._new))

    def record_staged(self, path: str, digest: str, input_hash: str | None = None) -> None:
        """Record a file a render worker created through `worker_staging` (as `write_hashed`)."""
        rel = self._claim(path)
        if not self._worker_staging:
            raise BuildError("a file was staged without the writer's consent: this is a bug in "
                             "sitegen")
        self._ensure_staging()
        made = self._made
        folder = os.path.dirname(os.path.join(self._staging_str, rel))
        while folder not in made and len(folder) > len(self._staging_str):
            made.add(folder)
            folder = os.path.dirname(folder)
        self._new[rel] = FileEntry(digest, input_hash)
        self._written.add(rel)

    def _ensure_staging(self) -> None:
        if self._staged:
            return
        if self._worker_staging:  # fresh by promise; a render worker may have made it already
            try:
                self.staging.mkdir(mode=0o755)
            except FileExistsError:
                pass
        else:
            if self.keep_spare and self.output.is_dir():
                surveyed = self._survey_result()
                self._index = spare_tree.adopt(os.fspath(self.spare), self._staging_str,
                                               surveyed.spare if surveyed else None)
            if self._index is None:
                self.staging.mkdir(mode=0o755)
        if self.output.is_dir():
            shutil.copymode(self.output, self.staging)
        self._made.add(self._staging_str)
        self._staged = True

    def _parent(self, rel: str) -> str:
        """The staging path of *rel* (a str: this is the hot loop), its folders made."""
        self._ensure_staging()
        target = os.path.join(self._staging_str, rel)
        parent = os.path.dirname(target)
        if parent not in self._made:
            make_folder(self._staging_str, rel, parent, self._made,
                        self._clear_file_parents if self._index is not None else None)
        return target

    def _clear_file_parents(self, rel: str) -> bool:
        """Remove stale spare files where *rel* needs folders (False: a file of this build)."""
        return spare_tree.clear_file_parents(self._staging_str, rel, self._new)

    def _stage_bytes(self, rel: str, data: bytes) -> None:
        target = self._parent(rel)
        if self._index is not None:
            self._clear_spare(rel, target)
        write_new(target, rel, data)

    def _clear_spare(self, rel: str, target: str) -> None:
        """Remove what the adopted spare holds at *rel* (unless this build put it there)."""
        assert self._index is not None
        self._index.forget(rel)
        if not os.path.lexists(target):
            return
        if target in self._made or rel in self._written:
            return  # a real collision: reported by the caller's own checks
        try:
            spare_tree.clear_path(self._staging_str, rel)
        except OSError as error:
            raise BuildError(f"cannot replace {rel!r} in the staging folder: "
                             f"{error.strerror}") from None

    def _retire(self, tree: Path) -> None:
        """Keep a tree that is no longer the output as the next build's spare, or delete it."""
        if self.keep_spare and not os.path.lexists(self.spare):
            try:
                os.rename(tree, self.spare)
            except OSError:
                pass
            else:
                ignore_in_git(os.fspath(self.spare))
                return
        self._discard(tree)

    # --- commit ------------------------------------------------------------------

    def commit(self) -> WriteResult:
        """Swap the new site in (or leave the output untouched when nothing changed)."""
        if not self._open or self._committed:
            raise BuildError("the output writer is not open: this is a bug in sitegen")
        new_manifest = Manifest(self._new)
        removed = sorted(set(self._previous.files) - set(self._new))
        result = WriteResult(
            written=sorted(self._written),
            unchanged=sorted(self._reused),
            removed=removed,
        )
        manifest_bytes = new_manifest.to_bytes()
        unchanged_tree = (
            not self._staged
            and not removed
            and self.output.is_dir()
            and self._same_bytes(MANIFEST_NAME, manifest_bytes)
        )
        if unchanged_tree:
            self._committed = True
            return result
        started = time.perf_counter()
        self._ensure_staging()
        live, users, empties = self._scan_output()
        output = self._output_str + "/"  # rel: checked relative POSIX paths
        for rel in result.unchanged:
            self._place(output + rel, rel, live.get(rel))
        replaced, carried, empty = self._carry_user_files(users, empties, live)
        if self._index is not None:
            keep = set(self._new) | carried
            keep.add(MANIFEST_NAME)
            spare_tree.prune(self._staging_str, self._index, keep, empty)
            self._clear_spare(MANIFEST_NAME, os.path.join(self._staging_str, MANIFEST_NAME))
        if replaced:
            shown = ", ".join(replaced[:5]) + (" ..." if len(replaced) > 5 else "")
            log.warning("%d file(s) in the output that sitegen did not write were replaced by "
                        "the new site: %s", len(replaced), shown)
        (self.staging / MANIFEST_NAME).write_bytes(manifest_bytes)
        new_live = self._staging_record(carried, empty) if self._checked_live else None
        old_live = _identity(self._output_str) if new_live is not None else None
        forget_records(self._output_str)  # until the new ones are in: the trees now change
        exchange_dirs(self.staging, self.output, self.old)
        self._committed = True
        self._staged = False
        self._index = None
        if self.staging.exists():  # the previous tree, now swapped out
            if self.keep_spare and not os.path.lexists(self.spare):
                self._retire(self.staging)
            else:
                try:
                    os.rename(self.staging, self.trash)
                except OSError:
                    shutil.rmtree(self.staging, ignore_errors=True)
                else:
                    self._discard(self.trash)
        self._record_pictures(new_live, old_live)
        log.debug("swapped the new output in (%.3f s)", time.perf_counter() - started)
        result.touched_output = True
        return result

    def _staging_record(self, carried: set[str], empty: set[str]) -> TreeRecord | None:
        """The staging folder as the next survey will find it once it is the output:
        every folder's mtime and inode, every file's name (None if one is not as expected).

        Taken when nothing else writes there any more (the manifest is in). A folder the
        adopted spare had takes the (mtime, inode) the survey checked, the others an
        `lstat` (~6,000 of them cost the commit 18 ms at 4,000 articles). A value this
        build made stale (a folder it wrote into) is safe: the next survey finds the folder
        changed and lists it again. Only a folder whose recorded value still matches then
        and lies more than `RACY_NS` before *checked_ns* is trusted, and that one has not
        changed since this moment, when its listing was the one recorded here.
        """
        files = dict.fromkeys(self._new, 0)
        files.update(dict.fromkeys(carried, 0))
        files[MANIFEST_NAME] = 0
        folders = {""}
        for rel in (*empty, *(name.rpartition("/")[0] for name in files)):
            while rel and rel not in folders:
                folders.add(rel)
                rel = rel.rpartition("/")[0]
        surveyed = self._surveyed.spare if self._surveyed is not None else None
        known = (surveyed.folder_stats if surveyed is not None and self._index is not None
                 else None) or {}
        checked_ns = time.time_ns()
        staging = self._staging_str + "/"
        folders.discard("")
        try:
            top = os.lstat(self._staging_str)  # written into last (the manifest)
            stats = {"": (top.st_mtime_ns, top.st_ino)}
            for rel in folders:
                found = known.get(rel)
                if found is None:
                    st = os.lstat(staging + rel)
                    if not stat.S_ISDIR(st.st_mode):
                        return None
                    found = (st.st_mtime_ns, st.st_ino)
                stats[rel] = found
        except OSError:
            return None
        return TreeRecord((top.st_dev, top.st_ino), checked_ns, stats, files)

    def _record_pictures(self, new_live: TreeRecord | None,
                         old_live: tuple[int, int] | None) -> None:
        """Leave the pictures of the new output and of the spare for the next survey
        (`sitegen.emit.pictures`), or none when this commit could not take them."""
        checked = self._checked_live
        self._checked_live = None
        if new_live is None or old_live is None or checked is None:
            return
        spare = None
        if _identity(os.fspath(self.spare)) == old_live:  # the old output, kept as the spare
            checked_ns, picture = checked
            spare = TreeRecord(old_live, checked_ns, picture.folders,
                               {rel: st[2] for rel, st in picture.files.items()})
        save_records(self._output_str, new_live, spare)

    def _discard(self, folder: Path) -> None:
        """Delete a swapped-out tree: in a detached `rm -rf` when asked (fast), else inline.

        The old tree is never needed again, and deleting thousands of folders is the
        slowest part of a small rebuild; a leftover (rm killed) is removed next time.
        """
        if self.background_cleanup and detached_remove(folder):
            return
        shutil.rmtree(folder, ignore_errors=True)

    def _place(self, source: str, rel: str, inode: int | None) -> None:
        """Hard-link *source* at *rel* in staging, unless the spare already holds that inode."""
        index = self._index
        if index is not None:
            if inode is not None and index.in_place(rel, inode):
                return
            target = os.path.join(self._staging_str, rel)
            if os.path.lexists(target):
                self._clear_spare(rel, target)
            index.forget(rel)
        place_file(source, self._parent(rel))

    def _scan_output(self) -> tuple[dict[str, int], list[tuple[str, str]], list[str]]:
        """One walk of the live output: rel → inode of every non-folder entry, the user's
        files (path, rel) that sitegen did not write, and the user's empty folders.

        A survey's picture stands for the walk once its changed folders are listed again.
        """
        surveyed = self._survey_result()
        if surveyed is not None and surveyed.output is not None:
            checked_ns = time.time_ns()
            picture = recheck(surveyed.output, self._output_str)
            surveyed.output = None  # the picture is the live output's no more after the commit
            self._live = None
            if picture is not None:
                self._checked_live = (checked_ns, picture)
                return output_entries(picture, self._output_str, self._previous.files,
                                      MANIFEST_NAME)
        live: dict[str, int] = {}
        users: list[tuple[str, str]] = []
        empties: list[str] = []
        if not self.output.is_dir():
            return live, users, empties
        stack = [(self._output_str, "")]
        while stack:
            top, prefix = stack.pop()
            try:
                with os.scandir(top) as listing:
                    entries = sorted(listing, key=lambda e: e.name)
            except OSError:
                continue
            if not entries and prefix:
                empties.append(prefix.rstrip("/"))
                continue
            folders: list[tuple[str, str]] = []
            for entry in entries:
                rel = prefix + entry.name
                try:
                    is_folder = entry.is_dir(follow_symlinks=False)
                except OSError:
                    is_folder = False
                if is_folder:
                    folders.append((entry.path, rel + "/"))
                    continue
                live[rel] = entry.inode()
                if rel in self._previous or (not prefix and entry.name == MANIFEST_NAME):
                    continue
                users.append((entry.path, rel))
            stack.extend(reversed(folders))
        return live, users, empties

    def _carry_user_files(self, users: list[tuple[str, str]], empties: list[str],
                          live: dict[str, int]) -> tuple[list[str], set[str], set[str]]:
        """Hard-link every file sitegen did not write from the old output into staging.

        Returns the user's files the new site replaced, those carried, and the empty
        folders kept.
        """
        carried: set[str] = set()
        for rel in empties:
            self._carry_empty_dir(rel)
        replaced: list[str] = []
        for path, rel in users:
            if rel in self._new:
                replaced.append(rel)
                continue
            try:
                self._place(path, rel, live.get(rel))
            except BuildError:
                replaced.append(rel)
            else:
                carried.add(rel)
        return replaced, carried, set(empties)

    def _carry_empty_dir(self, rel: str) -> None:
        self._ensure_staging()
        try:
            (self.staging / rel).mkdir(parents=True, exist_ok=True)
        except OSError:
            log.debug("could not keep the empty folder %s", rel)
