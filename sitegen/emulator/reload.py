"""`sitegen emulate --data FILE` follows its file: a changed file is served from then on.

Role: poll the file's stat every quarter second (a save in place, an editor's rename over it
and a generator's rewrite all change it; no watcher thread, works on every file system), read
a changed file off the event loop with `serve.read_data`'s checks, and swap it in on the loop:
one line says what changed. An article whose record the reload changes gets an `updatedAt`
later than anything served before, unless the file already dates it so (`stamp_changes`), so
the next incremental sync sees exactly the articles that changed, as the service's own
clock would. A file that does not read or cannot be served (bad JSON, no workspace, a list
that is not one, a date past the calendar's end, gone) keeps what is served, with one warning
naming the file and the problem, and the poller goes on to the next save. Admin changes made
before a reload are replaced by the file's content. It must never write the file.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from typing import Any

from sitegen.emulator.state import EmulatorState, Record, later_than, parse_stamp
from sitegen.errors import ConfigError

logger = logging.getLogger("sitegen.emulator")

POLL_SECONDS = 0.25
Signature = tuple[int, int, int, int] | None


def signature(path: str) -> Signature:
    """What tells a changed file from the same one (None: it cannot be looked at)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino)


def stamp_changes(served: list[Record], incoming: list[Record]) -> tuple[int, int, int]:
    """Date the changed articles of *incoming* (in place) as the service would; returns how
    many articles changed, were added and were removed against *served*.

    A changed or added article keeps the file's `updatedAt` only when it is later than
    every `updatedAt` served so far and every unchanged one of the file; else it gets one
    that is (the file's value would hide the change from a sync that has seen newer ones).
    """
    before = {record.get("id"): record for record in served}
    moved = [record for record in incoming if before.get(record.get("id")) != record]
    moved_ids = {record.get("id") for record in moved}
    after = {record.get("id") for record in incoming}
    removed = sum(1 for key in before if key not in after)
    added = sum(1 for record in moved if record.get("id") not in before)
    settled = [record.get("updatedAt") for record in served]
    settled += [record.get("updatedAt") for record in incoming
                if record.get("id") not in moved_ids]
    newest = max((s for s in map(parse_stamp, settled) if s is not None), default=None)
    for record in moved:
        stamp = parse_stamp(record.get("updatedAt"))
        if newest is not None and (stamp is None or stamp <= newest):
            record["updatedAt"] = later_than(newest)
            newest = parse_stamp(record["updatedAt"])
    return len(moved) - added, added, removed


def _summary(path: str, counts: tuple[int, int, int], total: int) -> str:
    changed, added, removed = counts
    return (f"reloaded {path}: {total} articles ({changed} changed, {added} added, "
            f"{removed} removed)")


class DataReloader:
    """Polls one `--data` file and swaps its content into a running emulator's state."""

    def __init__(self, path: str, read: Callable[[str], dict[str, Any]]) -> None:
        self.path = path
        self.read = read
        self.seen = signature(path)
        """The stat of the content served now (taken before it was read)."""

    async def run(self, state: EmulatorState) -> None:
        """Poll until cancelled."""
        while True:
            await asyncio.sleep(POLL_SECONDS)
            await self.check(state)

    async def check(self, state: EmulatorState) -> None:
        """Reload the file once when it changed since it was last read."""
        now = signature(self.path)
        if now == self.seen:
            return
        if now is None:
            self.seen = now
            logger.warning("--data file %s cannot be read any more; still serving its last "
                           "content (put the file back to reload it)", self.path)
            return
        try:
            data = await asyncio.to_thread(self.read, self.path)
            articles = data.get("articles")
            if articles is not None and not isinstance(articles, list):
                raise ConfigError(f"--data file {self.path} has an 'articles' value that is "
                                  "not a list; fix the file")
            articles = [item for item in articles or [] if isinstance(item, dict)]
            counts = stamp_changes(state.records("articles"), articles)
            data["articles"] = articles
            state.replace(data)  # (all or nothing: what is served changes only here)
        except Exception as error:  # (any file at all: the poller must outlive it)
            if signature(self.path) != now:
                return  # caught half-written: the next poll reads the finished file
            self.seen = now
            problem = (str(error) if isinstance(error, ConfigError) else
                       f"--data file {self.path} cannot be served "
                       f"({error.__class__.__name__}: {error}); fix the file")
            logger.warning("%s; still serving its previous content",
                           " ".join(problem.split()))
            return
        self.seen = now
        logger.info("%s", _summary(self.path, counts, len(articles)))
