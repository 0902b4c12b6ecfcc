"""Watching the site's sources with watchdog, debounced into batches of changes.

Role: watch `site.toml` (its folder, not recursively), `templates/`, `themes/`, `pages/` and
`static/` (recursively,
and as soon as they appear), gather the paths editors touch, wait for a burst of saves to settle
(~30 ms of quiet, at most 1 s: an editor's write, rename and chmod land within a few
milliseconds), classify the batch with `changes.classify_changes` and hand a non-empty
`ChangeSet` to one callback, on one worker thread, one batch at a time. It must never watch the
output or cache folders (they are outside the watched folders, and classification ignores them
even when they sit inside the site folder), and never build anything itself.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path

from watchdog.events import (
    EVENT_TYPE_CLOSED_NO_WRITE,
    EVENT_TYPE_MODIFIED,
    EVENT_TYPE_OPENED,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

from sitegen.preview.changes import ChangeSet, WatchPlan, classify_changes

log = logging.getLogger("sitegen.preview")

DEBOUNCE_SECONDS = 0.03
MAX_WAIT_SECONDS = 1.0


class _Collector(FileSystemEventHandler):
    def __init__(self, watcher: Watcher) -> None:
        self._watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in (EVENT_TYPE_OPENED, EVENT_TYPE_CLOSED_NO_WRITE):
            return
        if event.is_directory and event.event_type == EVENT_TYPE_MODIFIED:
            return  # a folder's listing changed: the entries' own events say what
        paths = [Path(os.fsdecode(event.src_path))]
        if event.dest_path:
            paths.append(Path(os.fsdecode(event.dest_path)))
        self._watcher.add(paths)


class Watcher:
    """Watches a `WatchPlan` and calls *on_batch* with each settled, non-empty `ChangeSet`.

    *plan* is asked again for every batch, so a configuration reload that switches the theme
    is classified against the new plan.
    """

    def __init__(self, plan: Callable[[], WatchPlan], on_batch: Callable[[ChangeSet], None],
                 *, debounce: float = DEBOUNCE_SECONDS, max_wait: float = MAX_WAIT_SECONDS) -> None:
        self._plan = plan
        self._on_batch = on_batch
        self._debounce = debounce
        self._max_wait = max_wait
        self._pending: set[Path] = set()
        self._last_event = 0.0
        self._cond = threading.Condition()
        self._stopping = False
        self._observer: BaseObserver = Observer()
        self._handler = _Collector(self)
        self._watches: dict[Path, ObservedWatch] = {}
        self._worker = threading.Thread(target=self._run, name="sitegen-rebuild", daemon=False)

    def start(self) -> None:
        """Start watching and the worker thread."""
        # watchdog warns harmlessly when a `mkdir -p` tree races its own recursive scan
        warnings.filterwarnings("ignore", message=r"Callback with id .* already exists",
                                category=RuntimeWarning)
        self._schedule_all()
        self._observer.start()
        self._worker.start()

    def stop(self) -> None:
        """Stop watching; joins the observer and the worker (after a rebuild in progress)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._observer.stop()
        if self._observer.is_alive():
            self._observer.join()
        if self._worker.is_alive():
            self._worker.join()

    def add(self, paths: list[Path]) -> None:
        """Record changed paths (called from watchdog's thread; also usable directly)."""
        plan = self._plan()
        for path in paths:
            if path.parent == plan.root and path in plan.watched_dirs():
                self._schedule(path)  # templates/, themes/ or static/ just appeared
        with self._cond:
            self._pending.update(paths)
            self._last_event = time.monotonic()
            self._cond.notify_all()

    def _schedule_all(self) -> None:
        plan = self._plan()
        self._schedule(plan.root, recursive=False)
        config_dir = plan.config_file.parent
        if config_dir != plan.root:
            self._schedule(config_dir, recursive=False)
        for folder in plan.watched_dirs():
            self._schedule(folder)

    def _schedule(self, folder: Path, recursive: bool = True) -> None:
        if folder in self._watches or not folder.is_dir():
            return
        try:
            self._watches[folder] = self._observer.schedule(self._handler, str(folder),
                                                            recursive=recursive)
        except OSError as error:
            log.warning("cannot watch %s (%s); changes there will not rebuild the site",
                        folder, error.strerror or error)

    def _next_batch(self) -> set[Path] | None:
        with self._cond:
            while not self._pending and not self._stopping:
                self._cond.wait()
            if self._stopping:
                return None
            first = time.monotonic()
            while not self._stopping:
                now = time.monotonic()
                quiet_until = self._last_event + self._debounce
                if now >= quiet_until or now - first >= self._max_wait:
                    break
                self._cond.wait(timeout=min(quiet_until, first + self._max_wait) - now)
            if self._stopping:
                return None
            batch, self._pending = self._pending, set()
            return batch

    def _run(self) -> None:
        while True:
            batch = self._next_batch()
            if batch is None:
                return
            changes = classify_changes(batch, self._plan())
            if changes.is_empty:
                log.debug("ignored changes: %s", ", ".join(map(str, changes.ignored)))
                continue
            try:
                self._on_batch(changes)
            except Exception as error:  # a rebuild must never kill the watcher
                log.error("the preview rebuild failed unexpectedly (%s: %s); still watching",
                          type(error).__name__, error)
