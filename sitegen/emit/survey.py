"""The output survey: the writer's pictures of its trees, taken by a second process early on.

Role: before a small rebuild can commit, the writer needs the previous manifest, a
picture of the spare tree it recycles as staging (`sitegen.emit.spare`) and one of
the live output (which files to reuse, which are the user's own to carry over).
Taking them means reading and walking thousands of folders and files — about a
fifth of a one-article rebuild at 4,000 articles — and none of it depends on the
content. `SurveyAhead.start` starts a child process (this module, `main`) as soon
as the writer holds the output lock — or, for an offline rebuild, as soon as the
command knows its output folder, before it loads its configuration
(`sitegen.emit.writer.survey_early`); the child takes pictures of both trees, parses
the manifest and reads the last stamp's file stats while the parent fetches and
builds the site model on another CPU, and leaves its findings (marshal data) in an
unlinked temporary file. A tree the last commit recorded (`sitegen.emit.pictures`)
is not walked: each recorded folder is checked with one `lstat` and only a changed
or racy one is listed again (`recheck`), each file stat'ed anew; any other tree is
walked. The writer collects them (`SurveyAhead.result`) when it
first needs them.

Nothing another program can change is taken on trust: the writer checks the
manifest's stat again, the spare's identity after adopting it, and at the commit
the mtime of every folder of the live output (`recheck`): a folder that changed
since the survey, or whose mtime is too recent to prove anything (a "racy"
timestamp, as git calls it), is listed again, so a file the user added to the
output during the build is carried over as before. Any doubt — a child that could
not start, failed, or is still at work when the findings are needed (on a machine busy
with other work it may not get a CPU in time), damaged findings — means the
writer walks the trees itself, as it does without a survey.
This module only ever reads (the child writes nothing but its findings file) and
never follows a symlink.
"""

from __future__ import annotations

import marshal
import os
import stat
import sys
import time

from sitegen.emit.pictures import TreeRecord, load_records

TYPE_CHECKING = False  # (not typing's: the child imports no more than it needs, see `_command`)
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Container, Iterable, Iterator
    from typing import IO

Stat = tuple[int, int, int]  # size, mtime_ns, inode (as the stamp records them)

SURVEY_FORMAT = 2
#: How long the writer waits for a child that is still at work when it needs the findings,
#: before it ends it and walks the trees itself. Walking itself costs the build ~0.3 s at
#: 4,000 articles (the manifest read, a stat per page, the output's walk at the commit), so
#: waiting up to about that long for a child already under way is the better bet; a child
#: starved of CPU on a busy machine still cannot hold the build up for longer.
WAIT_SECONDS = 0.25
#: A folder modified this close before the survey began may change again unnoticed
#: (same timestamp): it is listed again at the commit. File systems whose timestamps
#: are whole seconds get the wider margin.
RACY_NS = 50_000_000
COARSE_RACY_NS = 2_000_000_000


class _Record:
    """A plain record compared and shown by its slots (what a dataclass would give, without
    importing `dataclasses` into the child)."""

    __slots__: tuple[str, ...] = ()

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # (mutable, as a dataclass)

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"


class OutputPicture(_Record):
    """The live output as surveyed: every non-folder entry's stat, every folder's mtime and inode.

    Paths are output-relative with "/" separators; the top folder is "".
    """

    __slots__ = ("started_ns", "files", "folders")

    def __init__(self, started_ns: int, files: dict[str, Stat] | None = None,
                 folders: dict[str, tuple[int, int]] | None = None) -> None:
        self.started_ns = started_ns
        self.files: dict[str, Stat] = {} if files is None else files
        # folder rel → (mtime_ns, inode)
        self.folders: dict[str, tuple[int, int]] = {} if folders is None else folders


class SparePicture(_Record):
    """The spare tree as surveyed: its identity, regular files (rel → inode), folders,
    and the entries adopting it must remove (symlinks, sockets, fifos...). A spare checked
    against the last commit's record also has each folder's (mtime_ns, inode) then, the
    top folder as "" (`folder_stats`; None for a walked spare)."""

    __slots__ = ("identity", "files", "folders", "odd", "folder_stats")

    def __init__(self, identity: tuple[int, int], files: dict[str, int] | None = None,
                 folders: list[str] | None = None, odd: list[str] | None = None,
                 folder_stats: dict[str, tuple[int, int]] | None = None) -> None:
        self.identity = identity  # st_dev, st_ino of the spare folder
        self.files: dict[str, int] = {} if files is None else files
        self.folders: list[str] = [] if folders is None else folders
        self.odd: list[str] = [] if odd is None else odd
        self.folder_stats = folder_stats


