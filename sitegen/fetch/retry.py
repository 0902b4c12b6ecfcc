"""The client's patience: how many requests at once, and when to try one again.

Role: the pure half of `client.py`'s retry policy. `AdaptiveLimit` bounds the requests in flight
(it halves on 429 and grows back by one per full round); `Transient` is an answer worth retrying
(429, 5xx, a timeout, a reset, a body that is not JSON); `backoff` is exponential with full
jitter, or the wait the service asked for (`server_wait`: Retry-After or X-RateLimit-Reset, at
most `SERVER_WAIT_CAP`); `unresolved` tells a failed name lookup among a connection's
failures. It must never make a request, sleep, or import httpx.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import socket
import time
from collections import deque
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

BACKOFF_BASE = 0.25  # seconds; attempt n sleeps uniform(0, min(BACKOFF_CAP, base * 2**n))
BACKOFF_CAP = 8.0
SERVER_WAIT_CAP = 30.0  # the longest Retry-After / X-RateLimit-Reset we are willing to honour


class Transient(Exception):
    """An answer worth retrying; *wait* is what the service asked for (None: our backoff)."""

    def __init__(self, reason: str, wait: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.wait = wait


class AdaptiveLimit:
    """A semaphore whose size halves on 429 (min 1) and grows back by one per full round.

    A freed slot is handed straight to the longest waiter (its future completes with the
    slot already counted), so no waiter is woken only to find the slot gone. A retry
    (`slot(retry=True)`) waits ahead of requests not yet tried: its retry budget runs from its
    first attempt, so it must not be spent queueing behind the rest of a sync.
    """

    def __init__(self, maximum: int) -> None:
        self.maximum = max(1, maximum)
        self.limit = self.maximum
        self.active = 0
        self._streak = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def __aenter__(self) -> None:
        await self._acquire(retry=False)

    @asynccontextmanager
    async def slot(self, *, retry: bool) -> AsyncIterator[None]:
        """Hold one slot for the block; a *retry* is served before untried requests."""
        await self._acquire(retry=retry)
        try:
            yield
        finally:
            self._release()

    async def _acquire(self, *, retry: bool) -> None:
        if self.active < self.limit and not self._waiters:
            self.active += 1
            return
        waiter = asyncio.get_running_loop().create_future()
        if retry:
            self._waiters.appendleft(waiter)
        else:
            self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()  # handed a slot, then cancelled before using it
            raise

    async def __aexit__(self, *exc: object) -> None:
        self._release()

    def _release(self) -> None:
        self.active -= 1
        self._hand_over()

    def _hand_over(self) -> None:
        while self._waiters and self.active < self.limit:
            waiter = self._waiters.popleft()
            if not waiter.done():  # a cancelled waiter is skipped
                self.active += 1
                waiter.set_result(None)

    def throttle(self) -> None:
        self.limit = max(1, self.limit // 2)
        self._streak = 0

    def succeeded(self) -> None:
        if self.limit >= self.maximum:
            return
        self._streak += 1
        if self._streak >= self.limit:
            self.limit += 1
            self._streak = 0
            self._hand_over()


def server_wait(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asked us to wait (Retry-After or X-RateLimit-Reset), if any."""
    retry_after = headers.get("retry-after", "").strip()
    if retry_after:
        try:
            return max(0.0, float(retry_after))
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(retry_after)
            except (TypeError, ValueError):
                when = None
            if when is not None:
                return max(0.0, when.timestamp() - time.time())
    reset = headers.get("x-ratelimit-reset", "").strip()
    if reset:
        try:
            value = float(reset)
        except ValueError:
            return None
        if value > 1e12:  # epoch milliseconds
            value = value / 1000.0 - time.time()
        elif value > 1e9:  # epoch seconds
            value -= time.time()
        return max(0.0, value)
    return None


def backoff(rng: random.Random, attempt: int, wait: float | None) -> float:
    """The pause before retry number *attempt*: full jitter, or the server's *wait*."""
    jitter = rng.uniform(0.0, min(BACKOFF_CAP, BACKOFF_BASE * 2 ** (attempt - 1)))
    if wait is None:
        return jitter
    return min(wait, SERVER_WAIT_CAP) + jitter * 0.1


def unresolved(error: BaseException) -> int | None:
    """The `getaddrinfo` error number when *error*, or an exception it was raised from, is a
    failed name lookup (`socket.gaierror`: the host does not resolve); None otherwise."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, socket.gaierror):
            return current.errno
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


#: A lookup that may pass if tried again (no answer from the resolver), unlike a name that
#: does not exist (`EAI_NONAME`, `EAI_NODATA`), which no retry mends.
LOOKUP_MAY_PASS = frozenset({socket.EAI_AGAIN})
