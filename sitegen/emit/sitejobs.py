"""A build's files beside its pages: assets, beacon settings, headers, redirects, own files.

Role: for `sitegen.build`, gather the theme's static files (content-hashed names), the
beacon's settings, and every site-wide file not drawn by a template (`_headers`, redirect
pages and `_redirects`, the owner's `static/` files) as (path, bytes). Feeds, sitemaps and
robots.txt are drawn by templates and rendered with the pages (`site.files`; those the
owner's `static/` does not replace: `sitegen.emit.ownfiles.rendered_files`). Every build
makes these files: they are cheap next to the pages, and the writer keeps each file whose
bytes did not change. It must never render a page, never write the output itself, and
never read the wall clock into a file.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from sitegen.config import Config
    from sitegen.emit.assets import AssetSet
    from sitegen.model.views import Site
    from sitegen.render.pages import BeaconSettings, Renderer

log = logging.getLogger("sitegen.build")

def theme_assets(config: Config, with_beacon: bool) -> AssetSet:
    """The theme layers' static files (and the beacon script), with content-hashed names."""
    from sitegen.emit.assets import BEACON_NAME, AssetSet, beacon_source, collect_static
    from sitegen.emit.search import SEARCH_SCRIPT
    from sitegen.render.themes import ThemeSet

    files, junk = collect_static(ThemeSet(config).static_dirs())
    if not config.search.enabled:  # (the search page's script: no page loads it)
        files.pop(SEARCH_SCRIPT, None)
    if with_beacon:
        files[BEACON_NAME] = beacon_source()
    return AssetSet(files, base_path=urlsplit(config.site.base_url).path or "/", junk=junk)


def beacon_key(config: Config) -> str | None:
    """The public analytics key when the beacon is on (None, with a warning, when unset)."""
    if not config.analytics.enabled:
        return None
    key = config.analytics_key()
    if key is None:
        name = config.analytics.key_env
        state = "is empty" if name in os.environ else "is not set"
        log.warning("analytics is enabled but %s %s: the pages get no beacon (export "
                    "the public analytics key, or set [analytics] enabled = false)", name, state)
    return key


def beacon_settings(config: Config, key: str | None, assets: AssetSet,
                    ) -> BeaconSettings | None:
    """What the pages' beacon tag carries, or None without a key (no beacon)."""
    if key is None:
        return None
    from sitegen.emit.assets import BEACON_NAME
    from sitegen.render.pages import BeaconSettings

    endpoint = f"{config.api.base_url}/api/v2/workspaces/{config.api.workspace}/analytics"
    return BeaconSettings(endpoint=endpoint, key=key, site_slug=config.analytics.site_slug,
                          script_url=assets.url(BEACON_NAME),
                          visitor=config.analytics.visitor)


def site_files(site: Site, renderer: Renderer,
               assets: AssetSet) -> Iterator[tuple[str, bytes]]:
    """Every file of the site not drawn by a template: `_headers`, assets (the images are
    the images stage's: `sitegen.images.stage`)."""
    from sitegen.emit.headers import render_headers

    beacon = renderer.beacon.endpoint if renderer.beacon is not None else None
    yield "_headers", render_headers(urlsplit(site.base_url).path, beacon,
                                     search=site.search_url is not None)
    for asset in assets.assets():
        yield asset.path, asset.data


def output_files(site: Site, renderer: Renderer, assets: AssetSet,
                 own_static: Mapping[str, bytes], history: Mapping[str, list[str]],
                 ) -> dict[str, bytes]:
    """`site_files`, the redirects of moved articles (*history*) and the owner's `static/`.

    A static file on (or around) a file sitegen makes is a configuration error, but for a
    `robots.txt` of the owner's, which replaces sitegen's (`rendered_files`), and a
    `_redirects`, which is merged with sitegen's (`emit.redirects`); an old URL now taken by
    a page or file of the site, or running into (or around) an owner's file, gives way to it.
    """
    from sitegen.emit.ownfiles import check_collisions, clashes, rendered_files
    from sitegen.emit.redirects import (
        REDIRECTS_FILE,
        output_path,
        owner_sources,
        plan_redirects,
        redirect_files,
    )

    owner_redirects = own_static.get(REDIRECTS_FILE)
    own = {path: data for path, data in own_static.items() if path != REDIRECTS_FILE}
    files = dict(site_files(site, renderer, assets))
    made = [*files, *(page.path for page in site.pages),
            *(page.path for page in rendered_files(site, own_static))]
    check_collisions(own, made)
    moved = plan_redirects(site, history, {*made, *own},
                           owner_sources(owner_redirects, site.base_url))
    blocked = {page: rel for rel, page in clashes(own, map(output_path, moved)).items()}
    for old in sorted(old for old in moved if output_path(old) in blocked):  # (the owner wins)
        log.warning("the old URL %s runs into your file static/%s, which keeps its path: no "
                    "redirect to %s was made", old, blocked[output_path(old)],
                    moved.pop(old))
    redirects = dict(redirect_files(site, moved, renderer.translator, owner_redirects))
    check_collisions(own, redirects)
    return {**files, **redirects, **own}
