"""The recipe: config → store → sync → model → plan → render → write → commit → report.

Role: `run_build` gathers everything first into the writer's staging and commits only
at the end, so any failure (or `--strict` with warnings) leaves the previous output
exactly as it was. Pages whose recorded reads did not change are kept, not rendered
(`sitegen.plan`). The preview builds through this same recipe. This module must never
write the output itself (the writer does), never print or log a key, and never read
the wall clock into the output.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sitegen.config import Config
from sitegen.errors import ConfigError, StrictError
from sitegen.logs import LOGGER_NAME, WarningCounter
from sitegen.report import BuildReport, Progress, Timings

if TYPE_CHECKING:
    import httpx

    from sitegen.model.views import Site
    from sitegen.render.pages import Renderer
    from sitegen.store import Store
    from sitegen.workspace import Workspace

log = logging.getLogger("sitegen.build")

DEMO_KEY = "demo"


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
    site: Site | None = None  #: its model, already built (the preview's, between edits)
    progress: Progress | None = None
    lock_timeout: float = 60.0
    before_render: Callable[[Renderer], None] | None = None  #: the preview's hook


def check_output(config: Config, output: Path) -> None:
    """Refuse an output folder that holds the site itself (it is swapped out wholesale)."""
    root = config.root.resolve()
    if output == root or output in root.parents or output == config.cache_path:
        raise ConfigError(
            f"the output folder {output} contains the site's own files: choose a dedicated "
            "folder such as _site (-o or [site] output)")


def run_build(config: Config, options: BuildOptions) -> BuildReport:
    """Build the site (see the module docstring); warnings are counted for `--strict`."""
    counter = WarningCounter()
    logger = logging.getLogger(LOGGER_NAME)
    logger.addHandler(counter)
    try:
        return _stages(config, options, counter)
    finally:
        logger.removeHandler(counter)


def _stages(config: Config, options: BuildOptions, counter: WarningCounter) -> BuildReport:
    from sitegen.emit.sitejobs import beacon_key, beacon_settings, site_files, theme_assets
    from sitegen.emit.writer import OutputWriter
    from sitegen.fetch.stored import open_config_store
    from sitegen.model import build_site
    from sitegen.plan import Ledger
    from sitegen.render.bodies import BodyCache, body_fingerprint
    from sitegen.render.pages import Renderer
    from sitegen.render.pool import render_all
    from sitegen.render.themes import ThemeSet

    output = Path(options.output or config.output_path()).resolve()
    check_output(config, output)
    timings, report = Timings(), BuildReport()
    progress = options.progress or Progress(enabled=False)
    key = beacon_key(config)
    with open_config_store(config) as store, OutputWriter(
            output, lock_timeout=options.lock_timeout,
            stats=store.output_stats(str(output))) as writer:
        with timings.stage("fetch"):
            workspace = _content(config, store, options, report, progress)
        with timings.stage("model"):
            site = options.site or build_site(config, workspace)
        report.articles, report.html_pages = len(site.articles), len(site.pages)
        with timings.stage("plan"):
            themes = ThemeSet(config)
            assets = theme_assets(config, key is not None)
            bodies = BodyCache(store, body_fingerprint(
                themes.template_dirs(), site.base_url, themes.fingerprint()),
                reuse=not options.force)
            renderer = Renderer(config, site, themes, asset_url=assets.url,
                                assets_fingerprint=assets.fingerprint(),
                                beacon=beacon_settings(config, key, assets), bodies=bodies)
            renderer.warn_metadata()
            if options.strict:  # a missing translation is silent (English) otherwise
                renderer.warn_missing_messages()
            if options.before_render is not None:
                options.before_render(renderer)
            ledger = Ledger(store, renderer, force=options.force)
            todo = ledger.plan(site.pages, writer)
        with timings.stage("render"):
            renderer.preload_bodies(p.article for p in todo if p.article is not None)
            by_path = {page.path: page for page in todo}
            rendered = render_all(renderer, todo, pack=ledger.pack)
            for done, (path, data, reads) in enumerate(rendered, start=1):
                ledger.rendered(by_path[path], reads, writer.write(path, data))
                progress.update("rendering", done, len(todo))
            progress.clear()
            report.rendered = len(todo)
        with timings.stage("files"):
            for path, data in site_files(site, renderer, assets, options.demo):
                writer.write(path, data)
            renderer.save_bodies(site.articles)
        report.warnings, report.warning_messages = counter.count, counter.messages
        if options.strict and counter.count:
            raise StrictError(f"--strict: the build logged {counter.count} warning(s); the "
                              "previous output was kept (fix them, or build without --strict)")
        with timings.stage("commit"):
            result = writer.commit()
            store.save_output_stats(str(output), result.stats)
            ledger.save(store)
    report.written, report.unchanged, report.removed = (
        result.written, result.unchanged, result.removed)
    report.output_changed = result.touched_output
    report.timings, report.seconds = dict(timings.stages), timings.total()
    return report


def _content(config: Config, store: Store, options: BuildOptions, report: BuildReport,
             progress: Progress) -> Workspace:
    """The workspace to build: given, or synced into the store (`sitegen.fetch.sync`)."""
    from sitegen.fetch.sync import demo_transport, sync

    if options.workspace is not None:
        report.api = {"version": options.workspace.api_version, "calls": {}, "total": 0,
                      "retries": 0}
        report.from_cache = True
        return options.workspace
    transport = options.transport
    if options.demo and transport is None and not options.offline:
        transport = demo_transport()
    synced = sync(config, store, key=DEMO_KEY if options.demo else None,
                  transport=transport, refresh=options.refresh, offline=options.offline,
                  max_calls=options.max_calls, progress=progress)
    report.api, report.from_cache = synced.ledger.to_report(), synced.from_cache
    if synced.ledger.total and not synced.from_cache:
        from sitegen.budget import monthly_budget

        report.api["monthly"] = monthly_budget(config, synced, synced.ledger.total)
    return synced.workspace
