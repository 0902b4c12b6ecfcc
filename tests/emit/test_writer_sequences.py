"""Any sequence of builds leaves what a fresh build leaves, whatever was done to the output.

Between builds, someone drops files into the output (a user, or whoever can write a CI
cache) and deletes or edits files sitegen wrote; each build keeps what it can. After every
build the output must equal, file for file, a fresh build of the same site into an empty
folder: nothing dropped in survives, wherever it was (where the site needs a path too).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitegen.emit.manifest import Manifest
from sitegen.emit.writer import OutputWriter, WriteResult
from sitegen.outputnames import MANIFEST_NAME

SITE_PATHS = ["index.html", "a/index.html", "a", "a/b/index.html", "b/index.html",
              "c/d/e.html", "c", "feed.xml", "c/d"]
USER_PATHS = ["CNAME", ".hidden/config", "a/notes.txt", "c/d/mine.txt", "x/y/z.txt", "b"]
CONTENTS = st.sampled_from([b"1", b"2", b"33"])


def consistent(files: dict[str, bytes]) -> dict[str, bytes]:
    """*files* without each path that another one needs as a folder."""
    return {path: data for path, data in files.items()
            if not any(other.startswith(path + "/") for other in files)}


#: Each build's site is the previous one with some paths added, changed or dropped.
EDITS = st.dictionaries(st.sampled_from(SITE_PATHS), st.one_of(st.none(), CONTENTS),
                        max_size=4)
TAMPER = st.lists(st.tuples(st.integers(0, 5),  # which file of the built site
                            st.sampled_from(["delete", "same-size", "other-size"])), max_size=3)
STEPS = st.lists(st.tuples(EDITS, st.sets(st.sampled_from(USER_PATHS), max_size=2), TAMPER,
                           st.booleans()), min_size=1, max_size=6)


def tree(root: Path) -> dict[str, str]:
    """Every entry under *root*: a file's bytes (hashed), a symlink's target, or a folder.

    The manifest too is its bytes: the same site gives the same ones, however it was built.
    """
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*") if root.exists() else []):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[rel] = "-> " + os.readlink(path)
        elif path.is_dir():
            found[rel] = "dir"
        else:
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def stats(root: Path) -> dict[str, tuple[int, int]]:
    return {p.relative_to(root).as_posix(): (p.lstat().st_ino, p.lstat().st_mtime_ns)
            for p in (root.rglob("*") if root.exists() else [])}


def leftovers(root: Path) -> set[str]:
    """What is beside the outputs but the outputs and their locks (no staging, no spare)."""
    return {p.name for p in root.iterdir()} - {
        "_site", "fresh", "._site.sitegen-lock", ".fresh.sitegen-lock"}


Record = tuple[dict[str, tuple[str, int, int, int]], tuple[int, int, int] | None]


def build(out: Path, files: dict[str, bytes], previous: dict[str, bytes],
          use_keep: bool, known: Record | None = None) -> WriteResult:
    """Write *files*; with *use_keep*, keep those whose bytes the previous site had.

    *known* is what the build's store holds: the record of the last commit.
    """
    with OutputWriter(out, record=known) as writer:
        for path, data in files.items():
            if use_keep and previous.get(path) == data and writer.keep(path):
                continue
            writer.write(path, data)
        result = writer.commit()
        assert [p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")] \
            == [f".{out.name}.sitegen-lock"]  # the old tree is gone before the commit returns
        return result


def add_user_file(out: Path, rel: str) -> bool:
    """Put a file of the user's at *rel* unless something is in the way."""
    target = out / rel
    for folder in [*reversed(target.relative_to(out).parents)][1:]:
        if (out / folder).exists() and not (out / folder).is_dir():
            return False
    if os.path.lexists(target):
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(f"user's {rel}".encode())
    return True


Step = tuple[dict[str, bytes | None], set[str], list[tuple[int, str]], bool]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(STEPS)
def test_any_sequence_of_builds_equals_a_fresh_build(steps: list[Step]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        out, fresh = root / "_site", root / "fresh"
        user: set[str] = set()
        built: dict[str, bytes] = {}  # the site the output holds
        tampered: set[str] = set()  # files of it the user changed since
        known: Record | None = None  # the last commit's record, as the store keeps it
        first = True
        for edits, additions, tamper, use_keep in steps:
            files = consistent({path: data for path, data in {**built, **edits}.items()
                                if data is not None})
            for which, how in tamper:  # the user edits or deletes files sitegen wrote
                path = sorted(built)[which % len(built)] if built else ""
                target = out / path
                if path and target.is_file():
                    if how == "delete":
                        target.unlink()
                    else:
                        target.write_bytes(b"9" if how == "same-size" else b"edited")
                    tampered.add(path)
            if not first:  # (into a folder that is not sitegen's yet, a build is refused)
                user = {rel for rel in sorted(additions) if add_user_file(out, rel)}
            before_stats = stats(out)
            result = build(out, files, built, use_keep, known)
            same = sorted(p for p, data in files.items()
                          if built.get(p) == data and p not in tampered)
            assert result.unchanged == same  # by keep or by equal bytes, all that could be
            assert result.written == sorted(set(files) - set(same))
            assert result.removed == sorted((set(built) - set(files)) | user)
            assert result.touched_output == bool(first or result.written or result.removed)
            after = stats(out)
            assert result.stats == {  # every file of the site: written, or checked and carried
                p: (hashlib.sha256(data).hexdigest(), (out / p).lstat().st_ino,
                    (out / p).lstat().st_size, (out / p).lstat().st_ctime_ns)
                for p, data in files.items()}
            manifest = Manifest.from_bytes((out / MANIFEST_NAME).read_bytes())
            assert manifest is not None and manifest.files.keys() == files.keys()
            for path in result.unchanged:  # carried: the very file, untouched
                assert after[path] == before_stats[path], path
            if not result.touched_output:
                assert after == before_stats
            for rel in user:
                assert not (out / rel).is_file() or rel in files, rel
            build(fresh, files, {}, False)
            assert tree(out) == tree(fresh)
            assert leftovers(root) == set()
            shutil.rmtree(fresh, ignore_errors=True)
            built, tampered, first, known = files, set(), False, result.record
