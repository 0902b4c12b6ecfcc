"""`sitegen build`: config → fetch → model → render → emit → commit → report.

Role: the recipe, short. `run_build` gathers everything first (content, site
graph, assets, rendered pages, feeds, sitemap) into the writer's staging folder
and commits only at the end, so any failure — or `--strict` with warnings —
leaves the previous output untouched. Pages whose input hash matches the
previous manifest are not rendered at all. `build_command` is the CLI face:
options → `run_build` → one summary line (and `--report FILE`). This module must
never write the output itself (the writer does), never print or log a key, and
never read the wall clock into the output.
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from sitegen.budget import monthly_budget  # issue-24: the steady-state projection
from sitegen.errors import ConfigError, StrictError
from sitegen.heap import collector_paused, freeze_new_objects, frozen_heap
from sitegen.logs import LOGGER_NAME, WarningCounter
from sitegen.report import BuildReport, Progress, Timings, write_report  # issue-24

if TYPE_CHECKING:
    import httpx

    from sitegen.config import Config
    from sitegen.emit.stamp import StampedBuild, StampKey
    from sitegen.emit.writer import EarlySurvey, OutputWriter
    from sitegen.fetch.cache import CacheState
    from sitegen.fetch.sync import SyncResult
    from sitegen.model.views import Site
    from sitegen.render.pages import Job, Renderer
    from sitegen.sitememo import Resumed
    from sitegen.workspace import ApiVersion, Workspace

log = logging.getLogger("sitegen.build")

DEMO_KEY = "demo"


def check_output(config: Config, output: Path) -> None:
    """Refuse an output folder that holds the site itself (it is swapped out wholesale)."""
    root = config.root.resolve()
    if output == root or output in root.parents or output == config.cache_path:
        raise ConfigError(
            f"the output folder {output} contains the site's own files: choose a dedicated "
            "folder such as _site (-o or [site] output)"
        )


def beacon_key(config: Config, *, demo: bool) -> str | None:
    """The public analytics key when the beacon is on (warnings as SPEC and the brief say)."""
    if not config.analytics.enabled:
        return None
    key = config.analytics_key()
    if key is None:
        log.warning("analytics is enabled but %s is not set: the pages get no beacon (export "
                    "the public analytics key, or set [analytics] enabled = false)",
                    config.analytics.key_env)
        return None
    api_key = None if demo else os.environ.get(config.api.key_env, "").strip()
    if api_key and key == api_key:
        log.warning("the analytics key in %s equals the API key in %s: the beacon key is "
                    "public in every page, so use a separate beacon-only key",
                    config.analytics.key_env, config.api.key_env)
    return key


def _fetch(config: Config, *, offline: bool, refresh: bool, demo: bool, max_calls: int | None,
           transport: httpx.AsyncBaseTransport | None, progress: Progress) -> SyncResult:
    from sitegen.fetch.sync import demo_transport, sync

    if demo and transport is None and not offline:
        transport = demo_transport()
    return sync(config, key=DEMO_KEY if demo else None, transport=transport,
                refresh=refresh, offline=offline, max_calls=max_calls, progress=progress)


def run_build(
    config: Config, *, output: Path, offline: bool = False, refresh: bool = False,
    demo: bool = False, strict: bool = False, max_calls: int | None = None,
    transport: httpx.AsyncBaseTransport | None = None, workspace: Workspace | None = None,
    progress: Progress | None = None, lock_timeout: float = 60.0,
    stamp: StampKey | None = None, output_as_given: Path | None = None,
    site: Site | None = None, before_render: Callable[[Renderer], None] | None = None,
    locate_stamp: Callable[[], StampKey | None] | None = None, survey_ahead: bool = False,
    early_survey: EarlySurvey | None = None,
) -> BuildReport:
    """Build the site into *output*; with *workspace* given, nothing is fetched.

    The preview's hooks: *site* (built from this same config and workspace) skips the
    model stage; *before_render* is called with the renderer before any page is rendered
    (to render the pages open browsers show first).

    Warnings logged during the build are counted here (whoever set up logging), so
    `strict` fails the build before the commit and the report tells how many there were.
    With *stamp* (an offline build's key, taken before anything was read), the
    committed build is recorded for `build_command`'s no-change fast path. An online
    build gets *locate_stamp* instead: once the sync has brought the content cache up
    to date, the build is exactly an offline build of that cache, so a matching stamp
    ends it there (nothing rendered, the output untouched) and a new one is recorded
    after the commit. The output lock is taken first; with *survey_ahead* a child
    process surveys the output's trees while the model is built (`sitegen.emit.survey`),
    or goes on with the *early_survey* started before the config was loaded.
    """
    counter = WarningCounter()
    logger = logging.getLogger(LOGGER_NAME)
    logger.addHandler(counter)
    try:
        with frozen_heap():  # see `sitegen.heap`; _run_build freezes what it builds
            return _run_build(
                config, output=output, offline=offline, refresh=refresh, demo=demo,
                strict=strict, max_calls=max_calls, transport=transport, workspace=workspace,
                progress=progress, lock_timeout=lock_timeout, counter=counter,
                stamp=stamp if offline and workspace is None else None,
                output_as_given=output_as_given or output, site=site,
                before_render=before_render,
                locate_stamp=locate_stamp if not offline and workspace is None else None,
                survey_ahead=survey_ahead, early_survey=early_survey)
    finally:
        logger.removeHandler(counter)


def _run_build(
    config: Config, *, output: Path, offline: bool, refresh: bool, demo: bool, strict: bool,
    max_calls: int | None, transport: httpx.AsyncBaseTransport | None,
    workspace: Workspace | None, progress: Progress | None, lock_timeout: float,
    counter: WarningCounter, stamp: StampKey | None, output_as_given: Path,
    site: Site | None = None, before_render: Callable[[Renderer], None] | None = None,
    locate_stamp: Callable[[], StampKey | None] | None = None, survey_ahead: bool = False,
    early_survey: EarlySurvey | None = None,
) -> BuildReport:
    from sitegen.emit.sitejobs import (
        beacon_settings,
        demo_media,
        feed_jobs,
        theme_assets,
        write_sitemaps,
    )
    from sitegen.emit.writer import OutputWriter

    output = Path(os.path.abspath(output))
    check_output(config, output)
    warnings_before = counter.count
    timings = Timings()
    progress = progress or Progress(enabled=False)
    with OutputWriter(output, lock_timeout=lock_timeout, background_cleanup=True,
                      keep_spare=True) as writer:
        if survey_ahead:
            # An online build surveys during its sync, which is longer than the child's
            # walks (the model after it may be short: see `sitegen.sitememo`); should the
            # sync find nothing new, the stamp answers and the child is ended unused.
            ahead = stamp if locate_stamp is None else locate_stamp()
            writer.start_survey(os.fspath(ahead.path) if ahead else None, early_survey)
        key = beacon_key(config, demo=demo)
        report = BuildReport()
        fetch_from = counter.count
        resumed = None
        if offline and workspace is None and site is None:
            # The last build's graph, patched with the cache's changes since (when they
            # move nothing): the cache's base need not even be read.
            with timings.stage("model"):
                resumed = _resume(config)
        state = None
        synced = None
        api_version: ApiVersion = resumed.api_version if resumed is not None else "v2"
        with timings.stage("fetch"):
            if resumed is not None:
                report.api = _offline_api(api_version)
                report.from_cache = True
            elif workspace is None:
                # The synced workspace itself is read only if the model memo cannot serve.
                synced = _fetch(config, offline=offline, refresh=refresh, demo=demo,
                                max_calls=max_calls, transport=transport, progress=progress)
                state, api_version = synced.cached, synced.api_version
                report.api, report.from_cache = synced.ledger.to_report(), synced.from_cache
            else:
                report.api = {"version": workspace.api_version, "calls": {}, "total": 0,
                              "retries": 0, "bytes": 0, "saved": 0}
                report.from_cache = True
                api_version = workspace.api_version
        # The content records (~10^5 objects at 4,000 articles) live until the end: out of the
        # cyclic collector's way, as the site graph is once built (each full collection would
        # walk them again, ~0.1-0.15 s, be it in an import, the model or the writer).
        freeze_new_objects()
        calls = report.api.get("total")
        if isinstance(calls, int) and calls > 0 and synced is not None:
            report.api["monthly"] = monthly_budget(config, synced, calls)  # issue-24
        # Warnings the stamp records (and replays) are the build's, not the fetch's: a later
        # offline build of the same cache would not see the sync's, nor its quota projection.
        fetch_to = counter.count
        if locate_stamp is not None:
            from sitegen.emit.stamp import check_stamp

            with timings.stage("stamp"):
                located = locate_stamp()
                stamped = check_stamp(located) if located is not None else None
            if stamped is not None:
                logged = counter.messages[warnings_before:fetch_from]  # this build's, so far
                return _replayed(stamped, logged, report, counter, warnings_before, strict,
                                 timings)
            stamp = located.with_content_sha() if located is not None else None
        # The model makes no cyclic garbage: the collector pauses while it runs.
        with timings.stage("model"):
            if resumed is not None:
                site = resumed.site
            elif site is None and state is not None:  # a sync left the cache as it stands
                resumed = _resume(config)
                site = resumed.site if resumed is not None else None
            if site is None:
                if workspace is None:
                    assert synced is not None
                    workspace = synced.workspace
                progress.status(f"building the site model ({len(workspace.articles)} articles)")
                site = _model(config, workspace, state)
                progress.clear()
        freeze_new_objects()  # the site graph
        report.articles = len(site.articles)
        report.html_pages = len(site.pages)
        with timings.stage("assets"):
            assets = theme_assets(config, key is not None)
            beacon = beacon_settings(config, key, assets)
        with timings.stage("render"):
            from sitegen.render.bodies import BodyStore, body_fingerprint
            from sitegen.render.pages import Renderer
            from sitegen.render.themes import ThemeSet

            themes = ThemeSet(config)
            store = BodyStore(config.cache_path, body_fingerprint(
                themes.template_dirs(), site.base_url, themes.fingerprint()))
            renderer = Renderer(config, site, themes, asset_url=assets.url, beacon=beacon,
                                bodies=store)
            if before_render is not None:
                before_render(renderer)
        # Feeds are planned here (reused ones kept) and rendered by the render pool's
        # workers after the pages, so the feeds stage times the planning; the sitemaps
        # are rendered (or kept) here.
        with timings.stage("feeds"):
            hashes = {page.path: renderer.page_hash(page) for page in site.pages}
        # The output survey is first needed here (`keep`): everything above gives the
        # surveying child that much more time (see `sitegen.emit.survey`).
        if stamp is not None:
            trusted = writer.surveyed_trust()
            if trusted is None:
                from sitegen.emit.stamprecord import recorded_stats

                trusted = recorded_stats(os.fspath(stamp.path), os.fspath(output))
            writer.trust_stats(trusted)
        with timings.stage("feeds"):
            jobs, job_hashes = feed_jobs(site, hashes, writer, renderer)
        with timings.stage("sitemap"):
            write_sitemaps(site, writer)
        with timings.stage("render"):
            report.rendered = _render(site, hashes, renderer, writer, progress, jobs,
                                      job_hashes)
            renderer.save_bodies(site.articles)
            store.close()
        with timings.stage("sitemap"):
            for asset in assets.assets():
                writer.write(asset.path, asset.data)
            if demo:
                for path, data in demo_media():
                    writer.write(path, data)
        report.warnings = counter.count - warnings_before
        if strict and report.warnings:
            raise _strict_failure(report.warnings)
        with timings.stage("commit"):
            result = writer.commit()
            if stamp is not None:
                from sitegen.emit.stamp import save_stamp

                save_stamp(stamp, os.fspath(output), result.written + result.unchanged,
                           output_as_given=os.path.abspath(output_as_given),
                           env_names=[config.analytics.key_env, config.api.key_env],
                           warnings=[*counter.messages[warnings_before:fetch_from],
                                     *counter.messages[fetch_to:]],
                           articles=len(site.articles), html_pages=len(site.pages),
                           api=report.api if offline else _offline_api(api_version),
                           known=writer.confirmed_stats())
        report.written, report.unchanged, report.removed = (
            result.written, result.unchanged, result.removed)
        report.output_changed = result.touched_output
        report.warnings = counter.count - warnings_before
        report.timings = dict(timings.stages)
        report.seconds = timings.total()
        return report


def _resume(config: Config) -> Resumed | None:
    from sitegen.sitememo import resume_site

    with collector_paused():
        return resume_site(config)


def _model(config: Config, workspace: Workspace, state: CacheState | None) -> Site:
    """The site graph of *workspace*, built in full (its memo kept when *state* is known)."""
    from sitegen.bodyfacts import StoredFacts, load_facts, save_facts
    from sitegen.model import build_site

    known = load_facts(config.cache_path)
    with collector_paused():
        site = build_site(config, workspace, known.bodies, known.related)
    save_facts(config.cache_path, StoredFacts(site.body_facts, site.related_memo), known)
    if state is not None:
        from sitegen.sitememo import save_memo

        save_memo(config, site, state, workspace.api_version)
    return site


def _offline_api(api_version: ApiVersion) -> dict[str, object]:
    """The `api` report of an offline build of content from *api_version* (stamps replay it)."""
    from sitegen.fetch.ledger import CallLedger

    ledger = CallLedger()
    ledger.version = api_version
    return ledger.to_report()


def _render(site: Site, hashes: dict[str, str], renderer: Renderer, writer: OutputWriter,
            progress: Progress, jobs: list[Job], job_hashes: dict[str, str]) -> int:
    """Render the changed pages, then run *jobs*; write their files listed in *job_hashes*.

    *hashes* holds every page's input hash by path (`Renderer.page_hash`).

    Pool workers create fresh pages in a fresh staging folder themselves where the
    writer allows it (`OutputWriter.worker_staging`); those come back without bytes.
    """
    from contextlib import closing

    missed = set(writer.keep_all((page.path, hashes[page.path]) for page in site.pages))
    todo = [page for page in site.pages if page.path in missed]
    renderer.preload_bodies(page.article for page in todo if page.article is not None)
    stager = writer.worker_staging() if todo else None
    done = 0
    with closing(renderer.render_staged(todo, stager, jobs=jobs)) as files:
        for path, data, digest in files:
            if done < len(todo):
                if data is None:
                    writer.record_staged(path, digest, input_hash=hashes[path])
                else:
                    writer.write_hashed(path, data, digest, input_hash=hashes[path])
                done += 1
                progress.update("rendering", done, len(todo))
            elif path in job_hashes and data is not None:
                writer.write_hashed(path, data, digest, input_hash=job_hashes[path])
    progress.clear()
    return len(todo)


def _strict_failure(warnings: int) -> StrictError:
    return StrictError(f"--strict: the build logged {warnings} warning(s); the previous output "
                       "was kept (fix them, or build without --strict)")


def _replayed(stamped: StampedBuild, logged: list[str], report: BuildReport,
              counter: WarningCounter, warnings_before: int, strict: bool,
              timings: Timings) -> BuildReport:
    """An online build whose sync left the content as the stamped build saw it.

    The stamped warnings start with those logged before the fetch (the same config and
    environment: *logged* again by this build already); the rest are replayed.
    """
    replay = stamped.warnings
    if replay[:len(logged)] == logged:
        replay = replay[len(logged):]
    for message in replay:
        log.warning("%s", message)
    report.warnings = counter.count - warnings_before
    if strict and report.warnings:
        raise _strict_failure(report.warnings)
    report.html_pages, report.articles = stamped.html_pages, stamped.articles
    report.unchanged = stamped.files
    report.timings = dict(timings.stages)
    report.seconds = timings.total()
    return report


def _stamped_report(stamped: StampedBuild, strict: bool, timings: Timings) -> BuildReport:
    """The report of a build the stamp proved unchanged (its warnings logged again)."""
    for message in stamped.warnings:
        log.warning("%s", message)
    if strict and stamped.warnings:
        raise _strict_failure(len(stamped.warnings))
    report = BuildReport(html_pages=stamped.html_pages, articles=stamped.articles,
                         unchanged=stamped.files, api=stamped.api, from_cache=True,
                         warnings=len(stamped.warnings))
    report.timings = {"stamp": timings.total()}
    report.seconds = timings.total()
    return report


def build_command(options: argparse.Namespace) -> int:
    """`sitegen build [-c site.toml] [-o DIR] [--offline] [--refresh] [--strict] ...`.

    An offline build first checks the no-change stamp (`sitegen.emit.stamp`): when every
    input and output file is as the last build left them, it reports that build again
    without loading the content, the config models or the renderer. An online build
    checks it once its sync is done (a scheduled rebuild that finds nothing new).
    """
    timings = Timings()
    demo = bool(getattr(options, "demo", False))
    offline = bool(getattr(options, "offline", False))
    refresh = bool(getattr(options, "refresh", False))
    strict = bool(getattr(options, "strict", False))
    override = getattr(options, "output", None)
    stamp = None
    report: BuildReport | None = None
    early = None
    if offline and not refresh:
        from sitegen.emit.stamp import StampKey, check_stamp

        stamp = StampKey.locate(options.config, demo=demo, output=override)
        stamped = check_stamp(stamp) if stamp is not None else None
        if stamped is not None:
            report = _stamped_report(stamped, strict, timings)
        elif stamp is not None:
            stamp = stamp.with_content_sha()
            early = _survey_early(options.config, demo, override, stamp)
    try:
        if report is None:
            report = _configured_build(options, demo=demo, offline=offline, refresh=refresh,
                                       strict=strict, override=override, stamp=stamp,
                                       early=early)
    finally:
        if early is not None:
            early.close()
    write_report(getattr(options, "report", None), report)  # issue-24: failures in cli.py
    log.info("%s", report.summary())
    return 0


def _survey_early(config: str, demo: bool, override: str | None,
                  stamp: StampKey) -> EarlySurvey | None:
    """The output survey started now, before the config is loaded (see `survey_early`)."""
    from sitegen.emit.stamp import likely_output
    from sitegen.emit.writer import survey_early

    output = likely_output(config, demo=demo, output=override)
    return survey_early(output, os.fspath(stamp.path)) if output is not None else None


def _configured_build(options: argparse.Namespace, *, demo: bool, offline: bool, refresh: bool,
                      strict: bool, override: str | None, stamp: StampKey | None,
                      early: EarlySurvey | None) -> BuildReport:
    """`run_build` with the command's configuration and options."""
    from sitegen.config import build_config  # issue-24: --base-url, key and URL checks

    config = build_config(options.config, demo, offline=offline)  # issue-24
    output = config.output_path(override)
    given = Path(override) if override is not None else config.root / config.site.output
    quiet = bool(getattr(options, "quiet", False))
    locate = None
    if not offline and not refresh:
        from sitegen.emit.stamp import StampKey

        def locate() -> StampKey | None:
            return StampKey.locate(options.config, demo=demo, output=override)

    report = run_build(
        config, output=output, offline=offline, refresh=refresh, demo=demo, strict=strict,
        max_calls=getattr(options, "max_calls", None),
        progress=Progress(enabled=None if not quiet else False),
        stamp=stamp, output_as_given=given, locate_stamp=locate, survey_ahead=True,
        early_survey=early,
    )
    return report
