"""The manifest's bytes: exactly the JSON the plain encoder gives, for any path or hash."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.emit import manifest as manifest_module
from sitegen.emit.manifest import MANIFEST_NAME, MANIFEST_VERSION, FileEntry, Manifest, path_problem

TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)
HASHES = st.one_of(st.text(alphabet="0123456789abcdef", min_size=32, max_size=32), TEXT)


def _reference(files: dict[str, FileEntry]) -> bytes:
    lines = [json.dumps(path, ensure_ascii=False) + ": "
             + json.dumps([entry.sha256, entry.input_hash])
             for path, entry in sorted(files.items())]
    body = ",\n".join(f"  {line}" for line in lines)
    head = f'{{"generator": "sitegen", "version": {MANIFEST_VERSION}, "files": {{\n'
    return (head + body + ("\n" if lines else "") + "}}\n").encode("utf-8")


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(TEXT, st.builds(FileEntry, HASHES, st.one_of(st.none(), HASHES)),
                       max_size=6))
def test_manifest_bytes_equal_the_plain_encoders(files: dict[str, FileEntry]) -> None:
    data = Manifest(files).to_bytes()
    assert data == _reference(files)
    parsed = json.loads(data)
    assert parsed["files"] == {p: [e.sha256, e.input_hash] for p, e in files.items()}


_PATH_PIECES = st.sampled_from(["a", "Z9", "-", "_", "~", ".", "..", "/", "//", "\\", "\x00",
                                "\x07", "é", " ", "x" * 63, "y" * 64, "é" * 130, "index.html",
                                MANIFEST_NAME, ".well-known"])


@settings(max_examples=600, deadline=None)
@given(st.lists(_PATH_PIECES, max_size=8).map("".join))
def test_the_fast_path_check_answers_as_the_full_one(path: str) -> None:
    assert path_problem(path) == manifest_module._full_problem(path)


@pytest.mark.parametrize("path", ["index.html", "a/b/index.html", "tags/x-y_z~/feed.xml",
                                  "a" * 63 + "/b"])
def test_plain_paths_are_safe_by_the_fast_path(path: str) -> None:
    assert manifest_module._PLAIN_PATH.fullmatch(path)
    assert manifest_module._full_problem(path) is None
