"""The Pagefind binary: found, run over a folder, and the scratch space it works in.

Role: the one place that starts Pagefind (the `pagefind[bin]` package's binary, found with
its public `get_executable`, which honours `PAGEFIND_BINARY_PATH`) for `sitegen.emit.search`,
with a failure turned into one `SearchError` sentence and a Ctrl-C into `Interrupted`.
Pagefind follows symbolic links, so a shard's "site" is a folder of links to the pages
where the writer holds them (staged or kept): no page is copied. The scratch folder goes on
tmpfs (`/dev/shm`) where the machine has one with room (`TMPFS_FREE`), and each shard's
folder is removed as soon as its bundle is read. This module must never write the output
and never decide what is indexed.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from sitegen.errors import Interrupted, SearchError

log = logging.getLogger("sitegen.build")

#: Pagefind's user-interface files: the search page loads them once, from the bundle's root.
UI_FILES = frozenset({
    "pagefind-ui.js", "pagefind-ui.css", "pagefind-component-ui.js", "pagefind-component-ui.css",
    "pagefind-modular-ui.js", "pagefind-modular-ui.css", "pagefind-highlight.js"})
#: A memory-backed folder for Pagefind's scratch files, where the system has one.
TMPFS = "/dev/shm"


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


#: Free space tmpfs must have to be used (a container's /dev/shm is often 64 MB).
TMPFS_FREE = 256 * 1024 * 1024


def _tmpfs() -> str | None:
    """`TMPFS` when it is a writable folder with room, else None (the system's temp)."""
    try:
        roomy = shutil.disk_usage(TMPFS).free >= TMPFS_FREE
    except OSError:
        return None
    return TMPFS if roomy and os.access(TMPFS, os.W_OK | os.X_OK) else None


@contextmanager
def scratch() -> Iterator[Path]:
    """A temporary folder on tmpfs where there is one with room, removed afterwards."""
    where = _tmpfs()
    with tempfile.TemporaryDirectory(prefix="sitegen-search-", dir=where) as folder:
        yield Path(folder)


def link_pages(site: Path, sources: Mapping[str, str]) -> None:
    """Make *site* a tree of symbolic links: each output path to the file holding it."""
    for rel, source in sources.items():
        target = site / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(source, target)


def run_pagefind(site: Path, output: Path, exclude: str = "") -> None:
    """Index the HTML files under *site* into *output*, leaving out what the CSS selector
    *exclude* matches (a SearchError when Pagefind fails; `Interrupted` when a Ctrl-C ended
    it: it shares the terminal's process group)."""
    binary = find_binary()
    try:
        done = subprocess.run(
            [os.fspath(binary), "--site", os.fspath(site), "--output-path", os.fspath(output),
             "--quiet", *(["--exclude-selectors", exclude] if exclude else [])],
            capture_output=True, check=False, stdin=subprocess.DEVNULL)
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


def read_bundle(output: Path) -> dict[str, bytes]:
    """Every file Pagefind wrote under *output*, by relative path."""
    return {file.relative_to(output).as_posix(): file.read_bytes()
            for file in sorted(output.rglob("*")) if file.is_file()}
