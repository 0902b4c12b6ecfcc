"""The live-reload channel: build state and the Server-Sent Events every open page listens to.

Role: hold what open browsers need to know (which build is current, the problem that broke the
last build, a content-refresh notice) and fan events out to every subscribed event stream.
Builds report here; the HTTP layer streams from here. Events carry plain data (JSON); the page
script renders text with `textContent`. This module must never do I/O or render HTML.
"""

from __future__ import annotations

import json
import queue
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

KEEPALIVE_SECONDS = 15.0  # an idle stream sends a keep-alive comment this often


@dataclass(frozen=True)
class Problem:
    """Why the latest build (or configuration reload) failed, as shown in the overlay."""

    message: str
    file: str | None = None
    line: int | None = None
    kind: str = "build"

    def as_data(self) -> dict[str, Any]:
        """The JSON-ready form sent to the page."""
        return {"kind": self.kind, "file": self.file, "line": self.line, "message": self.message}

    def one_line(self) -> str:
        """The terminal form: `templates/base.html:12: message`."""
        where = self.file or ""
        if where and self.line:
            where = f"{where}:{self.line}"
        return f"{where}: {self.message}" if where else self.message


@dataclass(frozen=True)
class Event:
    """One Server-Sent Event: a name and a JSON object."""

    name: str
    data: dict[str, Any] = field(default_factory=dict)

    def encode(self) -> bytes:
        """The wire form (`event:` and one `data:` line; JSON never contains a raw newline)."""
        payload = json.dumps(self.data, ensure_ascii=True, separators=(",", ":"))
        return f"event: {self.name}\ndata: {payload}\n\n".encode("ascii")


class Subscription:
    """One open event stream's queue (`None` in it: the channel closed); *path* is the URL
    path its page shows, as the page's script reported it; *wake* is called after each put
    (from the publishing thread: an event loop's stream waits on it instead of a thread)."""

    def __init__(self, path: str | None = None,
                 wake: Callable[[], None] | None = None) -> None:
        self._queue: queue.Queue[Event | None] = queue.Queue()
        self.path = path
        self._wake = wake

    def put(self, event: Event | None) -> None:
        self._queue.put(event)
        if self._wake is not None:
            self._wake()

    def get(self, timeout: float) -> Event | None:
        """The next event; raises `queue.Empty` after *timeout* seconds without one."""
        return self._queue.get(timeout=timeout)

    def get_nowait(self) -> Event | None:
        """The next event if one is waiting; raises `queue.Empty` otherwise."""
        return self._queue.get_nowait()


class ReloadChannel:
    """Current preview state plus fan-out to subscribers; safe to use from any thread."""

    def __init__(self) -> None:
        self.instance = secrets.token_hex(4)
        self._lock = threading.Lock()
        self._generation = 0
        self._pending: int | None = None  # a build whose open pages were served ahead
        self._problem: Problem | None = None
        self._notice: str | None = None
        self._subscribers: set[Subscription] = set()
        self._closed = False

    @property
    def build_id(self) -> str:
        """Identifies the build being served: this server instance and its build generation."""
        with self._lock:
            return f"{self.instance}:{self._generation}"

    @property
    def problem(self) -> Problem | None:
        with self._lock:
            return self._problem

    @property
    def next_build_id(self) -> str:
        """The id the build in progress will have when it commits."""
        with self._lock:
            return f"{self.instance}:{self._generation + 1}"

    def open_paths(self) -> frozenset[str]:
        """The URL paths open pages reported (pages to render first on a rebuild)."""
        with self._lock:
            return frozenset(s.path for s in self._subscribers if s.path)

    def subscribe(self, path: str | None = None,
                  wake: Callable[[], None] | None = None) -> Subscription:
        """A new stream; its first event is `hello` with the whole current state."""
        subscription = Subscription(path, wake)
        with self._lock:
            subscription.put(Event("hello", self._state()))
            if self._closed:
                subscription.put(None)
            else:
                self._subscribers.add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        with self._lock:
            self._subscribers.discard(subscription)

    @property
    def subscriber_count(self) -> int:
        with self._lock:
            return len(self._subscribers)

    def early(self, paths: list[str]) -> None:
        """The build in progress served the pages at *paths* ahead: they reload now, with its
        id (`next_build_id`), so the `reload` at its commit reloads only the other pages."""
        with self._lock:
            self._pending = self._generation + 1
            self._problem = None
            self._publish(Event("reload", {"build": f"{self.instance}:{self._pending}",
                                           "paths": list(paths)}))

    def built(self, *, css_only: bool = False) -> None:
        """A build succeeded: clear the problem; pages reload (or just swap stylesheets)."""
        with self._lock:
            self._generation += 1
            self._pending = None
            self._problem = None
            name = "css" if css_only else "reload"
            self._publish(Event(name, {"build": f"{self.instance}:{self._generation}"}))

    def failed(self, problem: Problem) -> None:
        """A build or configuration reload failed: show the overlay; the old build stays."""
        with self._lock:
            if self._pending is not None:  # its early pages carry its id: never reuse it
                self._generation, self._pending = self._pending, None
            self._problem = problem
            self._publish(Event("problem", problem.as_data()))

    def notify(self, notice: str | None) -> None:
        """Show (or with None, clear) a non-fatal notice, e.g. a failed content refresh."""
        with self._lock:
            if notice == self._notice:
                return
            self._notice = notice
            self._publish(Event("notice", {"message": notice}))

    def close(self) -> None:
        """End every stream (server shutdown); later subscribers end at once."""
        with self._lock:
            self._closed = True
            for subscription in self._subscribers:
                subscription.put(None)
            self._subscribers.clear()

    def _state(self) -> dict[str, Any]:
        return {
            "build": f"{self.instance}:{self._generation}",
            "pending": (f"{self.instance}:{self._pending}" if self._pending is not None
                        else None),
            "problem": self._problem.as_data() if self._problem else None,
            "notice": self._notice,
        }

    def _publish(self, event: Event) -> None:
        for subscription in self._subscribers:
            subscription.put(event)
