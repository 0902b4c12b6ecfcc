"""How the preview builds: its configuration, its output folder, and the call into `run_build`.

Role: adapt `sitegen.build.run_build` to the preview: a build that fetches (`sync`, then
`run_build(workspace=...)`), or one that renders from the workspace and site model already held,
for template, static and configuration changes; a template-only build renders the pages open
browsers show first (`fresh.FreshPages`). The preview builds into its own folder,
`.sitegen/preview/` beside site.toml, with URLs pointing at the local server and the beacon off,
so it must never replace a deployable build; and it never writes files itself. With `--drafts`
it also fetches the workspace's drafts (`fetch.drafts`) after each sync and builds into a
folder of its own, `preview-drafts/` inside the store's folder (`[api] cache_dir`, whatever it
is: the folder `sitegen init` git-ignores and no build may use as its output, so a draft never
reaches git nor a deployable output): the site in `site/`, and beside it a store of its own
(`drafts_config`), so nothing derived from a draft (a rendered body, a page's reads, search
data) is ever written to the site's store; the site's store gets only the sync's published
records, as with any `serve`.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from sitegen.config import Config, parse_config
from sitegen.logs import say_hidden_warnings
from sitegen.ownpages import PageSource, load_pages

if TYPE_CHECKING:
    import httpx

    from sitegen.fetch.drafts import DraftFetcher
    from sitegen.fetch.records import Article
    from sitegen.model.views import Site
    from sitegen.preview.fresh import FreshPages
    from sitegen.render.pages import Renderer
    from sitegen.workspace import Workspace

log = logging.getLogger("sitegen.preview")

PREVIEW_DIR = Path(".sitegen") / "preview"
#: `serve --drafts`' folder inside the store's (`[api] cache_dir`): its output (`site/`) and
#: its own store.
DRAFTS_DIR = "preview-drafts"


def preview_output(config: Config) -> Path:
    """The folder the preview builds into and serves from: `.sitegen/preview/` beside site.toml."""
    return (config.root / PREVIEW_DIR).resolve()


def drafts_output(config: Config) -> Path:
    """The folder `serve --drafts` builds into and serves from: `preview-drafts/site/` in the
    store's folder (`.sitegen/preview-drafts/site/` by default)."""
    return config.cache_path / DRAFTS_DIR / "site"


def drafts_config(config: Config) -> Config:
    """*config* as the drafts preview's builds see it: the store of `preview-drafts/` in the
    store's folder (derived data of drafts never reaches the site's store)."""
    api = config.api.model_copy(update={"cache_dir": str(config.cache_path / DRAFTS_DIR)})
    return config.model_copy(update={"api": api})


def preview_config(config: Config, url: str) -> Config:
    """*config* as the preview builds it: URLs pointing at the local server, beacon off."""
    data: dict[str, Any] = config.model_dump(mode="json")
    data["site"]["url"] = url
    data["analytics"]["enabled"] = False
    return parse_config(data, config.root, "preview configuration")


@dataclass(frozen=True)
class BuildSummary:
    """What one preview build changed (pages written and removed), how long it took, and
    how many pages the site has."""

    written: int
    removed: int
    seconds: float
    api_calls: int = 0
    #: the site's pages (HTML files), the count `build` and its report give
    pages: int = 0
    #: why each file written was rendered again (`BuildReport.why`), by output path
    why: dict[str, str] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return bool(self.written or self.removed)


class Builder(Protocol):
    """Builds *config* into the preview folder; `fetch=False` renders from the content held,
    `first=True` (a template-only change) may serve the open pages before the build ends."""

    def __call__(self, config: Config, *, fetch: bool, first: bool = False) -> BuildSummary: ...


