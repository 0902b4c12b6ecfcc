"""The search index: Pagefind over the new site's pages, its bundle handed to the writer.

Role: the stage of `sitegen.build` after every page and site file is named to the writer
and before the link check and the commit (`[search] enabled`). The writer stages only new
bytes, so there is no complete site on disk before the commit: the pages Pagefind indexes
(those whose HTML carries `data-pagefind-body`: the built-in themes' article pages; every
HTML page when none does) are copied, from the writer's `read`, into a temporary folder;
the Pagefind binary (the `pagefind[bin]` package, found with its public `get_executable`,
which honours `PAGEFIND_BINARY_PATH`) indexes it into a second temporary folder, and each
file it made is handed to the writer as bytes under `pagefind/`, so the index lands in
the atomic commit like every other file and a failure keeps the previous output.
`pagefind-entry.json` is rewritten with sorted keys (Pagefind lists languages in no fixed
order), so the same pages give byte-identical files.

A build whose HTML pages are all the previous build's bytes (none written, none removed)
does not run Pagefind: the previous bundle is named as kept, when all of it is intact.
Otherwise the bundle is derived data in the content store (`kind = search`), keyed by the
indexed pages' paths and sha256, the Pagefind binary and the code fingerprint
(`sitegen.codeprint`, which has Pagefind's version): a build whose indexed pages
are those of the last bundle made (a CI run with the store restored and an empty output,
a change to list pages only) writes the stored bundle and does not run Pagefind either.
Only the last bundle is kept; `--force` makes it again.

This module must never write the output itself (the writer does), never read content from
anywhere but the writer and the store, and never leave its temporary folders behind.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import signal
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from sitegen import fileset
from sitegen.codeprint import code_fingerprint
from sitegen.errors import Interrupted, SearchError

if TYPE_CHECKING:
    from sitegen.emit.writer import OutputWriter
    from sitegen.store import Store

log = logging.getLogger("sitegen.build")

#: The output folder of the bundle, and the search page's script among the theme's files.
BUNDLE = "pagefind"
SEARCH_SCRIPT = "search.js"
#: What marks a page as indexed (the attribute Pagefind looks for).
MARKER = b"data-pagefind-body"
ENTRY = "pagefind-entry.json"
#: The store's kind for bundles.
KIND = "search"


def find_binary() -> Path:
    """The Pagefind executable (`pagefind.service.get_executable`), or a SearchError."""
    try:
        from pagefind.service import get_executable
    except ImportError:
        found = None
    else:
        found = get_executable()
    if found is None or not os.access(found, os.X_OK) or not Path(found).is_file():
        raise SearchError(
            f"the Pagefind binary was not found{f' at {found}' if found else ''}: install "
            "sitegen's dependencies again (pip install 'pagefind[bin]'), or set [search] "
            "enabled = false in site.toml")
    return Path(found)


def run_pagefind(site: Path, output: Path) -> None:
    """Index the HTML files under *site* into *output* (a SearchError when Pagefind fails;
    `Interrupted` when a Ctrl-C ended it: it shares the terminal's process group)."""
    binary = find_binary()
    try:
        done = subprocess.run(
            [os.fspath(binary), "--site", os.fspath(site), "--output-path", os.fspath(output),
             "--quiet"], capture_output=True, check=False, stdin=subprocess.DEVNULL)
    except OSError as error:
        raise SearchError(f"Pagefind ({binary}) could not be started ({error.strerror}); "
                          "the previous output was kept: reinstall 'pagefind[bin]', or set "
                          "[search] enabled = false") from None
    if done.returncode == -signal.SIGINT:  # the Ctrl-C that reached sitegen reached it too
        raise Interrupted("Pagefind was interrupted")
    said = (done.stderr or done.stdout).decode("utf-8", "replace").strip().splitlines()
    if done.returncode != 0:
        reason = said[-1].strip()[:200] if said else "no message"
        raise SearchError(f"Pagefind failed to index the site (exit status {done.returncode}: "
                          f"{reason}); the previous output was kept: fix the cause, or set "
                          "[search] enabled = false")
    for line in said:
        log.debug("pagefind: %s", line)


def _html(paths: Iterable[str]) -> set[str]:
    return {path for path in paths
            if path.endswith(".html") and not path.startswith(BUNDLE + "/")}


def keep_previous(writer: OutputWriter, *, force: bool = False) -> bool:
    """Name the previous bundle as kept when no HTML page changed (True), else False
    (always False with *force*: `--force` builds everything again)."""
    if force:
        return False
    pages = _html(writer.paths())
    if pages != _html(writer.previous_paths()):
        return False
    if any(writer.digest(path) != writer.recorded(path) for path in pages):
        return False
    bundle = sorted(path for path in writer.previous_paths()
                    if path.startswith(BUNDLE + "/"))
    if not any(path == f"{BUNDLE}/{ENTRY}" for path in bundle):
        return False
    if not all(writer.intact(path) for path in bundle):
        return False
    for path in bundle:
        writer.keep(path)
    return True


def _canonical(rel: str, data: bytes) -> bytes:
    """*data* as written, but the entry file's JSON with its keys sorted."""
    if rel != ENTRY:
        return data
    return json.dumps(json.loads(data), ensure_ascii=False, sort_keys=True,
                      separators=(",", ":")).encode("utf-8")


def _indexed(writer: OutputWriter, pages: list[str]) -> list[str]:
    """The pages Pagefind indexes: those with the marker, else all (read one at a time)."""
    found: list[str] = []
    marked: list[str] = []
    for path in pages:
        data = writer.read(path)
        if data is not None:
            found.append(path)
            if MARKER in data:
                marked.append(path)
    return marked or found


def _bundle_key(writer: OutputWriter, pages: Iterable[str], binary: Path) -> str:
    """What a bundle depends on: the indexed pages (path and sha256), the binary and the
    code fingerprint."""
    found = binary.stat()
    digest = hashlib.sha256(
        f"{code_fingerprint()}|{binary}|{found.st_size}|{found.st_mtime_ns}".encode())
    for path in sorted(pages):
        digest.update(f"\x00{path}\x00{writer.digest(path)}".encode())
    return digest.hexdigest()


def _make_bundle(writer: OutputWriter, indexed: list[str]) -> dict[str, bytes]:
    """Run Pagefind over the *indexed* pages, copied into a temporary folder; its files by
    path."""
    with tempfile.TemporaryDirectory(prefix="sitegen-search-") as temp:
        site, output = Path(temp, "site"), Path(temp, "bundle")
        for path in indexed:
            target = site / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(writer.read(path) or b"")
        run_pagefind(site, output)
        files = {}
        for file in sorted(output.rglob("*")):
            if file.is_file():
                rel = file.relative_to(output).as_posix()
                files[rel] = _canonical(rel, file.read_bytes())
    return files


def index_site(writer: OutputWriter, pages: Iterable[str], store: Store | None = None, *,
               reuse: bool = True) -> int:
    """Write the Pagefind bundle of *pages* (output paths): the stored one when its
    indexed pages are the same (with *reuse*), else a new one, stored; returns the pages
    indexed (those marked `data-pagefind-body`, else all)."""
    indexed = _indexed(writer, list(pages))
    if not indexed:
        raise SearchError("the site has no HTML page for Pagefind to index: set [search] "
                          "enabled = false, or publish an article")
    key = _bundle_key(writer, indexed, find_binary())
    stored = store.derived(KIND, [key]).get(key) if store is not None and reuse else None
    files = fileset.unpack(stored) if stored is not None else None
    if files is None:
        files = _make_bundle(writer, indexed)
        if store is not None:
            store.save_derived(KIND, {key: fileset.pack(files)}, [key])
    for rel, data in files.items():
        writer.write(f"{BUNDLE}/{rel}", data)
    return len(indexed)
