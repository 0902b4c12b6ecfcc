"""A store another process holds is busy, not damaged: the build waits, then says so.

A real second process takes `BEGIN EXCLUSIVE` on the store's SQLite file (as another
build's write or a `sitegen serve` would hold it) and keeps it until the test tells it to
let go. Held past the wait, the build fails with one sentence naming the file, and the
store is still there with every row; let go within the wait, the build succeeds on it.
"""

from __future__ import annotations

import logging
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import sitegen.store
from sitegen.build import BuildOptions, run_build
from sitegen.config import Config, demo_config
from sitegen.errors import StoreBusyError
from sitegen.outputnames import MANIFEST_NAME
from sitegen.store import STORE_FILE
from sitegen.storefile import open_store

_HOLDER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.readline()
db.execute("ROLLBACK")
print("released", flush=True)
"""


class Holder:
    """A second process holding the store's file locked until `release`."""

    def __init__(self, path: Path) -> None:
        self.child = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      text=True)
        assert self.child.stdout is not None
        assert self.child.stdout.readline() == "locked\n"
        self.released = False

    def release(self) -> None:
        if self.released:
            return
        self.released = True
        assert self.child.stdin is not None and self.child.stdout is not None
        self.child.stdin.write("go\n")
        self.child.stdin.flush()
        assert self.child.stdout.readline() == "released\n"

    def close(self) -> None:
        try:
            self.release()
        finally:
            self.child.communicate(timeout=60)


@contextmanager
def held(path: Path) -> Iterator[Holder]:
    holder = Holder(path)
    try:
        yield holder
    finally:
        holder.close()


class ReleaseWhenWaiting(logging.Handler):
    """Lets the holder go once the build says it waits (so the lock outlives the first look)."""

    def __init__(self, holder: Holder) -> None:
        super().__init__(logging.INFO)
        self.holder = holder
        self.said: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.said.append(record.getMessage())
        if record.getMessage().startswith("waiting up to"):
            self.holder.release()


def _rows(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as db:
        return {table: int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
                for table in ("articles", "pages", "urls", "meta")}


@pytest.fixture
def built(tmp_path: Path) -> tuple[Config, Path]:
    config, out = demo_config(None, tmp_path), tmp_path / "out"
    run_build(config, BuildOptions(output=out, demo=True))
    return config, out


def test_a_store_held_past_the_wait_fails_in_one_sentence_and_is_kept(
        built: tuple[Config, Path], monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    config, out = built
    path = config.cache_path / STORE_FILE
    rows, manifest = _rows(path), (out / MANIFEST_NAME).read_bytes()
    assert rows["articles"] > 0 and rows["pages"] > 0 and rows["urls"] > 0
    monkeypatch.setattr(sitegen.store, "BUSY_WAIT", 2.0)
    with held(path), caplog.at_level(logging.INFO, logger="sitegen"), \
            pytest.raises(StoreBusyError) as caught:
        run_build(config, BuildOptions(output=out, demo=True, offline=True))
    message = str(caught.value)
    assert "\n" not in message and caught.value.exit_code == 1
    assert str(path) in message and "another sitegen process" in message
    assert "damaged" not in message
    said = [r.getMessage() for r in caplog.records if r.name == "sitegen.store"]
    assert said == [f"waiting up to 2 s for the content store {path}: another sitegen "
                    "process is using it"]
    assert path.is_file() and _rows(path) == rows  # the same file, every row
    assert (out / MANIFEST_NAME).read_bytes() == manifest  # the previous output
    with open_store(config.cache_path, f"{config.api.base_url}|{config.api.workspace}"
                    ) as store:
        assert not store.recreated


def test_a_store_let_go_within_the_wait_is_built_from(
        built: tuple[Config, Path], caplog: pytest.LogCaptureFixture) -> None:
    config, out = built
    path = config.cache_path / STORE_FILE
    rows = _rows(path)
    with held(path) as holder:
        watcher = ReleaseWhenWaiting(holder)
        logging.getLogger("sitegen.store").addHandler(watcher)
        try:
            with caplog.at_level(logging.INFO, logger="sitegen"):
                report = run_build(config, BuildOptions(output=out, demo=True, offline=True))
        finally:
            logging.getLogger("sitegen.store").removeHandler(watcher)
        assert holder.released  # the build met the lock, and waited for it
    assert [m for m in watcher.said if m.startswith("waiting")]
    assert report.from_cache and report.html_pages > 0
    assert _rows(path)["articles"] == rows["articles"]


def test_a_file_that_is_no_database_is_still_started_afresh(tmp_path: Path) -> None:
    (tmp_path / STORE_FILE).write_bytes(b"not a database, " * 512)
    with open_store(tmp_path, "https://cas.test|ws") as store:
        assert store.recreated and store.discarded
