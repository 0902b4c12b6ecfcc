"""The call ledger: what one sync spent against the service's API.

Role: the client records every HTTP request here (endpoint template, status, retry or not,
response bytes); the sync adds the API version and the detail requests the store saved. Build
reports and `sitegen fetch` read it; the report of a build whose sync failed reads the newest
ledger started since the build began (`latest_ledger`). It must never hold request headers,
keys, query strings or record ids: endpoints are templates (`GET
/api/v2/workspaces/{id}/articles/{id}`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

_ID_SEGMENT = re.compile(r"/[0-9a-fA-F]{24}(?=/|$)")


def endpoint_template(method: str, path: str) -> str:
    """`GET /api/v2/workspaces/65f0.../articles` → `GET /api/v2/workspaces/{id}/articles`."""
    path = path.split("?", 1)[0]
    return f"{method.upper()} {_ID_SEGMENT.sub('/{id}', path)}"


@dataclass(frozen=True)
class CallRecord:
    """One HTTP request: its endpoint template, status (0: no answer), retry flag, bytes."""

    endpoint: str
    status: int
    retry: bool
    bytes: int


@dataclass
class CallLedger:
    """Every call of one sync, in the order they were answered."""

    version: Literal["v1", "v2"] | None = None
    detail_saved: int = 0
    records: list[CallRecord] = field(default_factory=list)
    #: Called with the number of requests so far after each one (the fetch's status line).
    watch: Callable[[int], None] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        global _started, _latest
        _started += 1
        _latest = (_started, self)

    def record(self, endpoint: str, status: int, *, retry: bool = False, size: int = 0) -> None:
        """Add one request; `endpoint` must already be a template (see `endpoint_template`)."""
        self.records.append(CallRecord(endpoint, status, retry, size))
        if self.watch is not None:
            self.watch(len(self.records))

    @property
    def total(self) -> int:
        """Requests made, retries included (each one counts against the quota)."""
        return len(self.records)

    @property
    def retries(self) -> int:
        """Requests that repeated an earlier failed one."""
        return sum(1 for item in self.records if item.retry)

    @property
    def bytes(self) -> int:
        """Response body bytes received."""
        return sum(item.bytes for item in self.records)

    def by_endpoint(self) -> dict[str, int]:
        """Requests per endpoint template, sorted by template for stable reports."""
        counts = Counter(item.endpoint for item in self.records)
        return dict(sorted(counts.items()))

    def to_report(self) -> dict[str, Any]:
        """The `api` section of a build report."""
        return {
            "version": self.version,
            "calls": self.by_endpoint(),
            "total": self.total,
            "retries": self.retries,
            "bytes": self.bytes,
            "saved": self.detail_saved,
        }

    def __repr__(self) -> str:
        return (f"CallLedger(version={self.version!r}, total={self.total}, "
                f"retries={self.retries}, saved={self.detail_saved})")


#: How many ledgers this process has started, and the newest with its number.
_started = 0
_latest: tuple[int, CallLedger] | None = None


def ledgers_started() -> int:
    """How many call ledgers this process has started so far."""
    return _started


def latest_ledger(since: int) -> CallLedger | None:
    """The newest ledger, if it was started after `ledgers_started()` answered *since*."""
    if _latest is None or _latest[0] <= since:
        return None
    return _latest[1]
