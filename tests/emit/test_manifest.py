"""The manifest's bytes and parsing, and the output path check."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen import outputnames as path_rules
from sitegen.emit.manifest import MANIFEST_VERSION, FileEntry, Manifest, path_problem
from sitegen.outputnames import MANIFEST_NAME

TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)
SAFE = TEXT.filter(lambda path: path_problem(path) is None)
HASHES = st.one_of(st.text(alphabet="0123456789abcdef", min_size=64, max_size=64), TEXT)
ENTRIES = st.builds(FileEntry, HASHES, st.integers(-1, 2**40), st.integers(-1, 2**64))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(TEXT, ENTRIES, max_size=6))
def test_manifest_bytes_are_sorted_json_one_file_a_line(files: dict[str, FileEntry]) -> None:
    data = Manifest(files).to_bytes()
    parsed = json.loads(data)
    assert parsed == {"generator": "sitegen", "version": MANIFEST_VERSION,
                      "files": {p: e.sha256 for p, e in files.items()}}
    lines = data.decode("utf-8").rstrip("\n").split("\n")
    assert len(lines) == len(files) + 2
    assert [json.loads("{" + line.rstrip(",") + "}") for line in lines[1:-1]] == [
        {path: entry.sha256} for path, entry in sorted(files.items())]


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(TEXT, ENTRIES, max_size=6), st.randoms(use_true_random=False))
def test_manifest_bytes_hold_no_stat_and_no_order(files: dict[str, FileEntry],
                                                  rng: random.Random) -> None:
    """Only the paths and hashes make the bytes: not the stats, not the order they came in."""
    other = [(path, FileEntry(entry.sha256, rng.randint(-1, 2**40), rng.randint(-1, 2**64)))
             for path, entry in files.items()]
    rng.shuffle(other)
    assert Manifest(dict(other)).to_bytes() == Manifest(files).to_bytes()


def test_manifest_bytes_are_exactly_as_specified() -> None:
    files = {"b/index.html": FileEntry("bb", 5, 10**18), "a\u00e9 \"q\".html": FileEntry("aa"),
             "index.html": FileEntry("cc", 0, 0)}
    assert Manifest(files).to_bytes() == (
        '{"generator": "sitegen", "version": 3, "files": {\n'
        '  "a\u00e9 \\"q\\".html": "aa",\n'
        '  "b/index.html": "bb",\n'
        '  "index.html": "cc"\n'
        '}}\n').encode("utf-8")
    assert Manifest().to_bytes() == b'{"generator": "sitegen", "version": 3, "files": {\n}}\n'


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(SAFE, ENTRIES, max_size=6))
def test_a_manifest_reads_back_as_written(files: dict[str, FileEntry]) -> None:
    parsed = Manifest.from_bytes(Manifest(files).to_bytes())
    assert parsed is not None
    assert parsed.files == {path: FileEntry(entry.sha256) for path, entry in files.items()}
    assert all(entry[1:] == (-1, -1, -1) for entry in parsed.files.values())


@pytest.mark.parametrize("data", [
    b"", b"\xff", b"[]", b'{"generator": "other", "version": 3, "files": {}}',
    b'{"generator": "sitegen", "version": 4, "files": {}}',
    b'{"generator": "sitegen", "version": 0, "files": {}}',
    b'{"generator": "sitegen", "version": true, "files": {}}',
    b'{"generator": "sitegen", "version": 3.0, "files": {}}',
    b'{"generator": "sitegen", "version": "3", "files": {}}',
    b'{"generator": "sitegen", "files": {}}',
    b'{"generator": "sitegen", "version": 3, "files": []}',
    b'{"generator": "sitegen", "version": 2, "files": []}',
])
def test_anything_but_a_sitegen_manifest_is_none(data: bytes) -> None:
    assert Manifest.from_bytes(data) is None


@pytest.mark.parametrize("version", [1, 2, 3])
def test_every_version_reads_as_paths_and_hashes_only(version: int) -> None:
    entry = {1: ["ab", "input"], 2: ["ab", 3, 4], 3: "ab"}[version]
    data = json.dumps({"generator": "sitegen", "version": version,
                       "files": {"a.html": entry, "b/c.html": entry}}).encode()
    parsed = Manifest.from_bytes(data)
    assert parsed is not None
    assert parsed.files == {"a.html": FileEntry("ab", -1, -1), "b/c.html": FileEntry("ab", -1, -1)}


def test_bad_entries_are_dropped_and_version_2_stats_are_ignored() -> None:
    entries = {"ok.html": ["ab", 3, 4], "../x": ["ab", 3, 4], "/abs.html": "ab",
               "bool.html": ["ab", True, 4], "short.html": ["ab"], "nohash.html": [1, 3, 4],
               "empty.html": [], "none.html": None, "number.html": 7,
               "dict.html": {"sha256": "ab"}, MANIFEST_NAME: "ab", "a\\b.html": "ab"}
    data = json.dumps({"generator": "sitegen", "version": 2, "files": entries}).encode()
    parsed = Manifest.from_bytes(data)
    assert parsed is not None and parsed.files == {
        "ok.html": FileEntry("ab"), "bool.html": FileEntry("ab"), "short.html": FileEntry("ab")}
    data = json.dumps({"generator": "sitegen", "version": 3, "files": entries}).encode()
    parsed = Manifest.from_bytes(data)
    assert parsed is not None and parsed.files == {
        "ok.html": FileEntry("ab"), "bool.html": FileEntry("ab"), "short.html": FileEntry("ab")}
    old = json.dumps({"generator": "sitegen", "version": 1,
                      "files": {"a.html": ["ab", "input"], "/etc/passwd": ["ab", None]}})
    parsed = Manifest.from_bytes(old.encode())
    assert parsed is not None and parsed.files == {"a.html": FileEntry("ab", -1, -1)}


_PATH_PIECES = st.sampled_from(["a", "Z9", "-", "_", "~", ".", "..", "/", "//", "\\", "\x00",
                                "\x07", "é", " ", "x" * 63, "y" * 64, "é" * 130, "index.html",
                                MANIFEST_NAME, ".well-known"])


@settings(max_examples=600, deadline=None)
@given(st.lists(_PATH_PIECES, max_size=8).map("".join))
def test_the_fast_path_check_answers_as_the_full_one(path: str) -> None:
    assert path_problem(path) == path_rules._full_problem(path)


@pytest.mark.parametrize("path", ["index.html", "a/b/index.html", "tags/x-y_z~/feed.xml",
                                  "a" * 63 + "/b"])
def test_plain_paths_are_safe_by_the_fast_path(path: str) -> None:
    assert path_rules._PLAIN_PATH.fullmatch(path)
    assert path_rules._full_problem(path) is None


@pytest.mark.parametrize("path, problem", [
    ("é" * 127 + "/x", None),  # 254 bytes
    ("a/" + "é" * 128, "a segment is longer than 255 bytes"),  # 256 bytes
])
def test_a_segment_over_255_bytes_is_refused(path: str, problem: str | None) -> None:
    assert path_problem(path) == problem