def settle_heap() -> None:
    """After a build, once its pages are announced: collect what it left, then keep what the
    preview holds (the workspace, the site model) out of later collections, so none walks
    them in the middle of the next template save → page served (a full collection of the
    4,000-article model took 0.15–0.28 s there, in one save of four). Thawed first: no
    long-lived object stays frozen past the next build (the render pool thaws too)."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def _pages(paths: list[str]) -> int:
    return sum(1 for path in paths if path.endswith(".html"))


class SiteBuilder:
    """The real builder: `sync` when fetching (or, offline, once to read the store), then
    `run_build` with the workspace kept in memory and, while it and the configuration are
    the same, the last build's site model."""

    def __init__(self, output: Path, *, demo: bool, offline: bool,
                 transport: httpx.AsyncBaseTransport | None = None,
                 fresh: FreshPages | None = None, stop: threading.Event | None = None,
                 drafts: DraftFetcher | None = None) -> None:
        self.output = output
        self.stop = stop  # set when the preview stops: a build in progress ends (Interrupted)
        self.demo = demo
        self.offline = offline
        self.transport = transport
        self.fresh = fresh
        self.workspace: Workspace | None = None
        self.drafts = drafts  # `--drafts`: fetched after each sync, built into a store of its own
        self.draft_records: list[Article] | None = [] if drafts is not None else None
        #: the last build's model, and what it was made of (the workspace, the configuration,
        #: the own pages and the paths of `static/`'s files, which service-named pages avoid)
        self._site: tuple[Workspace, Config, tuple[list[PageSource], frozenset[str]], Site,
                          list[Article] | None] | None = None

    def _sync(self, config: Config, *, fetch: bool) -> int:
        from sitegen.emulator.demo import demo_transport
        from sitegen.fetch.stored import open_config_store
        from sitegen.fetch.sync import DEMO_KEY, sync

        offline = self.offline or not fetch
        transport = self.transport
        if self.demo and transport is None and not offline:
            transport = demo_transport()
        if self.workspace is None and not offline:  # the first sync: said before it starts
            log.info("%s", "fetching the demo's content from the built-in emulator (no quota)"
                     if self.demo else "fetching what changed at the service before the first "
                     "build (each request is an API call of the workspace's quota)")
        with open_config_store(config) as store:
            result = sync(config, store, key=DEMO_KEY if self.demo else None,
                          transport=transport, offline=offline)
        self.workspace = result.workspace
        if self.drafts is not None and not result.from_cache:  # (the drafts' calls: same ledger)
            self.draft_records = self.drafts.fetch(
                config, result.workspace.api_version, key=DEMO_KEY if self.demo
                else config.api_key(), transport=transport, ledger=result.ledger)
        return 0 if result.from_cache else result.ledger.total

    def _known_site(self, config: Config,
                    own: tuple[list[PageSource], frozenset[str]]) -> Site | None:
        if self._site is None:
            return None
        workspace, known_config, known_own, site, drafts = self._site
        return site if (workspace is self.workspace and known_config == config
                        and known_own == own and drafts is self.draft_records) else None

    def __call__(self, config: Config, *, fetch: bool, first: bool = False) -> BuildSummary:
        from sitegen.build import BuildOptions, run_build

        started = time.perf_counter()
        calls = 0
        if fetch and not self.offline or self.workspace is None:
            calls = self._sync(config, fetch=fetch)
        workspace = self.workspace
        assert workspace is not None
        fresh = self.fresh if first else None
        from sitegen.emit.ownfiles import own_static_paths

        own = load_pages(config.root)
        made_of = (own, own_static_paths(config.root))
        drafts = self.draft_records

        def before_render(renderer: Renderer) -> None:
            self._site = (workspace, config, made_of, renderer.site, drafts)
            if fresh is not None:
                fresh.render_first(renderer)

        try:
            report = run_build(config if drafts is None else drafts_config(config), BuildOptions(
                output=self.output, demo=self.demo, workspace=workspace,
                fetch_images=bool(fetch and not self.offline), transport=self.transport,
                site=self._known_site(config, made_of), own_pages=own,
                before_render=before_render, stop=self.stop, drafts=drafts))
        finally:
            if fresh is not None:
                fresh.clear()
            say_hidden_warnings()  # each rebuild shows ten warnings of a kind, then a count
        return BuildSummary(written=_pages(report.written), removed=_pages(report.removed),
                            seconds=time.perf_counter() - started, api_calls=calls,
                            pages=report.pages["count"], why=report.why)
