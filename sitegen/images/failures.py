"""What the store remembers of the image URLs that failed, so a failure costs one build.

Role: the images stage's memory of failures, in the store's `derived` rows. A permanent
failure (a 404, not an image, a non-public address...) is kept under `<failure key>:<url>`
(kind `imagefailed`) and not asked again until `--refresh` or a change of what the key
hashes (the limits, `[api] url`, Pillow's version, the code that fetches and checks). A
passing one (a timeout, a 5xx, a host that does not resolve, no answer before the stage's
budget ran out) backs off (kind `imagewait`, by URL): it is not asked again for an hour,
then two, four... (`wait_after`: doubling with each consecutive passing failure, capped at a
week), so a dead host costs one build, not every build; `--refresh` asks at once. Each row
keeps the failure's reason, so a build that does not ask warns as the one that did. It
must never make a request, never decide how a page shows an image, and never read the
clock but through the `now` it is given.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sitegen.store import Store

FAILED_KIND = "imagefailed"  #: a permanent failure, by failure key and URL
WAIT_KIND = "imagewait"  #: a passing failure's backoff, by URL
FIRST_WAIT = 3600.0  #: seconds a URL waits after its first passing failure
LONGEST_WAIT = 7 * 24 * 3600.0  #: the wait stops doubling at a week


@dataclass(frozen=True, slots=True)
class Failure:
    """Why an image URL cannot be used (one phrase, no URL), whether asking again would
    answer the same, whether a page must not link to it (its address is not public), and
    for a passing one how many times in a row it failed and when it may be asked again."""

    reason: str
    permanent: bool
    nonpublic: bool = False
    times: int = 0
    until: float = 0.0


def wait_after(times: int) -> float:
    """Seconds before a URL that failed passingly *times* times in a row is asked again."""
    return min(FIRST_WAIT * 2.0 ** min(max(times, 1) - 1, 32), LONGEST_WAIT)


class FailureMemory:
    """The failures the store remembers for one build (see the module docstring)."""

    def __init__(self, store: Store, key: str, now: float) -> None:
        self.store = store
        self.key = key  #: the failure key (`stage.failure_key`)
        self.now = now
        self._waits: dict[str, Failure] = {}

    def recall(self, urls: Iterable[str]) -> dict[str, Failure]:
        """The remembered failures of *urls*: the permanent ones, and the passing ones still
        waiting (a URL whose wait is over is not among them: it is asked again)."""
        wanted = list(urls)
        found: dict[str, Failure] = {}
        for key, value in self.store.derived(FAILED_KIND, (f"{self.key}:{u}"
                                                           for u in wanted)).items():
            found[key.split(":", 1)[1]] = _parse(value, permanent=True)
        for url, value in self.store.derived(WAIT_KIND, (u for u in wanted
                                                         if u not in found)).items():
            failure = self._waits[url] = _parse(value, permanent=False)
            if failure.until > self.now:
                found[url] = failure
        return found

    def passing(self, url: str, reason: str) -> Failure:
        """The failure *url* has now failed passingly with, its next wait set."""
        times = self._waits[url].times + 1 if url in self._waits else 1
        return Failure(reason, False, times=times, until=self.now + wait_after(times))

    def save(self, failures: Mapping[str, Failure], waiting: Iterable[str]) -> None:
        """Keep the permanent *failures* and the passing ones (new rows for each whose
        `until` is set) and the backoff of the URLs in *waiting* (shown, not asked in this
        build, not failed); every other row of both kinds goes."""
        lasting = {f"{self.key}:{u}": _dump(f) for u, f in failures.items() if f.permanent}
        self.store.save_derived(FAILED_KIND, lasting, lasting)
        waits = {u: _dump(f) for u, f in failures.items() if not f.permanent and f.times}
        self.store.save_derived(WAIT_KIND, waits, set(waits) | {
            u for u in waiting if u in self._waits})


def _parse(value: bytes, *, permanent: bool) -> Failure:
    try:
        data = json.loads(value)
        return Failure(str(data["reason"]), permanent, bool(data.get("nonpublic")),
                       int(data.get("times", 0)), float(data.get("until", 0.0)))
    except (ValueError, TypeError, KeyError):  # (a row of another shape: asked again)
        return Failure(value.decode(errors="replace"), permanent, times=1)


def _dump(failure: Failure) -> bytes:
    data: dict[str, object] = {"reason": failure.reason}
    if failure.nonpublic:
        data["nonpublic"] = True
    if not failure.permanent:
        data.update(times=failure.times, until=failure.until)
    return json.dumps(data, separators=(",", ":")).encode()
