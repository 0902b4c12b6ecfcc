"""The manifest's bytes: exactly the JSON the plain encoder gives, for any path or hash."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.emit.manifest import MANIFEST_VERSION, FileEntry, Manifest

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
