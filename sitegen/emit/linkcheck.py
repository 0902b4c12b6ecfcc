"""The build's link check: every internal link of every page resolves, or it is a warning.

Role: the stage of `sitegen.build` after the pages and site files are named to the
writer. Pages rendered in this build are scanned from their bytes in the render worker
that made them (`scan`, `sitegen.emit.links`); a kept page is not read again: what its
bytes say about links is derived data in the store (`kind = links`, keyed by the sha256
of the page, the site's base URL and the code fingerprint, `sitegen.codeprint`).

The check costs what changed: what the last check found (`kind = linkstate`: its broken
links by page, and which pages' links were decided by another file's bytes, a fragment)
is kept with the output it describes (a digest of its paths and sha256), and a kept page's
verdict is reused unless something it depends on changed. Checked again are: the pages
rendered in this build; when files were added, the pages that had a broken link; the
pages linking to a fragment of a file whose bytes changed; and every page when a file
went away that a link was looked up as (the paths looked up are kept with the findings:
a search shard's files going away asks for nothing), or when the output is not the one
the last check saw (`--force` too). Each broken
link is one warning naming the page, the link and, for a link written in an article's
content, the article. This module must never write the output, never fetch an external
link, and never import the render (it is handed the articles' HTML).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from sitegen.codeprint import code_fingerprint
from sitegen.emit.links import Broken, LinkScanner, in_content

if TYPE_CHECKING:
    from sitegen.emit.writer import OutputWriter
    from sitegen.model.views import ArticleView, Page, Site
    from sitegen.store import Store

log = logging.getLogger("sitegen.build")

KIND = "links"
STATE = "linkstate"


def output_digest(files: Iterable[tuple[str, str | None]]) -> str:
    """A digest of an output: its paths and their sha256 (what a link check depends on)."""
    digest = hashlib.sha256()
    for path, sha in sorted(files, key=lambda item: item[0]):
        digest.update(f"{path}\x00{sha}\n".encode())
    return digest.hexdigest()


class LinkCheck:
    """Collects the pages' links during a build and reports the broken ones at its end."""

    def __init__(self, store: Store, site: Site, article_html: Callable[[ArticleView], str],
                 *, reuse: bool = True) -> None:
        self.store = store
        self.site = site
        self.article_html = article_html
        """An article's content as HTML (`Renderer.article_html`), to say where a link is."""
        self.reuse = reuse
        self.scanner = LinkScanner(site.base_url)
        salt = f"{code_fingerprint()}|{site.base_url}"
        self._salt = hashlib.sha256(salt.encode()).hexdigest()[:12]
        self.pages: dict[str, bytes] = {}  # page path → its scan (`PageLinks.to_bytes`)
        self._keys: dict[str, str] = {}  # page path → its store key
        self._fresh: dict[str, bytes] = {}  # store key → scan, of this build's scans
        self._writer: OutputWriter | None = None
        self._found: tuple[list[Broken], dict[str, set[str]], set[str]] | None = None
        #: how many pages' links this build checked (the rest: the last check's verdicts)
        self.checked = 0
        self.seconds = 0.0  #: time spent scanning and checking (for the report)

    def _key(self, digest: str) -> str:
        return f"{self._salt}:{digest}"

    def scan(self, page: Page, data: bytes) -> bytes:
        """What *page*'s bytes say about links (`sitegen.emit.links`): run in the render
        worker that made them; a site file's (a feed's escaped HTML links nothing) is empty)."""
        html = page.path.endswith(".html")
        return self.scanner.scan(page.path, data if html else b"").to_bytes()

    def written(self, path: str, links: bytes, digest: str) -> None:
        """Note the scan of the page *path* this build rendered (*digest*: its sha256)."""
        started = time.perf_counter()
        self.pages[path] = links
        key = self._keys[path] = self._key(digest)
        self._fresh[key] = links
        self.seconds += time.perf_counter() - started

    def finish(self, pages: Iterable[Page], writer: OutputWriter) -> list[Broken]:
        """Check the links the change may have broken or mended (every page's when the
        last check cannot be reused: see the module docstring); warn of each broken one."""
        started = time.perf_counter()
        html = [page.path for page in pages]
        kept = {path: self._key(writer.recorded(path) or "")
                for path in html if path not in self.pages}
        self._keys.update(kept)
        self._writer = writer
        paths = writer.paths()
        state = self._last_state(writer) if self.reuse else None
        check = set(html) if state is None else self._to_check(state, paths, writer, html)
        self.checked = len(check)
        wanted = [kept[path] for path in check if path in kept]
        stored = self.store.derived(KIND, wanted) if self.reuse and wanted else {}
        scans: dict[str, bytes] = {}
        for path in check:
            scan = self.pages.get(path)
            if scan is None:
                scan = stored.get(kept[path])
                if scan is None:  # (a kept page with no stored scan: read it once)
                    scan = self.scanner.scan(path, writer.read(path) or b"").to_bytes()
                    self._fresh[kept[path]] = scan
            scans[path] = scan
        linked: dict[str, set[str]] = {}
        looked: set[str] = set()
        broken = self.scanner.find_broken(scans, paths, writer.read, linked=linked,
                                          looked=looked)
        if state is not None:  # the verdicts of the pages not checked again stand
            broken, linked = self._merge(state, check, set(html), broken, linked)
            looked.update(state["looked"])  # (a superset until the next whole check)
        self._found = (broken, linked, looked)
        self._warn(broken)
        self.seconds += time.perf_counter() - started
        return broken

    def _last_state(self, writer: OutputWriter) -> dict[str, Any] | None:
        """What the last check found, if it checked the output the writer's record holds."""
        value = self.store.derived(STATE, [self._salt]).get(self._salt)
        if value is None:
            return None
        state = json.loads(value)
        previous = output_digest((path, writer.recorded(path))
                                 for path in writer.previous_paths())
        return state if state.get("output") == previous else None

    def _to_check(self, state: dict[str, Any], paths: frozenset[str], writer: OutputWriter,
                  html: list[str]) -> set[str]:
        """The pages whose links are checked again (see the module docstring)."""
        previous = writer.previous_paths()
        if not (previous - paths).isdisjoint(state["looked"]):  # a link's file went
            return set(html)
        check = set(self.pages)
        if paths - previous:  # new files may mend a broken link
            check.update(state["broken"])
        for target, pages in state["linked"].items():
            if writer.digest(target) != writer.recorded(target):
                check.update(pages)
        return check.intersection(html)

    @staticmethod
    def _merge(state: dict[str, Any], checked: set[str], html: set[str], broken: list[Broken],
               linked: dict[str, set[str]]) -> tuple[list[Broken], dict[str, set[str]]]:
        """This check's findings with the last check's for the pages not checked again."""
        by_page: dict[str, list[Broken]] = {}
        for page, items in state["broken"].items():
            if page not in checked and page in html:
                by_page[page] = [Broken(page, link, why) for link, why in items]
        for item in broken:
            by_page.setdefault(item.page, []).append(item)
        for target, pages in state["linked"].items():
            still = [page for page in pages if page not in checked and page in html]
            if still:
                linked.setdefault(target, set()).update(still)
        return [item for page in sorted(by_page) for item in by_page[page]], linked

    def save(self) -> None:
        """Store this build's scans and findings; drop those of pages no longer in the output."""
        started = time.perf_counter()
        self.store.save_derived(KIND, self._fresh, self._keys.values())
        if self._writer is not None and self._found is not None:
            broken, linked, looked = self._found
            grouped: dict[str, list[tuple[str, str]]] = {}
            for item in broken:
                grouped.setdefault(item.page, []).append((item.link, item.why))
            writer = self._writer
            state = {"output": output_digest((path, writer.digest(path))
                                             for path in writer.paths()),
                     "broken": grouped,
                     "linked": {target: sorted(pages) for target, pages in linked.items()},
                     "looked": sorted(looked)}
            self.store.save_derived(STATE, {self._salt: json.dumps(state).encode()},
                                    [self._salt])
        self.seconds += time.perf_counter() - started

    def _warn(self, broken: list[Broken]) -> None:
        articles = {page.path: page.article for page in self.site.pages
                    if page.article is not None}
        for item in broken:
            where = ""
            article = articles.get(item.page)
            if article is not None and in_content(item.link, self.article_html(article)):
                where = f" in the content of article {article.id} ({article.slug})"
            log.warning("page %s: the link %s%s is broken (%s): fix or remove it",
                        item.page, item.link, where, item.why)
