"""Which pages to render, and what this build's pages read, for the next one.

Role: the plan stage of the recipe. The last build left, in the store, each page's
context fingerprint and the ids of the reads it made, and each read's fingerprint
(`sitegen.render.reads`), and the sha256 of the bytes it made. A page is rendered
again exactly when it is new, its output file is not what it made (the output's
manifest records other bytes, or the file was touched since: a build killed between
its commit and saving these records, a hand edit), its context changed, or any read
it made gives something else now; otherwise the writer keeps its previous bytes.
After rendering, `Ledger` gathers every page's reads (kept pages keep theirs) and
saves them with the build.
A change of sitegen's code or of a library that shapes the output (the code fingerprint,
`sitegen.codeprint`), or `--force`, renders everything; a stored row that does not verify
renders its page again, a plan of another generation every page (`Store.last_plan`). The
plan keeps the cause it found for each page it renders (a tuple, and the page's recorded
read numbers: no work beyond the decision), said in words only for the pages a build wrote
(`reasons`, `sitegen.why`). The renderer and the writer come in as what the plan asks of
them (`RendererFacts`, `OutputFacts`: protocols), as the plan sits below both in the layers.
This module must never render or write the output.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from typing import Protocol

from sitegen.codeprint import code_fingerprint
from sitegen.cores import shared
from sitegen.model.views import Page
from sitegen.store import Store
from sitegen.why import NEW, OUTPUT, READS, SETTINGS, rank, say

#: A page's reads as a render worker sends them: known read numbers, and new reads.
Packed = tuple[bytes, list[str]]
#: A restored file its bytes show intact: path, sha256, inode, size, ctime (`OutputWriter.vouch`).
Found = tuple[str, str, int, int, int]
#: From this many pages kept, the plan's checks are shared out over the cores (fewer: here).
SHARED_FROM = 500


class Fingerprinting(Protocol):
    """What each read gives now (`render.fingerprints.Fingerprints`)."""

    def of(self, read: str) -> bytes: ...
    def take(self, found: dict[str, bytes]) -> None: ...


class RendererFacts(Protocol):
    """What the plan asks of the renderer (`render.pages.Renderer`, a layer above)."""

    @property
    def fingerprints(self) -> Fingerprinting: ...
    def context_fingerprint(self, page: Page) -> bytes: ...


class OutputFacts(Protocol):
    """What the plan asks of the output (`emit.writer.OutputWriter`, a layer above)."""

    def recorded(self, path: str) -> str | None: ...
    def keep(self, path: str) -> bool: ...
    def hashed_intact(self, paths: Iterable[str]) -> list[Found]: ...
    def vouch(self, found: Iterable[Found]) -> None: ...


class Ledger:
    """The reads of every page of this build: the previous build's, then this one's."""

    def __init__(self, store: Store, renderer: RendererFacts, *, force: bool) -> None:
        self.renderer = renderer
        self.code = code_fingerprint()
        recorded = store.build_facts().get("code")
        # (rows that do not verify, or of another generation, are not used: `Store.last_plan`)
        self.previous, self.reads = store.last_plan(self.code) if not force else ({}, {})
        #: Why nothing of the last build is used (`sitegen.why.FRESH`), None: it is.
        self.fresh = "force" if force else "first" if recorded is None else "code" \
            if recorded != self.code else None if self.previous else "unverified"
        self.previous_reads = set(self.reads)
        self.ids = {read: number for number, (read, _) in self.reads.items()}
        self.next_id = max(self.reads, default=0) + 1
        self.pages: dict[str, tuple[bytes, bytes, bytes]] = {}
        self.fingerprinted: set[int] = set()  # reads fingerprinted in this build (`rendered`)
        #: Each page to render: its cause (`sitegen.why`), and its reads' numbers for READS.
        self.why: dict[str, tuple[str, bytes]] = {}
        self.changed: set[int] = set()  # the reads that give something else now

    def plan(self, pages: Iterable[Page], writer: OutputFacts) -> list[Page]:
        """The pages to render; the writer keeps every other one (see the module docstring)."""
        pages = list(pages)
        contexts = self._check(pages, writer)
        changed: set[int] | None = None  # found when first needed (not for a new output)
        todo: list[Page] = []
        why = self.why
        for page in pages:
            row = self.previous.get(page.path)
            context = contexts.get(page.path)  # (None: the output holds other bytes)
            if row is None or row[1] != context:
                todo.append(page)
                why[page.path] = (NEW if row is None else OUTPUT if context is None
                                  else SETTINGS, b"")
                continue
            if changed is None:
                fingerprints = self.renderer.fingerprints
                changed = self.changed = {number for number, (read, fp) in self.reads.items()
                                          if fingerprints.of(read) != fp}
            if changed and not changed.isdisjoint(array("I", row[2])):
                todo.append(page)
                why[page.path] = (READS, row[2])
            elif not writer.keep(page.path):
                todo.append(page)
                why[page.path] = (OUTPUT, b"")
            else:
                self.pages[page.path] = row
        return todo

    def reasons(self, paths: Iterable[str]) -> dict[str, str]:
        """Why each of *paths* the plan sent to be rendered was (`sitegen.why`), in words."""
        found: dict[str, str] = {}
        fingerprints = self.renderer.fingerprints
        for path in paths:
            cause = self.why.get(path)
            if cause is None:
                continue
            if cause[0] != READS:
                found[path] = say(self.fresh if cause[0] == NEW and self.fresh else cause[0])
                continue
            reads = sorted((self.reads[number][0] for number in array("I", cause[1])
                            if number in self.changed), key=rank)
            found[path] = say(READS, [(read, fingerprints.of(read) == b"") for read in reads])
        return found

    def _check(self, pages: list[Page], writer: OutputFacts) -> dict[str, bytes]:
        """The context fingerprint of each page the last build made these very bytes of, with
        every read's fingerprint and the restored files' hashes taken on the way: the
        per-read and per-file work of the plan is shared out over the cores (`cores.shared`);
        a page's context fingerprint is its template's and the build's settings' (what the
        context is made of is among its reads: `Renderer.context_reads`)."""
        recorded = writer.recorded
        kept = [page for page in pages if (row := self.previous.get(page.path)) is not None
                and row[0] == (recorded(page.path) or "").encode()]
        if not kept:
            return {}
        renderer, fingerprints = self.renderer, self.renderer.fingerprints
        reads = [read for read, _ in self.reads.values()]

        def share(part: int, parts: int) -> tuple[list[bytes], list[Found]]:
            return ([fingerprints.of(read) for read in reads[part::parts]],
                    writer.hashed_intact(page.path for page in kept[part::parts]))

        results = shared(share, None if len(kept) >= SHARED_FROM else 1)
        for part, (read_fps, found) in enumerate(results):
            fingerprints.take(dict(zip(reads[part::len(results)], read_fps, strict=True)))
            writer.vouch(found)
        return {page.path: renderer.context_fingerprint(page) for page in kept}

    def pack(self, page: Page, reads: frozenset[str]) -> Packed:
        """What a render worker sends back of *page*'s reads (see `rendered`).

        Reads the last build made already have a number (the worker knows them from
        the fork): only those are sent as numbers, the others as text. No fingerprint is
        taken here: each worker would take it again for the reads they share (most of
        them).
        """
        ids = self.ids
        known, unknown = array("I"), []
        for read in reads:
            number = ids.get(read)
            if number is None:
                unknown.append(read)
            else:
                known.append(number)
        return known.tobytes(), unknown

    def rendered(self, page: Page, packed: Packed, digest: str) -> None:
        """Note what *page* read as it was rendered in this build, and its bytes' sha256;
        each read new to this build is fingerprinted here, once (in the building process,
        while the workers render on)."""
        known, unknown = packed
        numbers = array("I", known)
        for read in unknown:
            number = self.ids.get(read)
            if number is None:
                number = self.ids[read] = self.next_id
                self.reads[number] = (read, b"")
                self.next_id += 1
            numbers.append(number)
        fingerprints, taken = self.renderer.fingerprints, self.fingerprinted
        for number in numbers:
            if number not in taken:
                taken.add(number)
                fingerprints.of(self.reads[number][0])
        context = self.renderer.context_fingerprint(page)
        self.pages[page.path] = (digest.encode(), context, numbers.tobytes())

    def save(self, store: Store) -> None:
        """Save what changed of the pages' reads, each read with what it gives now."""
        pages = {path: row for path, row in self.pages.items()
                 if self.previous.get(path) != row}
        gone = self.previous.keys() - self.pages.keys()
        used: set[int] = set()
        for _, _, numbers in self.pages.values():
            used.update(array("I", numbers))
        fingerprints = self.renderer.fingerprints
        reads: dict[int, tuple[str, bytes]] = {}
        for number, (read, fp) in self.reads.items():
            if number in used:
                now = fingerprints.of(read)
                if now != fp or number not in self.previous_reads:
                    reads[number] = (read, now)
        stale = self.previous_reads - used
        store.save_build(pages, gone, reads, stale, {"code": self.code},
                         replace=not self.previous)
