"""`emit.intact.holds_exactly`: the output is exactly the writer's record, told from one
`lstat` of each folder and file, a folder listed only when it changed since the manifest."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from sitegen.emit.intact import folders_of, holds_exactly, stat_paths
from sitegen.emit.manifest import MANIFEST_NAME
from sitegen.emit.writer import OutputWriter
from sitegen.store import OutputRecord

SITE = {"index.html": b"<p>home</p>", "a/index.html": b"<p>a</p>",
        "a/b/index.html": b"<p>b</p>", "c/index.html": b"<p>c</p>"}


def _built(out: Path) -> OutputRecord:
    with OutputWriter(out) as writer:
        for path, data in SITE.items():
            writer.write(path, data)
        return writer.commit().record


def _holds(out: Path, record: OutputRecord) -> bool:
    files = sorted(record[0])
    folders = folders_of(files)
    paths = [".", *folders, *files, MANIFEST_NAME]
    return holds_exactly(out, record, paths, stat_paths(out, paths), 1 + len(folders))


def _stray_file(out: Path) -> None:
    (out / "a" / "b" / "steal.js").write_bytes(b"alert(1)")


def _stray_folder(out: Path) -> None:
    (out / "c" / "empty").mkdir()


def _stray_at_root(out: Path) -> None:
    (out / "extra.html").write_bytes(b"")


def _rewritten(out: Path) -> None:
    with open(out / "a" / "index.html", "r+b") as handle:
        handle.write(b"<p>A</p>")


@pytest.mark.parametrize("change", [_stray_file, _stray_folder, _stray_at_root, _rewritten])
def test_a_stray_or_an_edit_anywhere_is_seen(tmp_path: Path,
                                            change: Callable[[Path], None]) -> None:
    out = tmp_path / "_site"
    record = _built(out)
    assert _holds(out, record)
    change(out)
    assert not _holds(out, record)


def test_a_folder_touched_since_is_listed_not_refused(tmp_path: Path) -> None:
    """A stray made and removed again leaves its folder's ctime newer than the manifest's:
    the folder is listed, and holds exactly the record's entries; a `.git` at the root is
    a stray like any other (nothing the build did not write is kept)."""
    out = tmp_path / "_site"
    record = _built(out)
    _stray_file(out)
    os.unlink(out / "a" / "b" / "steal.js")
    assert _holds(out, record)
    (out / ".git").mkdir()
    assert not _holds(out, record)
