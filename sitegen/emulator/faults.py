"""Simulated trouble for the API emulator: latency, 500s, 429s, quota, a missing v2.

Role: describe *what* should go wrong (`Faults`, mutable while the app runs) and decide, request
by request, whether it does; `app.py` builds the responses. Random failures come from a private
`random.Random(seed)`, so the same seed and request order fail the same requests. This module
must never touch the network, sleep or build HTTP responses itself.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass
class InjectedFault:
    """One programmed answer from `Faults.fail_next`, used `remaining` more times."""

    status: int
    remaining: int
    path_contains: str | None = None
    body: bytes | None = None
    content_type: str | None = None

    def matches(self, path: str) -> bool:
        """True when this fault applies to a request for `path`."""
        return self.path_contains is None or self.path_contains in path


@dataclass
class Faults:
    """Fault settings of one emulator; change the fields at run time to change its behaviour.

    - `latency_ms`: added to every API response with `asyncio.sleep` (requests overlap).
    - `fail_rate`: fraction (0..1) of API requests answered 500.
    - `rate_limit_every`: every Nth API request is answered 429 with `Retry-After`.
    - `retry_after_s`: the `Retry-After` value (seconds) of simulated 429s.
    - `quota`: after this many API calls, every call is answered 402.
    - `no_v2`: every `/api/v2` path answers 404, as a service without v2 would.
    - `no_owner_fields`: v2 article records come without `clusterId` and `authorIdentityId`
      (the reference does not promise them); the per-owner listings still tell them.
    - `seed`: seeds the random choices of `fail_rate`.
    """

    latency_ms: float = 0
    fail_rate: float = 0
    rate_limit_every: int = 0
    quota: int | None = None
    no_v2: bool = False
    no_owner_fields: bool = False
    seed: int = 0
    retry_after_s: int = 1
    queue: list[InjectedFault] = field(default_factory=list, repr=False)
    _random: random.Random = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)

    def fail_next(self, status: int, count: int = 1, path_contains: str | None = None,
                  body: bytes | None = None, content_type: str | None = None) -> None:
        """Answer the next `count` API requests (whose path contains `path_contains`) with `status`:
        the service's JSON error shape (a 429 with `Retry-After`), or with `body` those exact
        bytes under `content_type` (default `application/json`)."""
        if count < 1:
            raise ValueError("count must be at least 1")
        if not 100 <= status <= 599:
            raise ValueError(f"status {status} is not an HTTP status code")
        self.queue.append(InjectedFault(status, count, path_contains, body, content_type))

    def clear(self) -> None:
        """Forget every programmed fault that has not fired yet."""
        self.queue.clear()

    def take_injected(self, path: str) -> InjectedFault | None:
        """The first programmed fault matching `path`, consuming one use of it; else None."""
        for index, fault in enumerate(self.queue):
            if fault.matches(path):
                fault.remaining -= 1
                if fault.remaining <= 0:
                    del self.queue[index]
                return fault
        return None

    def should_fail(self) -> bool:
        """Draw once from the seeded generator: True for a simulated 500."""
        if self.fail_rate <= 0:
            return False
        return self._random.random() < self.fail_rate

    def rate_limited(self, request_number: int) -> bool:
        """True when the `request_number`-th API request (1-based) is to be answered 429."""
        every = self.rate_limit_every
        return every > 0 and request_number % every == 0

    def quota_exceeded(self, request_number: int) -> bool:
        """True when the `request_number`-th API request (1-based) is past the quota."""
        return self.quota is not None and request_number > self.quota
