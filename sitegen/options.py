"""`BuildOptions`: how one build runs, beside its configuration; `ConfigFile`: that
configuration before it is loaded.

Role: the command's flags (`--offline`, `--force`, ...) and the hooks the preview and the
tests use, in the one object `sitegen.build.run_build` takes; and the site.toml a command
builds, which `run_build` loads only when its first stage (`sitegen.unchanged`) finds that
something changed. It must never hold a key, and never import the configuration models
(loading them costs more than a no-change build).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

    from sitegen.config import Config
    from sitegen.fetch.records import Article
    from sitegen.model.views import Site
    from sitegen.ownpages import PageSource
    from sitegen.progress import Progress
    from sitegen.render.pages import Renderer
    from sitegen.workspace import Workspace


@dataclass
class BuildOptions:
    """How to build: the command's flags, and the hooks tests and the preview use."""

    output: Path | None = None  #: None: the config's `[site] output`
    offline: bool = False
    refresh: bool = False
    force: bool = False
    strict: bool = False
    demo: bool = False
    max_calls: int | None = None
    transport: httpx.AsyncBaseTransport | None = None  #: how to reach the service (tests)
    workspace: Workspace | None = None  #: content given: nothing is fetched
    #: `serve --drafts`: the draft articles, laid out at `/drafts/` only (None: not a drafts
    #: preview). Only the drafts preview passes them, with an output and store of its own.
    drafts: list[Article] | None = None
    #: Fetch new images (None: when the content is synced online, not given or offline).
    fetch_images: bool | None = None
    site: Site | None = None  #: its model, already built (the preview's, between edits)
    own_pages: list[PageSource] | None = None  #: pages/ already read (None: read it here)
    progress: Progress | None = None
    lock_timeout: float = 60.0
    before_render: Callable[[Renderer], None] | None = None  #: the preview's hook
    #: Set by another thread to end the build (`Interrupted`) at its next stage or rendered
    #: chunk, the output kept: the preview's, when it stops during a rebuild.
    stop: threading.Event | None = None

    def fetches_images(self) -> bool:
        """Whether new images are downloaded: always for `--demo` (its service runs in this
        process: its images are package data, offline too, and the demo site is never
        without them), else when asked, else when content is synced online."""
        if self.demo:
            return True
        if self.fetch_images is not None:
            return self.fetch_images
        return self.workspace is None and not self.offline

    def service_transport(self) -> httpx.AsyncBaseTransport | None:
        """How to reach the service: the given transport, or `--demo`'s in-process emulator
        (offline too: it is no network; an offline sync asks it nothing)."""
        if self.demo and self.transport is None:
            from sitegen.emulator.demo import demo_transport

            return demo_transport()
        return self.transport


@dataclass(frozen=True)
class ConfigFile:
    """`sitegen build`'s configuration, not loaded yet: `-c FILE` and `--demo` (with
    `--offline` for the checks `config.build_config` makes)."""

    path: str
    demo: bool = False
    offline: bool = False

    def load(self) -> Config:
        """The configuration, checked (`config.build_config`): a `ConfigError` if invalid."""
        from sitegen.config import build_config

        return build_config(self.path, self.demo, offline=self.offline)
