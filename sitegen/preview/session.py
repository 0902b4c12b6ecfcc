"""One preview session: the last good configuration, rebuilds by kind of change, content refreshes.

Role: decide what each event needs and run it, one build at a time: a template or static change
re-renders without fetching; a site.toml change reloads the configuration (an invalid one keeps
the last good one and shows the error) and fetches only when `[api]` changed; a periodic refresh
fetches. Every outcome goes to the terminal as one line (a rebuild's and a refresh's name, for
each page open browsers show that it wrote, why: `sitegen.why`) and to open pages through the
`ReloadChannel`; a failure never stops the preview. A rebuild or refresh ended because the
preview is stopping (`Interrupted`) says nothing: the summary line `serve` prints is the last.
This module must never serve HTTP, watch files or write the output itself.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sitegen.config import Config
from sitegen.errors import ApiError, CacheError, ConfigError, Interrupted
from sitegen.preview.builder import Builder, BuildSummary, settle_heap
from sitegen.preview.changes import ChangeSet, WatchPlan, plan_for
from sitegen.preview.fresh import output_path
from sitegen.preview.problems import describe_failure
from sitegen.preview.reload import ReloadChannel

log = logging.getLogger("sitegen.preview")


@dataclass
class SessionStats:
    """Counts for the summary line printed when the preview stops."""

    rebuilds: int = 0
    failed_rebuilds: int = 0
    refreshes: int = 0
    failed_refreshes: int = 0

    def line(self) -> str:
        def part(count: int, failed: int, noun: str) -> str:
            text = f"{count} {noun}{'' if count == 1 else 'es' if noun.endswith('sh') else 's'}"
            return text + (f" ({failed} failed)" if failed else "")

        return ("preview stopped: " + part(self.rebuilds, self.failed_rebuilds, "rebuild") + ", "
                + part(self.refreshes, self.failed_refreshes, "content refresh"))


def _pages(summary: BuildSummary) -> str:
    return _count(summary.written)


def _calls(summary: BuildSummary) -> str:
    """"; 34 API calls (the drafts' included)": every request of the build's sync, or none."""
    calls = summary.api_calls
    return f"; {calls} API call{'' if calls == 1 else 's'} (the drafts' included)" \
        if calls else ""


def _in_view(summary: BuildSummary, open_paths: frozenset[str]) -> str:
    """"; /a/: article:<id> changed" for each page open browsers show that the build wrote
    (why it was rendered again, `sitegen.why`), or nothing."""
    said = []
    for url_path in sorted(open_paths):
        rel = output_path(url_path)
        if rel is not None and rel in summary.why:
            said.append(f"{url_path}: {summary.why[rel]}")
    return "".join(f"; {line}" for line in said)


def _count(pages: int) -> str:
    return f"{pages:,} page{'' if pages == 1 else 's'}"


class PreviewSession:
    """Owns the last good configuration and runs builds for changes and refreshes."""

    def __init__(self, *, load_config: Callable[[], Config], build: Builder,
                 channel: ReloadChannel, config_file: Path, excluded: tuple[Path, ...] = (),
                 can_fetch: bool = True) -> None:
        self._load_config = load_config
        self._build = build
        self._channel = channel
        self._config_file = config_file
        self._excluded = excluded
        self._can_fetch = can_fetch
        self._lock = threading.Lock()
        self._config = load_config()  # a ConfigError here stops `serve` before anything
        self.stats = SessionStats()

    @property
    def config(self) -> Config:
        """The last good configuration."""
        return self._config

    def plan(self) -> WatchPlan:
        """What to watch for the current configuration."""
        return plan_for(self._config, self._config_file, self._excluded)

    def start(self) -> None:
        """The first build (an API failure falls back to the store). Errors that make the
        preview pointless propagate; a template or render error is shown and it goes on."""
        with self._lock:
            try:
                summary = self._build(self._config, fetch=self._can_fetch)
            except ApiError as error:
                log.warning("fetching content failed (%s); building from the content cache", error)
                try:
                    summary = self._build(self._config, fetch=False)
                except CacheError:
                    raise error from None
                except Exception as inner:
                    self._failed(inner)
                    return
                self._channel.notify(f"Content could not be refreshed: {error}")
            except (ConfigError, CacheError):
                raise
            except Exception as error:
                self._failed(error)
                return
            self._channel.built()
            settle_heap()  # (before the line: `serve` starts watching right after it)
            log.info("built %s in %.2f s%s", _count(summary.pages), summary.seconds,
                     _calls(summary))

    def apply(self, changes: ChangeSet) -> None:
        """Rebuild for one batch of source changes (the watcher's callback)."""
        with self._lock:
            fetch = False
            if changes.config:
                try:
                    fresh = self._load_config()
                except ConfigError as error:
                    self.stats.failed_rebuilds += 1
                    self._failed(error)
                    return
                fetch = self._can_fetch and fresh.api != self._config.api
                self._config = fresh
            css_only = changes.css_only and self._channel.problem is None
            # Only templates changed: the open pages may be served before the build ends
            # (assets and configuration are the ones already served).
            first = changes.templates and not changes.static and not changes.config
            try:
                if first:
                    summary = self._build(self._config, fetch=False, first=True)
                else:
                    summary = self._build(self._config, fetch=fetch)
            except Interrupted:
                log.debug("rebuild stopped: the preview is stopping")
                return
            except Exception as error:
                self.stats.failed_rebuilds += 1
                self._failed(error)
                return
            self.stats.rebuilds += 1
            self._channel.built(css_only=css_only)
            log.info("rebuilt %s in %.2f s (%s)%s", _pages(summary), summary.seconds,
                     changes.describe(), _in_view(summary, self._channel.open_paths()))
            settle_heap()

    def refresh(self) -> None:
        """Fetch fresh content and rebuild; an API failure is a warning and a page notice."""
        if not self._can_fetch:
            return
        with self._lock:
            number = self.stats.refreshes + self.stats.failed_refreshes + 1
            try:
                summary = self._build(self._config, fetch=True)
            except Interrupted:
                log.debug("content refresh stopped: the preview is stopping")
                return
            except ApiError as error:
                self.stats.failed_refreshes += 1
                log.warning("content refresh #%d failed (%s); still serving the last good build",
                            number, error)
                self._channel.notify(f"Content refresh failed: {error}")
                return
            except Exception as error:
                self.stats.failed_refreshes += 1
                self._failed(error)
                return
            self.stats.refreshes += 1
            self._channel.notify(None)
            if summary.changed or self._channel.problem is not None:
                self._channel.built()
            log.info("content refresh #%d: %s changed in %.2f s%s%s", number, _pages(summary),
                     summary.seconds, _calls(summary),
                     _in_view(summary, self._channel.open_paths()))
            settle_heap()

    def _failed(self, error: BaseException) -> None:
        log.debug("build failure", exc_info=error)
        problem = describe_failure(error, self._config.root, self._config_file)
        self._channel.failed(problem)
        log.error("%s (still serving the last good build)", problem.one_line())
