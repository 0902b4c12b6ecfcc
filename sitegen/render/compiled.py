"""Compiled templates kept between builds, in the content store, sealed like its derived data.

Role: compiling a theme's templates costs a quarter of a second on every build, and a
template's code depends only on its source, Jinja's version and sitegen's code.
`StoredBytecode` is a Jinja `BytecodeCache` (Jinja's public API for this) whose entries are
rows of the store's `derived` table (kind `template`), keyed by the code fingerprint
(`sitegen.codeprint`: sitegen's code and the libraries' versions) and Jinja's key for the
template's name and file. Jinja checks each entry's source checksum (and its own version)
before using it, and the store hands back only rows whose seal verifies, so an entry from a
cache someone else wrote is never run: the template is compiled again. Every row is read in
one query when the builder is made; `save` stores what was compiled in this build and drops
the rows no template asked for. Only the building process uses it, before any fork. It must
never compile or render a template itself.
"""

from __future__ import annotations

from jinja2 import BytecodeCache
from jinja2.bccache import Bucket

from sitegen.codeprint import code_fingerprint
from sitegen.store import Store

KIND = "template"


class StoredBytecode(BytecodeCache):
    """Compiled templates in *store* (see the module docstring)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._prefix = code_fingerprint() + ":"
        self._stored = {key: value for key, value in store.derived(KIND).items()
                        if key.startswith(self._prefix)}
        self._used: set[str] = set()
        self._fresh: dict[str, bytes] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        key = self._prefix + bucket.key
        self._used.add(key)
        data = self._stored.get(key)
        if data is not None:
            bucket.bytecode_from_string(data)  # (Jinja resets it if the source changed)

    def dump_bytecode(self, bucket: Bucket) -> None:  # (Jinja compiled it: none was usable)
        self._fresh[self._prefix + bucket.key] = bucket.bytecode_to_string()

    def save(self) -> None:
        """Store the templates compiled in this build, dropping every other stored one but
        those this build used (nothing is written when nothing was compiled)."""
        if self._fresh:
            self.store.save_derived(KIND, self._fresh, self._used)