class Survey(_Record):
    """What the child found; None in a field means "not there, or not usable: look yourself"."""

    __slots__ = ("manifest_stat", "manifest", "output", "spare", "trusted")

    def __init__(self, manifest_stat: Stat | None = None,
                 manifest: dict[str, tuple[str, str | None]] | None = None,
                 trusted: dict[str, Stat] | None = None) -> None:
        self.manifest_stat = manifest_stat
        self.manifest = manifest
        self.output: OutputPicture | None = None
        self.spare: SparePicture | None = None
        self.trusted: dict[str, Stat] = {} if trusted is None else trusted


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path, follow_symlinks=False)
    except OSError:
        return None


def _walk(root: str, prefix: str = "") -> Iterator[tuple[str, list[os.DirEntry[str]]]]:
    """(folder rel prefix, its entries) for *root* and every real folder under it."""
    stack = [(root, prefix)]
    while stack:
        folder, rel = stack.pop()
        with os.scandir(folder) as listing:
            entries = list(listing)
        yield rel, entries
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                stack.append((entry.path, rel + entry.name + "/"))


def picture_output(output: str, started_ns: int) -> OutputPicture | None:
    """Walk the live output; None when it is not a folder or cannot be read throughout."""
    top = _lstat(output)
    if top is None or not stat.S_ISDIR(top.st_mode):
        return None
    picture = OutputPicture(started_ns, folders={"": (top.st_mtime_ns, top.st_ino)})
    try:
        _add_tree(picture, output, "")
    except OSError:
        return None
    return picture


def _add_tree(picture: OutputPicture, folder: str, prefix: str) -> None:
    """Add everything under *folder* (output-relative *prefix*, "" or ending in "/")."""
    files = picture.files
    folders = picture.folders
    for rel, entries in _walk(folder, prefix):
        for entry in entries:
            st = entry.stat(follow_symlinks=False)
            name = rel + entry.name
            if entry.is_dir(follow_symlinks=False):
                folders[name] = (st.st_mtime_ns, st.st_ino)
            else:
                files[name] = (st.st_size, st.st_mtime_ns, st.st_ino)


def picture_spare(spare: str) -> SparePicture | None:
    """Walk the spare tree; None when there is none or it cannot be read throughout."""
    top = _lstat(spare)
    if top is None or not stat.S_ISDIR(top.st_mode):
        return None
    picture = SparePicture((top.st_dev, top.st_ino))
    try:
        for rel, entries in _walk(spare):
            for entry in entries:
                name = rel + entry.name
                if entry.is_dir(follow_symlinks=False):
                    picture.folders.append(name)
                elif entry.is_file(follow_symlinks=False):
                    picture.files[name] = entry.inode()
                else:
                    picture.odd.append(name)
    except OSError:
        return None
    return picture


def take_survey(output: str, spare: str, stamp_path: str | None) -> Survey:
    """Everything the writer asks for (what the child runs; usable in-process too)."""
    from sitegen.emit.manifest import MANIFEST_NAME, Manifest
    from sitegen.emit.stamprecord import recorded_stats

    started = time.time_ns()
    survey = Survey()
    manifest_path = os.path.join(output, MANIFEST_NAME)
    found = _lstat(manifest_path)
    if found is not None:
        try:
            with open(manifest_path, "rb") as handle:
                data = handle.read()
        except OSError:
            data = b""
        parsed = Manifest.from_bytes(data) if data else None
        again = _lstat(manifest_path)
        stat_of = (found.st_size, found.st_mtime_ns, found.st_ino)
        if parsed is not None and again is not None and stat_of == (
                again.st_size, again.st_mtime_ns, again.st_ino):
            survey.manifest_stat = stat_of
            survey.manifest = {rel: (entry.sha256, entry.input_hash)
                               for rel, entry in parsed.files.items()}
    live, spared = load_records(output)
    survey.output = _output_from(live, output, started) or picture_output(output, started)
    survey.spare = _spare_from(spared, spare) or picture_spare(spare)
    if survey.output is not None:
        if stamp_path is not None:
            recorded = recorded_stats(stamp_path, output)
            survey.trusted = {rel: st for rel, st in survey.output.files.items()
                              if recorded.get(rel) == st}
        _share_paths(survey, survey.output)
    return survey


