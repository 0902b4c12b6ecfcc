"""The fetch's status line: requests while the listings are read, then articles n/N.

Role: feed `sitegen.progress.Progress` (drawn on a terminal only, throttled) from a sync: the call
ledger reports every request (retries included) while the listings are read, then each article
detail request as it ends. It must never make a request or print anything itself, and it lets go
of the ledger when closed.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, TypeVar

from sitegen.fetch.ledger import CallLedger

if TYPE_CHECKING:
    from sitegen.progress import Progress

T = TypeVar("T")


class FetchStatus:
    """The status line of one sync (see the module docstring); `close` it at the end."""

    def __init__(self, progress: Progress, ledger: CallLedger) -> None:
        self.progress = progress
        self.ledger = ledger
        self.details = 0
        self.done = 0
        ledger.watch = self.requested

    def requested(self, requests: int) -> None:
        if not self.details:
            self.progress.status(f"fetching: {requests} API request{'s' if requests != 1 else ''}")

    def expect(self, details: int) -> None:
        self.details = details
        if details:
            self.progress.update("fetching articles", 0, details)

    async def counted(self, work: Awaitable[T]) -> T:
        result = await work
        self.done += 1
        self.progress.update("fetching articles", self.done, self.details)
        return result

    def close(self) -> None:
        self.ledger.watch = None
        self.progress.clear()
