"""The recipe: unchanged? → config → store → sync → model → images → plan → render → search
→ links → commit (`run_build`; an offline build whose inputs and output are the last one's
is answered at once by `sitegen.unchanged`). Everything is staged and committed only at the
end, so a failure (or `--strict` with warnings) leaves the previous output exactly as it was.
Unchanged pages are kept (`sitegen.plan`), every internal link is checked before the commit
(`sitegen.emit.linkcheck`). It must never write the output itself, log a key, or date it.
"""

from __future__ import annotations

import logging
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
    from sitegen.model.views import Page
    from sitegen.plan import Packed

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
    # Imported here, not at the top: the no-change stage (`run_build` → `sitegen.unchanged`)
    # answers without them, and they are most of a build's start-up (Jinja, Pillow, httpx).
    from sitegen.buildinputs import model_site, read_content
    from sitegen.emit.linkcheck import LinkCheck
    from sitegen.emit.ownfiles import check_collisions, collect_own_static, rendered_files
    from sitegen.emit.search import search_stage
    from sitegen.emit.sharecards import share_cards
    from sitegen.emit.sitejobs import output_files
    from sitegen.emit.writer import OutputWriter
    from sitegen.fetch.stored import open_config_store, require_stored
    from sitegen.images.stage import prepare_images
    from sitegen.ownpages import load_pages
    from sitegen.plan import Ledger
    from sitegen.render.markdown import ImageFinder
    from sitegen.render.pool import render_all, render_bodies
    from sitegen.render.setup import beacon_key, ready_renderer

    output = Path(options.output or config.output_path()).resolve()
    config.check_output(output)
    if options.offline and options.workspace is None:  # (before a store or a lock is made)
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
            workspace, version = read_content(config, store, options, report, progress)
        stage.content_read(version, counter.count)
        with timings.stage("model"):
            site = options.site or model_site(config, workspace, own_pages, own_static, options)
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
            ready = ready_renderer(config, site, store, images=images, parses=parses,
                                   force=options.force, strict=options.strict, key=key,
                                   before_render=options.before_render)
            renderer = ready.renderer
            ledger = Ledger(store, renderer, force=options.force)
            links = LinkCheck(store, site, renderer.article_html, reuse=not options.force)
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
            beacon = renderer.beacon.endpoint if renderer.beacon is not None else None
            for path, data in output_files(site, ready.asset_files(), beacon,
                                           renderer.translator, own_static,
                                           store.url_history()).items():
                writer.write(path, data)
            renderer.save_bodies(site.articles)
            share_cards(site, writer, store, ready.share_cards())
        with timings.stage("search"):  # (nothing with `[search] enabled = false`)
            report.search = search_stage(site, writer, store, force=options.force)
        links.finish(site.pages, writer)
        counter.check_strict(options.strict)
        with timings.stage("commit"):
            result = writer.commit()
            stage.committed(result.record, store.save_output_record(str(output),
                                                                    result.record))
            ledger.save(store)
            links.save()
            ready.compiled.save()
            store.save_urls({article.id: article.url for article in site.articles})
            said = counter.count
            store.seals.say(store.key_changed)  # (rows that did not verify: one line)
            stage.not_replayed(said, counter.count)  # (repaired now: not said again)
    timings.stages["links"] = links.seconds  # (scans while rendering, the check, the store)
    report.committed(result, timings, counter)
    report.why = ledger.reasons(report.written)  # (`--explain`, the report, the preview)
    return report