def _checked(record: TreeRecord | None, root: str) -> OutputPicture | None:
    """*record*'s tree as it is now, its changed (or racy) folders listed again, or None.

    None when there is no record or it is not of the folder at *root* any more. The
    files' stats are those of the listings only (see `_output_from`, `_spare_from`).
    """
    if record is None:
        return None
    top = _lstat(root)
    if top is None or not stat.S_ISDIR(top.st_mode) or (top.st_dev, top.st_ino) != record.identity:
        return None
    picture = OutputPicture(record.checked_ns, {rel: (0, 0, inode)
                                                for rel, inode in record.files.items()},
                            dict(record.folders))
    return recheck(picture, root)


def _output_from(record: TreeRecord | None, output: str, started: int) -> OutputPicture | None:
    """The live output's picture from the last commit's record (see `sitegen.emit.pictures`),
    every file stat'ed anew; None when the record cannot stand for a walk."""
    picture = _checked(record, output)
    if picture is None:
        return None
    prefix = output + "/"
    files = picture.files
    try:
        for rel in files:
            st = os.lstat(prefix + rel)
            if stat.S_ISDIR(st.st_mode):
                return None
            files[rel] = (st.st_size, st.st_mtime_ns, st.st_ino)
    except OSError:
        return None  # gone from a folder whose mtime says nothing moved: walk to be sure
    picture.started_ns = started  # the folders were checked after this moment
    return picture


def _spare_from(record: TreeRecord | None, spare: str) -> SparePicture | None:
    """The spare tree's picture from the last commit's record, each entry's kind and inode
    taken anew; None when the record cannot stand for a walk."""
    picture = _checked(record, spare)
    if picture is None or record is None:
        return None
    found = SparePicture(record.identity, folders=[rel for rel in picture.folders if rel],
                         folder_stats=picture.folders)
    prefix = spare + "/"
    try:
        for rel in picture.files:
            st = os.lstat(prefix + rel)
            if stat.S_ISREG(st.st_mode):
                found.files[rel] = st.st_ino
            elif stat.S_ISDIR(st.st_mode):
                return None
            else:
                found.odd.append(rel)
    except OSError:
        return None
    return found


def _share_paths(survey: Survey, output: OutputPicture) -> None:
    """One string per path throughout the findings (the trusted stats are the live ones).

    marshal writes an object it has already written as a back-reference, and the writer
    then reads one object per path: the findings at 4,000 articles 2.4 → 1.5 MB.
    """
    same = {rel: rel for rel in output.files}
    same.update((rel, rel) for rel in output.folders)
    if survey.manifest is not None:
        survey.manifest = {same.get(rel, rel): entry for rel, entry in survey.manifest.items()}
    spare = survey.spare
    if spare is not None:
        spare.files = {same.get(rel, rel): inode for rel, inode in spare.files.items()}
        spare.folders = [same.get(rel, rel) for rel in spare.folders]
        if spare.folder_stats is not None:
            spare.folder_stats = {same.get(rel, rel): st for rel, st in spare.folder_stats.items()}


def _dump(survey: Survey) -> bytes:
    output = survey.output
    spare = survey.spare
    return marshal.dumps((
        SURVEY_FORMAT, survey.manifest_stat, survey.manifest,
        None if output is None else (output.started_ns, output.files, output.folders),
        None if spare is None else (spare.identity, spare.files, spare.folders, spare.odd,
                                    spare.folder_stats),
        survey.trusted,
    ))


