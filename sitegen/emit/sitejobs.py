"""A build's site files beside its pages: assets, beacon settings, feeds, sitemaps, robots.txt.

Role: for `sitegen.build`, find which of these files the previous output already holds
(the writer keeps a file whose input hash matches its manifest entry) and turn the rest
into render-pool jobs (feeds) or writes through the writer (sitemaps, robots.txt). It
must never render a page, never write the output but through the writer, and never
read the wall clock into a file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from sitegen.config import Config
    from sitegen.emit.assets import AssetSet
    from sitegen.emit.sitefiles import FeedPlan
    from sitegen.emit.writer import OutputWriter
    from sitegen.model.views import ArticleView, Site
    from sitegen.render.pages import BeaconSettings, Job, Renderer


def theme_assets(config: Config, with_beacon: bool) -> AssetSet:
    """The theme layers' static files (and the beacon script), with content-hashed names."""
    from sitegen.emit.assets import BEACON_NAME, AssetSet, beacon_source, collect_static
    from sitegen.render.themes import ThemeSet

    files, junk = collect_static(ThemeSet(config).static_dirs())
    if with_beacon:
        files[BEACON_NAME] = beacon_source()
    return AssetSet(files, base_path=urlsplit(config.site.base_url).path or "/", junk=junk)


def beacon_settings(config: Config, key: str | None, assets: AssetSet,
                    ) -> BeaconSettings | None:
    """What the pages' beacon tag carries, or None without a key (no beacon)."""
    if key is None:
        return None
    from sitegen.emit.assets import BEACON_NAME
    from sitegen.render.pages import BeaconSettings

    endpoint = f"{config.api.base_url}/api/v2/workspaces/{config.api.workspace}/analytics"
    return BeaconSettings(endpoint=endpoint, key=key, site_slug=config.analytics.site_slug,
                          script_url=assets.url(BEACON_NAME))


#: Feeds rendered per pool task (a feed takes a few milliseconds).
FEEDS_PER_JOB = 8


def feed_jobs(site: Site, hashes: dict[str, str], writer: OutputWriter,
              renderer: Renderer) -> tuple[list[Job], dict[str, str]]:
    """Jobs rendering the feeds whose inputs changed, and their paths' input hashes.

    An entry's part of a feed's input hash is its article page's (from *hashes*).
    """
    from functools import partial

    from sitegen.emit.sitefiles import plan_feeds
    from sitegen.render.pages import Job

    article_pages = {page.article.id: page for page in site.pages if page.article is not None}

    def article_hash(article: ArticleView) -> str:
        page = article_pages.get(article.id)
        return hashes[page.path] if page is not None else article.digest

    todo = [plan for plan in plan_feeds(site, article_hash)
            if not writer.keep(plan.path, plan.input_hash)]
    renderer.preload_bodies(article for plan in todo for article in plan.articles)
    jobs: list[Job] = []
    for i in range(0, len(todo), FEEDS_PER_JOB):
        plans = todo[i:i + FEEDS_PER_JOB]
        jobs.append(Job(partial(feed_files, site, plans, renderer.article_html),
                        articles=[article for plan in plans for article in plan.articles]))
    return jobs, {plan.path: plan.input_hash for plan in todo}


def feed_files(site: Site, plans: list[FeedPlan],
               article_html: Callable[[ArticleView], str]) -> list[tuple[str, bytes]]:
    """The feeds of *plans*, rendered (a pool job)."""
    from sitegen.emit.sitefiles import render_feed

    return [(plan.path, render_feed(site, plan, article_html)) for plan in plans]


def write_sitemaps(site: Site, writer: OutputWriter) -> None:
    """The sitemaps and robots.txt, rendered and handed to *writer* (unchanged ones kept).

    The sitemap is rendered here, in one pass over the pages, rather than hashed first
    and rendered in the render pool: a rebuild after one article changed renders it
    anyway (its date changed), and rendering costs about what hashing its entries did.
    """
    import hashlib

    from sitegen import __version__
    from sitegen.emit.sitefiles import sitemap_entries
    from sitegen.emit.sitemap import render_robots, render_sitemaps

    for path, data in render_sitemaps(sitemap_entries(site), site.base_url):
        digest = hashlib.sha256(data).hexdigest()
        if not writer.keep(path, digest[:32]):
            writer.write_hashed(path, data, digest, input_hash=digest[:32])
    robots = hashlib.sha256(f"robots|{__version__}|{site.base_url}".encode()).hexdigest()[:32]
    if not writer.keep("robots.txt", robots):
        writer.write("robots.txt", render_robots(site.base_url), input_hash=robots)


def demo_media() -> Iterator[tuple[str, bytes]]:
    """The demo workspace's images, served from the site itself (`--demo`)."""
    from importlib.resources import files

    folder = files("sitegen.emulator").joinpath("data", "media")
    for entry in sorted(folder.iterdir(), key=lambda item: item.name):
        if entry.is_file() and not entry.name.startswith("."):
            yield f"media/demo/{entry.name}", entry.read_bytes()
