"""Pages rendered first: what open browsers show, served before the rest of a rebuild commits.

Role: during a template-only rebuild, the build hands its renderer here before rendering the
site (`run_build(before_render=...)`). The pages open browsers show (the paths their scripts
reported) are rendered at once, kept in memory, served in place of the files on disk and
announced with an early `reload`, until the whole build commits or fails, when they are dropped;
they are the very bytes the build will write (same renderer). This module must never write a
file and never publish a page of a build that failed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from sitegen.preview.reload import ReloadChannel
from sitegen.preview.routing import path_segments

if TYPE_CHECKING:
    from sitegen.model.views import Page
    from sitegen.render.pages import Renderer

log = logging.getLogger("sitegen.preview")

#: At most this many pages are rendered ahead (one per distinct open path).
MAX_FIRST_PAGES = 8
#: How long the build waits for the announced pages to be fetched before rendering the rest
#: (the reloading browsers then do not compete with it for this process).
SETTLE_SECONDS = 0.3


def output_path(url_path: str) -> str | None:
    """The output-relative file a URL path is served from (`/a/` → `a/index.html`), if safe."""
    url_path = url_path.partition("?")[0]
    segments = path_segments(url_path)
    if segments is None:
        return None
    if not segments or url_path.endswith("/"):
        return "/".join([*segments, "index.html"])
    return "/".join(segments)


def pages_for(url_paths: Iterable[str], pages: Sequence[Page]) -> dict[str, Page]:
    """The pages behind *url_paths* (as browsers reported them), by reported path."""
    wanted: dict[str, str] = {}
    for url_path in sorted(set(url_paths))[:MAX_FIRST_PAGES]:
        rel = output_path(url_path)
        if rel is not None:
            wanted[url_path] = rel
    if not wanted:
        return {}
    rels = set(wanted.values())
    by_rel = {page.path: page for page in pages if page.path in rels}
    return {url_path: by_rel[rel] for url_path, rel in wanted.items() if rel in by_rel}


class FreshPages:
    """The pages rendered ahead of one build's commit, and the build id they carry."""

    def __init__(self, channel: ReloadChannel, *, settle: float = SETTLE_SECONDS) -> None:
        self._channel = channel
        self._settle = settle
        self._lock = threading.Lock()
        self._fetched = threading.Condition(self._lock)
        self._pages: dict[str, bytes] = {}
        self._unfetched: set[str] = set()
        self._build = ""

    def render_first(self, renderer: Renderer) -> None:
        """Render the open pages now, serve them, tell their browsers (a build hook), and
        return once all were fetched or after the settle time. A render error propagates."""
        found = pages_for(self._channel.open_paths(), renderer.site.pages)
        if not found:
            return
        rendered = {page.path: renderer.render(page) for page in found.values()}
        with self._lock:
            self._pages = rendered
            self._unfetched = set(rendered)
            self._build = self._channel.next_build_id
        self._channel.early(sorted(found))
        with self._fetched:
            self._fetched.wait_for(lambda: not self._unfetched, timeout=self._settle)
        log.debug("served %d open page(s) ahead of the rebuild", len(rendered))

    def get(self, rel: str) -> tuple[bytes, str] | None:
        """The fresh bytes of the output file *rel* and their build id, if rendered ahead."""
        with self._lock:
            data = self._pages.get(rel)
            if data is None:
                return None
            if rel in self._unfetched:
                self._unfetched.discard(rel)
                self._fetched.notify_all()
            return data, self._build

    def clear(self) -> None:
        """Drop the pages: the build committed (the files now hold them) or failed."""
        with self._lock:
            self._pages = {}
            self._unfetched = set()
            self._build = ""

    def __len__(self) -> int:
        with self._lock:
            return len(self._pages)