def _load(data: bytes) -> Survey | None:
    """The findings the child left, or None when they are not whole and well-formed."""
    try:
        fmt, manifest_stat, manifest, output, spare, trusted = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return None
    if (fmt != SURVEY_FORMAT or not isinstance(trusted, dict)
            or not isinstance(manifest, dict | None)
            or not isinstance(manifest_stat, tuple | None)
            or not isinstance(output, tuple | None) or not isinstance(spare, tuple | None)):
        return None
    survey = Survey(manifest_stat=manifest_stat, manifest=manifest, trusted=trusted)
    if output is not None:
        started, files, folders = output
        if not (isinstance(started, int) and isinstance(files, dict)
                and isinstance(folders, dict)):
            return None
        survey.output = OutputPicture(started, files, folders)
    if spare is not None:
        identity, files, folders, odd, folder_stats = spare
        if not (isinstance(identity, tuple) and isinstance(files, dict)
                and isinstance(folders, list) and isinstance(odd, list)
                and isinstance(folder_stats, dict | None)):
            return None
        survey.spare = SparePicture(identity, files, folders, odd, folder_stats)
    return survey


#: The child's program: `main` on the arguments after it (`-c` rather than `-m`, which
#: would import `runpy` and its own imports first: ~0.01 s).
_CHILD = "import sys; from sitegen.emit.survey import main; sys.exit(main(sys.argv[1:]))"


def _command(output: str, spare: str, stamp_path: str | None) -> list[str]:
    """The surveying child's command line: this module, run by this very interpreter.

    `-P` keeps the working folder off `sys.path` (a user's `sitegen.py` there must not
    stand in for the package); `-S` skips the `site` module (the child needs only the
    standard library and this package, which `_child_env` puts on the path): ~0.01-0.02 s
    of a child that races the build. For the same reason this module and those the child
    imports (`sitegen.emit.manifest`, `sitegen.emit.stamprecord`) load no more than the
    standard library's `json` and `re` (not `dataclasses`, `typing` or `hashlib`).
    """
    return [sys.executable, "-S", "-P", "-c", _CHILD, output, spare, stamp_path or ""]


def _child_env() -> dict[str, str]:
    """The environment, with the folder holding this very `sitegen` first on the path.

    The child then runs the parent's own code, whatever else is installed.
    """
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(
        [root, *(part for part in env.get("PYTHONPATH", "").split(os.pathsep) if part)])
    return env


class SurveyAhead:
    """A survey running in a child process; `result` collects it, `close` ends it."""

    def __init__(self, process: subprocess.Popen[bytes], findings: IO[bytes]) -> None:
        self._process: subprocess.Popen[bytes] | None = process
        self._findings = findings
        self._result: Survey | None = None

    @classmethod
    def start(cls, output: str, spare: str, stamp_path: str | None) -> SurveyAhead | None:
        """Start the surveying child, or None where no child can be started.

        A fresh interpreter rather than a fork: a forked child would share the
        parent's heap pages, and every page the parent then writes while the child
        lives is copied (measured: the model stage 0.28 → 0.40 s, medians of 8).
        """
        import subprocess
        import tempfile

        if not sys.executable:
            return None
        try:
            findings = tempfile.TemporaryFile()
        except OSError:
            return None
        try:
            process = subprocess.Popen(_command(output, spare, stamp_path),
                                       stdin=subprocess.DEVNULL, stdout=findings,
                                       stderr=subprocess.DEVNULL, env=_child_env())
        except OSError:
            findings.close()
            return None
        return cls(process, findings)

    def result(self, wait: float | None = None) -> Survey | None:
        """The child's findings (waiting up to *wait* s for it, `WAIT_SECONDS` if None), or None."""
        process = self._process
        if process is None:
            return self._result
        deadline = time.monotonic() + (WAIT_SECONDS if wait is None else wait)
        while (code := process.poll()) is None:  # Popen.wait(timeout) sleeps up to 50 ms
            if time.monotonic() >= deadline:
                self.close()
                return None
            time.sleep(0.001)
        self._process = None
        if code == 0:
            self._findings.seek(0)
            self._result = _load(self._findings.read())
        self.close()
        return self._result

    def close(self) -> None:
        """End the child (if still running) and release its findings file."""
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None
        self._findings.close()


def main(argv: list[str]) -> int:
    """The child (`_command`): OUTPUT SPARE STAMP in *argv*; writes its findings to stdout.

    It runs at the build's own priority: at a lower one (`nice 10`, tried) a machine busy
    with other work starved it, and the build gave up waiting and walked the trees itself.
    """
    output, spare, stamp_path = argv
    sys.stdout.buffer.write(_dump(take_survey(output, spare, stamp_path or None)))
    return 0


