"""The watcher with real watchdog events: debounced batches, ignored output, late folders."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sitegen.preview.changes import ChangeSet, WatchPlan
from sitegen.preview.watch import Watcher


class Batches:
    def __init__(self) -> None:
        self.items: list[ChangeSet] = []
        self.arrived = threading.Event()

    def __call__(self, changes: ChangeSet) -> None:
        self.items.append(changes)
        self.arrived.set()

    def wait(self, timeout: float = 10.0) -> ChangeSet:
        assert self.arrived.wait(timeout), "no batch arrived"
        self.arrived.clear()
        return self.items[-1]


@pytest.fixture()
def site(tmp_path: Path) -> Path:
    root = tmp_path.resolve()
    (root / "templates").mkdir()
    (root / "templates" / "base.html").write_text("v0", encoding="utf-8")
    (root / "site.toml").write_text("[site]\n", encoding="utf-8")
    (root / "_site").mkdir()
    return root


@pytest.fixture()
def watching(site: Path) -> Iterator[tuple[Watcher, Batches]]:
    plan = WatchPlan(config_file=site / "site.toml", root=site, excluded=(site / "_site",))
    batches = Batches()
    watcher = Watcher(lambda: plan, batches, debounce=0.15, max_wait=1.0)
    watcher.start()
    try:
        yield watcher, batches
    finally:
        watcher.stop()
        assert not any(t.name == "sitegen-rebuild" for t in threading.enumerate())


def test_a_burst_of_saves_is_one_batch(site: Path) -> None:
    # A debounce well above the 20 ms gaps of the burst, so that a loaded machine stalling
    # this thread (or watchdog's) for a moment cannot split it: coalescing is what is tested.
    plan = WatchPlan(config_file=site / "site.toml", root=site, excluded=(site / "_site",))
    batches = Batches()
    watcher = Watcher(lambda: plan, batches, debounce=0.6, max_wait=10.0)
    watcher.start()
    try:
        for i in range(5):
            (site / "templates" / "base.html").write_text(f"v{i + 1}", encoding="utf-8")
            (site / "templates" / ".base.html.swp").write_text("x", encoding="utf-8")
            time.sleep(0.02)
        changes = batches.wait()
        assert changes.templates == (site / "templates" / "base.html",)
        # Nothing else arrives once the burst settled.
        assert not batches.arrived.wait(1.5)
        assert len(batches.items) == 1
    finally:
        watcher.stop()


def test_config_save_by_rename_is_seen(site: Path, watching: tuple[Watcher, Batches]) -> None:
    _, batches = watching
    temporary = site / "site.toml.tmp"
    temporary.write_text("[site]\ntitle='x'\n", encoding="utf-8")
    temporary.replace(site / "site.toml")
    changes = batches.wait()
    assert changes.config == (site / "site.toml",)


def test_output_writes_never_trigger_a_batch(site: Path,
                                             watching: tuple[Watcher, Batches]) -> None:
    _, batches = watching
    for i in range(20):
        (site / "_site" / f"page{i}.html").write_text("x", encoding="utf-8")
    (site / ".sitegen").mkdir()
    (site / ".sitegen" / "cache.json").write_text("{}", encoding="utf-8")
    assert not batches.arrived.wait(0.8)


def test_a_themes_folder_created_later_is_watched(site: Path,
                                                  watching: tuple[Watcher, Batches]) -> None:
    _, batches = watching
    theme = site / "themes" / "default" / "static"
    theme.mkdir(parents=True)
    batches.wait()  # the new folder itself
    time.sleep(0.3)  # let the new watch settle before writing into it (not an assertion)
    (theme / "style.css").write_text("body{}", encoding="utf-8")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        changes = batches.wait()
        if theme / "style.css" in changes.static:
            break
    else:
        pytest.fail("the stylesheet change was not seen")


def test_a_failing_callback_does_not_kill_the_watcher(site: Path) -> None:
    plan = WatchPlan(config_file=site / "site.toml", root=site)
    seen = Batches()
    calls = {"n": 0}

    def flaky(changes: ChangeSet) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("boom")
        seen(changes)

    watcher = Watcher(lambda: plan, flaky, debounce=0.05)
    watcher.start()
    try:
        watcher.add([site / "templates" / "base.html"])
        deadline = time.monotonic() + 5
        while calls["n"] < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        watcher.add([site / "templates" / "base.html"])
        assert seen.wait().templates == (site / "templates" / "base.html",)
    finally:
        watcher.stop()
