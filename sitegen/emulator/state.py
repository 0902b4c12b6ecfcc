"""The emulator's live state: one workspace's records, the call counter, posted events.

Role: hold the workspace JSON a `create_app` was given (deep-copied, so tests can mutate it
freely), index it by id, count every request per route template, keep accepted analytics events
and the current digest, and offer the mutation helpers tests use to play the service changing
between two syncs. It must never do I/O or know about HTTP.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from sitegen.emulator.faults import Faults

Record = dict[str, Any]

LISTINGS_KEPT = 256  # cached query results before the cache starts over
COLLECTIONS = ("agents", "clusters", "authorIdentities", "articles", "socialPosts")


def format_timestamp(moment: datetime) -> str:
    """ISO 8601 UTC with milliseconds and a Z, the service's timestamp form."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + (
        f"{moment.microsecond // 1000:03d}Z"
    )


def parse_stamp(stamp: Any) -> datetime | None:
    """A service timestamp (or a datetime) as an aware datetime; None when it is none."""
    if isinstance(stamp, datetime):
        return stamp
    if not isinstance(stamp, str):
        return None
    try:
        parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def later_than(previous: Any) -> str:
    """Now, or one millisecond after `previous` when that is later: a strictly newer stamp."""
    now = datetime.now(UTC)
    now = now.replace(microsecond=now.microsecond // 1000 * 1000)  # as written: milliseconds
    before = parse_stamp(previous)
    if before is not None and before >= now:
        now = before + timedelta(milliseconds=1)
    return format_timestamp(now)


class EmulatorState:
    """Everything one emulator app knows and remembers; `app.state.emulator`."""

    def __init__(self, data: dict[str, Any], faults: Faults | None = None, *,
                 key: str | None = None) -> None:
        self.workspace: Record = {}
        self.collections: dict[str, list[Record]] = {}
        self.digest: Record | None = None
        self._positions: dict[str, dict[Any, int]] = {}
        self.version = 0
        """Bumped by every mutation helper: listings cached before it are stale."""
        self.replace(data)
        self.faults: Faults = faults if faults is not None else Faults()
        self.calls: Counter[str] = Counter()
        self.analytics_events: list[Record] = []
        self.key = key
        """The only API key accepted, or None for any non-empty key. Never log it."""
        self.requests = 0
        """API requests so far (preflights excluded): drives quota and rate limits."""
        self.rate_window = 0
        self.rate_window_count = 0
        self._listings: dict[tuple[Any, ...], list[Record]] = {}
        self._listings_version = 0

    @property
    def workspace_id(self) -> str:
        return str(self.workspace.get("id", ""))

    def records(self, collection: str) -> list[Record]:
        """The stored records of `collection`, in data order (not a copy: change records
        only through the helpers below, which invalidate cached listings)."""
        return self.collections[collection]

    def find(self, collection: str, record_id: str) -> Record | None:
        """The first record of `collection` with this id, or None.

        An index of positions by id is trusted only while the record there still has that
        id, else rebuilt, so records changed in the list itself are found as a scan would.
        """
        records = self.collections[collection]
        position = self._positions.get(collection, {}).get(record_id)
        if position is not None and position < len(records):
            record = records[position]
            if record.get("id") == record_id:
                return record
        index: dict[Any, int] = {}
        for number, record in enumerate(records):
            index.setdefault(record.get("id"), number)
        self._positions[collection] = index
        position = index.get(record_id)
        return None if position is None else records[position]

    def listing(self, key: tuple[Any, ...], build: Callable[[], list[Record]]) -> list[Record]:
        """The matched, sorted records of one query (`key`), kept until the next mutation
        (a filter and sort per page would make a long listing quadratic)."""
        if self._listings_version != self.version or len(self._listings) >= LISTINGS_KEPT:
            self._listings.clear()
            self._listings_version = self.version
        found = self._listings.get(key)
        if found is None:
            found = self._listings[key] = build()
        return found

    def clock(self) -> str:
        """The service's time for a change: now, or one millisecond after the newest
        `updatedAt` of any article when the data is dated later (a file dated in the future):
        the service's clock never runs behind its records, so the next sync, which reads
        articles newest update first down to what it saw last, finds the change."""
        stamps = (parse_stamp(article.get("updatedAt")) for article in self.collections["articles"])
        return later_than(max((stamp for stamp in stamps if stamp is not None), default=None))

    # --- mutation helpers (tests play the service changing between syncs) -------

    def replace(self, data: dict[str, Any]) -> None:
        """Serve *data* (a workspace JSON object, deep-copied) from now on, instead of what
        was served: a reloaded `--data` file. Counters, faults and analytics events stay."""
        if not isinstance(data, dict) or not isinstance(data.get("workspace"), dict):
            raise ValueError("workspace data must be a JSON object with a 'workspace' object")
        data = copy.deepcopy(data)
        self.workspace = data["workspace"]
        self.collections = {
            name: [item for item in data.get(name) or [] if isinstance(item, dict)]
            for name in COLLECTIONS
        }
        digest = data.get("digest")
        self.digest = digest if isinstance(digest, dict) else None
        self._positions = {}
        self.version += 1

    def update_article(self, article_id: str, **fields: Any) -> None:
        """Change fields of an article; `updatedAt` moves forward unless given."""
        article = self.find("articles", article_id)
        if article is None:
            raise KeyError(f"no article {article_id!r} in the emulated workspace")
        stamp = self.clock()  # later than the article's own `updatedAt` too
        self.version += 1
        article.update(copy.deepcopy(fields))
        if "updatedAt" not in fields:
            article["updatedAt"] = stamp

    def delete_article(self, article_id: str) -> None:
        """Remove an article, as a deletion in the service would."""
        articles = self.collections["articles"]
        kept = [a for a in articles if a.get("id") != article_id]
        if len(kept) == len(articles):
            raise KeyError(f"no article {article_id!r} in the emulated workspace")
        articles[:] = kept
        self.version += 1

    def add_article(self, record: dict[str, Any]) -> None:
        """Add an article record (database form); its id must be new."""
        article_id = record.get("id")
        if not isinstance(article_id, str) or not article_id:
            raise ValueError("an added article needs a string id")
        if self.find("articles", article_id) is not None:
            raise ValueError(f"article {article_id!r} already exists in the emulated workspace")
        article = copy.deepcopy(record)
        article.setdefault("workspaceId", self.workspace_id)
        self.collections["articles"].append(article)
        self.version += 1