#: Past this many changed folders, `recheck` walks the whole output again.
MAX_RELISTS = 16


def recheck(picture: OutputPicture, output: str) -> OutputPicture | None:
    """*picture* brought up to date: folders changed since the survey (or racy) listed again.

    A folder whose mtime or inode moved, or whose mtime is too close to the survey's
    start to prove it unchanged, had an entry added, removed or renamed: its own
    entries are listed anew and new subfolders walked whole. Returns None when the
    output is gone or unreadable (the writer then walks it itself).
    """
    fine = picture.started_ns - RACY_NS
    coarse = picture.started_ns - COARSE_RACY_NS
    prefix = output + "/"  # rel: relative POSIX paths from the walk
    lstat = os.lstat
    isdir = stat.S_ISDIR
    dirty: list[str] = []
    for rel, (mtime, inode) in picture.folders.items():
        try:
            st = lstat(prefix + rel if rel else output)
        except OSError:
            dirty.append(rel)
            continue
        if (st.st_mtime_ns != mtime or st.st_ino != inode or not isdir(st.st_mode)
                or mtime >= (coarse if mtime % 1_000_000_000 == 0 else fine)):
            dirty.append(rel)
    if not dirty:
        return picture
    if len(dirty) > MAX_RELISTS or "" in dirty and _lstat(output) is None:
        return picture_output(output, time.time_ns())
    try:
        for rel in sorted(dirty, key=lambda r: (r.count("/"), r)):
            if rel in picture.folders:  # not dropped with a parent that went away
                _relist(picture, output, rel)
    except OSError:
        return None
    return picture


def _children(names: Iterable[str], prefix: str) -> list[str]:
    """The names directly under the folder *prefix* ("" or ending in "/")."""
    cut = len(prefix)
    return [n for n in names if n.startswith(prefix) and n[cut:] and "/" not in n[cut:]]


def _relist(picture: OutputPicture, output: str, rel: str) -> None:
    """List the folder *rel* again: its own entries anew, new subfolders walked whole."""
    prefix = rel + "/" if rel else ""
    path = os.path.join(output, rel) if rel else output
    st = _lstat(path)
    if st is None or not stat.S_ISDIR(st.st_mode):
        _drop(picture, rel, prefix)
        return
    for name in _children(picture.files, prefix):
        del picture.files[name]
    old_folders = set(_children(picture.folders, prefix))
    with os.scandir(path) as listing:
        entries = list(listing)
    picture.folders[rel] = (st.st_mtime_ns, st.st_ino)
    for entry in entries:
        name = prefix + entry.name
        found = entry.stat(follow_symlinks=False)
        if entry.is_dir(follow_symlinks=False):
            if name in old_folders:
                old_folders.discard(name)
                continue  # checked on its own
            picture.folders[name] = (found.st_mtime_ns, found.st_ino)
            _add_tree(picture, entry.path, name + "/")
        else:
            picture.files[name] = (found.st_size, found.st_mtime_ns, found.st_ino)
    for gone in old_folders:
        _drop(picture, gone, gone + "/")


def _drop(picture: OutputPicture, rel: str, prefix: str) -> None:
    """Forget the folder *rel* and everything under it."""
    for name in [n for n in picture.files if n.startswith(prefix)]:
        del picture.files[name]
    for name in [n for n in picture.folders if n == rel or (n and n.startswith(prefix))]:
        del picture.folders[name]


def output_entries(picture: OutputPicture, output: str, previous: Container[str],
                   manifest_name: str) -> tuple[dict[str, int], list[tuple[str, str]], list[str]]:
    """What a walk of the live output tells the writer, from a checked *picture*.

    rel → inode of every non-folder entry; the user's files (path, rel) that the
    *previous* manifest does not list (bar the manifest itself); the empty folders.
    """
    files = picture.files
    live = {rel: st[2] for rel, st in files.items()}
    users = [(output + "/" + rel, rel) for rel in files
             if rel not in previous and rel != manifest_name]
    users.sort()
    parents = {rel.rpartition("/")[0] for rel in files}
    parents.update(rel.rpartition("/")[0] for rel in picture.folders if rel)
    empties = sorted(rel for rel in picture.folders if rel and rel not in parents)
    return live, users, empties


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
