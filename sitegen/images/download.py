"""Fetch: which images the stage asks for, and what the answers mean for each URL.

Role: the fetching step of the images stage. An image URL is asked for when the store
holds neither its bytes nor a failure still standing (or always with `--refresh`); the
downloads themselves are `sitegen.fetch.images` (its limits from the stage's settings, all
of them under the stage's one deadline). Each answer replaces what an earlier build
remembered of its URL: bytes (a new row, by sha256), a permanent failure, or a passing one
that backs off longer (`FailureMemory.passing`); a passing failure of a URL whose image is
stored already (a `--refresh`) leaves the stored image standing. The images the budget left
unfetched are named (`Fetched.left`) for the stage's one warning. It must never decode an
image, and never touch the store but through the `FailureMemory` it is given (which reads,
and does not write, here).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import httpx

from sitegen.fetch.images import Counts, Downloaded, Failed, ImageFetcher
from sitegen.images.failures import Failure, FailureMemory
from sitegen.images.settings import ImageSettings
from sitegen.images.stored import Row


@dataclass(slots=True)
class Fetched:
    """What one build's downloads gave: new rows and bytes, and every URL's answer."""

    rows: dict[str, Row] = field(default_factory=dict)
    sources: dict[str, bytes] = field(default_factory=dict)  #: by sha256
    results: dict[str, Downloaded | Failed] = field(default_factory=dict)
    asked: set[str] = field(default_factory=set)  #: every URL the downloads were given

    def add(self, more: Fetched) -> None:
        """Take the answers of a later round of downloads too."""
        self.rows.update(more.rows)
        self.sources.update(more.sources)
        self.results.update(more.results)
        self.asked.update(more.asked)

    def left(self) -> set[str]:
        """Of the URLs asked, those the budget left unanswered (never started, or cut)."""
        return {u for u in self.asked if not isinstance(r := self.results.get(u), Downloaded)
                and (r is None or r.cut)}


def to_ask(wanted: Iterable[str], stored: Mapping[str, Row],
           failures: Mapping[str, Failure], *, refresh: bool) -> list[str]:
    """The URLs to fetch: every one with *refresh*, else those with no bytes stored and no
    failure standing."""
    return sorted(u for u in wanted if refresh or (u not in stored and u not in failures))


def download(settings: ImageSettings, urls: list[str], deadline: float, *,
             transport: httpx.AsyncBaseTransport | None, counts: Counts) -> Fetched:
    """Fetch *urls* until *deadline* (`time.monotonic()`); those it left unfetched are
    `Fetched.left`."""
    fetcher = ImageFetcher(settings.service, settings.max_bytes, settings.timeout,
                           settings.concurrency, transport=transport, counts=counts)
    fetched = Fetched(results=fetcher.fetch_all(urls, deadline), asked=set(urls))
    for url, result in fetched.results.items():
        if isinstance(result, Downloaded):
            digest = hashlib.sha256(result.data).hexdigest()
            fetched.rows[url] = (digest, result.etag, result.modified)
            fetched.sources[digest] = result.data
    return fetched


def settle(failures: Mapping[str, Failure], fetched: Fetched, stored: Mapping[str, Row],
           memory: FailureMemory) -> dict[str, Failure]:
    """The failures standing after *fetched*: each URL answered loses what was said of it
    before, and takes its new failure (see the module docstring)."""
    standing = {u: f for u, f in failures.items() if u not in fetched.results}
    for url, result in fetched.results.items():
        if not isinstance(result, Failed):
            continue
        if result.permanent:
            standing[url] = Failure(result.reason, True, result.nonpublic)
        elif url not in stored:
            standing[url] = memory.passing(url, result.reason)
    return standing
