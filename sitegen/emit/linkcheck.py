"""The build's link check: every internal link of every page resolves, or it is a warning.

Role: the stage of `sitegen.build` after the pages and site files are named to the
writer. Pages rendered in this build are scanned from their bytes in the render worker
that made them (`scan`, `sitegen.emit.links`); a kept page is not read again: what its
bytes say about links is derived data in the store (`kind = links`, keyed by the sha256
of the page, the site's base URL and the code fingerprint, `sitegen.codeprint`), so each
build re-checks every page's links against this build's output paths, and re-reads a
file only when a link asks for one of its fragments (or a kept page has no stored scan
yet). Each broken link is one warning naming the page, the link and, for a link written
in an article's content, the article. This module must never write the output and never
fetch an external link.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from sitegen.codeprint import code_fingerprint
from sitegen.emit.links import Broken, LinkScanner, in_content

if TYPE_CHECKING:
    from sitegen.emit.writer import OutputWriter
    from sitegen.model.views import Page, Site
    from sitegen.render.pages import Renderer
    from sitegen.store import Store

log = logging.getLogger("sitegen.build")

KIND = "links"


class LinkCheck:
    """Collects the pages' links during a build and reports the broken ones at its end."""

    def __init__(self, store: Store, site: Site, renderer: Renderer, *,
                 reuse: bool = True) -> None:
        self.store = store
        self.site = site
        self.renderer = renderer
        self.reuse = reuse
        self.scanner = LinkScanner(site.base_url)
        salt = f"{code_fingerprint()}|{site.base_url}"
        self._salt = hashlib.sha256(salt.encode()).hexdigest()[:12]
        self.pages: dict[str, bytes] = {}  # page path → its scan (`PageLinks.to_bytes`)
        self._keys: dict[str, str] = {}  # page path → its store key
        self._fresh: dict[str, bytes] = {}  # store key → scan, of this build's scans
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
        """Check every page's links against the writer's paths; warn of each broken one."""
        started = time.perf_counter()
        kept = {page.path: self._key(writer.recorded(page.path) or "")
                for page in pages if page.path not in self.pages}
        self._keys.update(kept)
        stored = self.store.derived(KIND, kept.values()) if self.reuse and kept else {}
        for path, key in kept.items():
            value = stored.get(key)
            if value is not None:
                self.pages[path] = value
                continue
            data = writer.read(path)  # (a kept page with no stored scan: read it once)
            self.pages[path] = self._fresh[key] = self.scanner.scan(path, data or b"").to_bytes()
        broken = self.scanner.find_broken(self.pages, writer.paths(), writer.read)
        self._warn(broken)
        self.seconds += time.perf_counter() - started
        return broken

    def save(self) -> None:
        """Store this build's scans; drop those of pages no longer in the output."""
        started = time.perf_counter()
        self.store.save_derived(KIND, self._fresh, self._keys.values())
        self.seconds += time.perf_counter() - started

    def _warn(self, broken: list[Broken]) -> None:
        articles = {page.path: page.article for page in self.site.pages
                    if page.article is not None}
        for item in broken:
            where = ""
            article = articles.get(item.page)
            if article is not None and in_content(item.link, self.renderer.article_html(article)):
                where = f" in the content of article {article.id} ({article.slug})"
            log.warning("page %s: the link %s%s is broken (%s): fix or remove it",
                        item.page, item.link, where, item.why)
