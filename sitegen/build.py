"""The recipe: unchanged? → config → store → sync → model → images → plan → render → search
→ links → commit (`run_build`; an offline build whose inputs and output are the last one's
is answered at once by `sitegen.unchanged`). Everything is staged and committed only at the
end, so a failure (or `--strict` with warnings) leaves the previous output exactly as it was.
Unchanged pages are kept (`sitegen.plan`), every internal link is checked before the commit
(`sitegen.emit.linkcheck`). It must never write the output itself, log a key, or date it.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sitegen.logs import LOGGER_NAME, WarningCounter
from sitegen.options import BuildOptions, ConfigFile
from sitegen.progress import Progress
from sitegen.report import BuildReport, Timings
from sitegen.unchanged import NoChange

if TYPE_CHECKING:
    from sitegen.config import Config
    from sitegen.emit.writer import Staged
    from sitegen.model.views import Page, Site
    from sitegen.ownpages import PageSource
    from sitegen.plan import Packed
    from sitegen.store import Store
    from sitegen.workspace import Workspace

__all__ = ["BuildOptions", "ConfigFile", "run_build"]


def run_build(config: Config | ConfigFile, options: BuildOptions) -> BuildReport:
    """Build the site (see the module docstring); warnings are counted for `--strict`."""
    counter, logger = WarningCounter(), logging.getLogger(LOGGER_NAME)
    logger.addHandler(counter)
    try:
        stage = NoChange.of(config, options)  # the first stage: unchanged? (does it apply?)
        return stage.replay(counter) or stage.recorded(
            _stages(stage.config(), options, counter, stage))
    finally:
        logger.removeHandler(counter)


def _stages(config: Config, options: BuildOptions, counter: WarningCounter,
            stage: NoChange) -> BuildReport:
    from sitegen.emit.linkcheck import LinkCheck
    from sitegen.emit.ownfiles import check_collisions, collect_own_static, rendered_files
    from sitegen.emit.search import search_stage
    from sitegen.emit.sharecards import share_cards
    from sitegen.emit.sitejobs import beacon_key, beacon_settings, output_files, theme_assets
    from sitegen.emit.writer import OutputWriter
    from sitegen.fetch.stored import open_config_store
    from sitegen.images.stage import prepare_images
    from sitegen.ownpages import check_templates, load_pages
    from sitegen.plan import Ledger
    from sitegen.render.bodies import BodyCache, body_fingerprint
    from sitegen.render.compiled import StoredBytecode
    from sitegen.render.markdown import ImageFinder
    from sitegen.render.pages import Renderer
    from sitegen.render.pool import render_all, render_bodies
    from sitegen.render.themes import ThemeSet

    output = Path(options.output or config.output_path()).resolve()
    config.check_output(output)
    if options.offline and options.workspace is None:  # (before a store or a lock is made)
        from sitegen.fetch.stored import require_stored
        require_stored(config)
    timings, report = Timings(options.stop), BuildReport()
    progress = options.progress or Progress(enabled=False)
    key = beacon_key(config)
    own_static = collect_own_static(config.root)
    own_pages = options.own_pages if options.own_pages is not None else load_pages(config.root)
    with open_config_store(config) as store, OutputWriter(
            output, lock_timeout=options.lock_timeout,
            record=store.output_record(str(output))) as writer:
        with timings.stage("fetch"):
            workspace, version = _content(config, store, options, report, progress)
        stage.content_read(version, counter.count)
        with timings.stage("model"):
            site = options.site or _model(config, workspace, own_pages, own_static, options)
        report.articles, report.html_pages = len(site.articles), len(site.pages)
        check_collisions(own_static, (page.path for page in site.pages))
        with timings.stage("images"):
            parses = ImageFinder(site.base_url)  # (kept: the render renders from its parses)
            images, image_stats = prepare_images(
                config, site, store, writer, find=parses,
                fetch=options.fetches_images(), refresh=options.refresh,
                transport=options.service_transport())
        report.images = image_stats.to_report()
        with timings.stage("plan"):
            compiled = StoredBytecode(store)
            themes = ThemeSet(config, bytecode=compiled)
            check_templates(site.own_pages, themes.template_source)
            assets = theme_assets(config, key is not None)
            bodies = BodyCache(store, body_fingerprint(
                themes.template_dirs(), site.base_url, themes.fingerprint()),
                reuse=not options.force)
            renderer = Renderer(config, site, themes, asset_url=assets.url,
                                assets_fingerprint=assets.fingerprint(),
                                beacon=beacon_settings(config, key, assets), bodies=bodies,
                                images=images, parsed=parses)
            if options.before_render is not None:  # (the preview's first pages, and tests')
                options.before_render(renderer)
            renderer.warn_metadata()
            if options.strict:  # a missing translation is silent (English) otherwise
                renderer.warn_missing_messages()
            ledger = Ledger(store, renderer, force=options.force)
            links = LinkCheck(store, site, renderer, reuse=not options.force)
            todo = ledger.plan([*site.pages, *rendered_files(site, own_static)], writer)
        with timings.stage("render"):
            shown = renderer.shown_articles(todo)
            renderer.preload_bodies(shown)
            render_bodies(renderer, shown, stop=options.stop)  # (once each, before the pages)
            writer.reserve(page.path for page in todo)  # each worker stages what it renders
            def pack(page: Page, reads: frozenset[str], data: bytes,
                     ) -> tuple[Staged, Packed, bytes]:  # (run in the render workers)
                return writer.stage(page.path, data), ledger.pack(page, reads), \
                    links.scan(page, data)
            for done, (page, (path, (staged, reads, scan))) in enumerate(zip(
                    todo, render_all(renderer, todo, pack=pack, stop=options.stop),
                    strict=True), start=1):
                writer.adopt(path, staged)
                ledger.rendered(page, reads, staged.entry.sha256)
                links.written(path, scan, staged.entry.sha256)
                progress.update("rendering", done, len(todo))
            progress.clear()
            report.rendered = sum(1 for p in todo if p.path.endswith(".html"))  # (pages)
        with timings.stage("files"):
            for path, data in output_files(site, renderer, assets, own_static,
                                           store.url_history()).items():
                writer.write(path, data)
            renderer.save_bodies(site.articles)
            share_cards(site, writer, store, renderer.shown.share_image, renderer.images.bodies)
        with timings.stage("search"):  # (nothing with `[search] enabled = false`)
            report.search = search_stage(site, writer, store, force=options.force)
        links.finish(site.pages, writer)
        counter.check_strict(options.strict)
        with timings.stage("commit"):
            result = writer.commit()
            stage.committed(result.manifest)
            store.save_output_record(str(output), result.record)
            ledger.save(store)
            links.save()
            compiled.save()
            store.save_urls({article.id: article.url for article in site.articles})
            said = counter.count
            store.seals.say(store.key_changed)  # (rows that did not verify: one line)
            stage.not_replayed(said, counter.count)  # (repaired now: not said again)
    timings.stages["links"] = links.seconds  # (scans while rendering, the check, the store)
    report.committed(result, timings, counter)
    report.why = ledger.reasons(report.written)  # (`--explain`, the report, the preview)
    return report


def _model(config: Config, workspace: Workspace, own_pages: Sequence[PageSource],
           own_static: Collection[str], options: BuildOptions) -> Site:
    """The site model (`sitegen.model.build_site`), built with the cyclic garbage collector
    off: the stage allocates a graph that lives as long as the build, and the collections
    it set off walked that graph and the whole loaded workspace again and again, a cost that
    grew faster than the site (4,000 → 16,000 articles: the stage took 0.47 → 2.87 s of CPU
    with them, 0.40 → 1.71 s without). Switched back on after it (when it was on)."""
    from sitegen.model import build_site

    collecting = gc.isenabled()
    gc.disable()
    try:
        return build_site(config, workspace, own_pages, options.drafts, claimed=own_static)
    finally:
        if collecting:
            gc.enable()


def _content(config: Config, store: Store, options: BuildOptions, report: BuildReport,
             progress: Progress) -> tuple[Workspace, int | None]:
    """The workspace to build: given, or synced into the store (`sitegen.fetch.sync`); and
    the store's content version it is (None: given, or another process changed the store
    during the sync: a version read before the sync, plus one if it changed the content)."""
    from sitegen.budget import api_report
    from sitegen.fetch.ledger import CallLedger
    from sitegen.fetch.sync import DEMO_KEY, sync
    if options.workspace is not None:  # nothing fetched: an empty ledger of its version
        report.api, report.from_cache = CallLedger(
            version=options.workspace.api_version).to_report(), True
        return options.workspace, None
    before = store.content_version()
    synced = sync(config, store, key=DEMO_KEY if options.demo else None,
                  transport=options.service_transport(), refresh=options.refresh,
                  offline=options.offline, max_calls=options.max_calls, progress=progress)
    report.api, report.from_cache = api_report(config, synced, demo=options.demo), \
        synced.from_cache
    after = store.content_version()
    return synced.workspace, after if after == before + synced.changed else None
