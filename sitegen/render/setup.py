"""The render's set-up: the configuration and the model → a renderer ready to draw pages.

Role: the one room the recipe's plan stage asks for a renderer (`ready_renderer`): the theme
chain (one `ThemeSet`, its compiled templates kept in the store), the owner's pages' templates
checked, the theme's static files with content-hashed names (`theme_assets`, the beacon script
among them when the beacon is on), the beacon's settings (`beacon_settings`; the public key
read once, `beacon_key`), the body cache, the message catalogue's warnings. What it returns
(`ReadyRender`) carries the renderer, the hashed files the emit stage writes as they are, the
share cards the pages name, and the compiled templates to save with the build. It must never
render a page, write the output or print a key.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from sitegen.config import Config
from sitegen.images.picture import ImageMap
from sitegen.model.views import Site
from sitegen.ownpages import check_templates
from sitegen.render.assets import BEACON_NAME, AssetSet, beacon_source, collect_static
from sitegen.render.beacon import BeaconSettings
from sitegen.render.bodies import BodyCache, body_fingerprint
from sitegen.render.compiled import StoredBytecode
from sitegen.render.markdown import ImageFinder
from sitegen.render.pages import Renderer
from sitegen.render.sharecard import CardFacts, wanted_cards
from sitegen.render.themes import ThemeSet
from sitegen.store import Store

log = logging.getLogger("sitegen.build")

#: The search page's script among the theme's files (left out with `[search] enabled = false`).
SEARCH_SCRIPT = "search.js"


@dataclass(frozen=True)
class ReadyRender:
    """A renderer ready to draw the site's pages, and what the rest of the build needs of its
    set-up."""

    renderer: Renderer
    assets: AssetSet
    """The theme's static files (and the beacon script) under content-hashed names."""
    compiled: StoredBytecode
    """The compiled templates, saved to the store when the build commits."""

    def asset_files(self) -> dict[str, bytes]:
        """The hashed files, output path → bytes (the emit stage writes them as they are)."""
        return {asset.path: asset.data for asset in self.assets.assets()}

    def share_cards(self) -> dict[str, CardFacts]:
        """The share cards the pages name, by address (none with `[share_cards]` off)."""
        renderer = self.renderer
        if not renderer.site.config.share_cards.enabled:
            return {}
        return wanted_cards(renderer.site, renderer.shown.share_image, renderer.images.bodies)


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


def theme_assets(config: Config, themes: ThemeSet, with_beacon: bool) -> AssetSet:
    """The theme layers' static files (and the beacon script), with content-hashed names."""
    files, junk = collect_static(themes.static_dirs())
    if not config.search.enabled:  # (the search page's script: no page loads it)
        files.pop(SEARCH_SCRIPT, None)
    if with_beacon:
        files[BEACON_NAME] = beacon_source()
    return AssetSet(files, base_path=urlsplit(config.site.base_url).path or "/", junk=junk)


def beacon_settings(config: Config, key: str | None, assets: AssetSet,
                    ) -> BeaconSettings | None:
    """What the pages' beacon tag carries, or None without a key (no beacon)."""
    if key is None:
        return None
    endpoint = f"{config.api.base_url}/api/v2/workspaces/{config.api.workspace}/analytics"
    return BeaconSettings(endpoint=endpoint, key=key, site_slug=config.analytics.site_slug,
                          script_url=assets.url(BEACON_NAME),
                          visitor=config.analytics.visitor)


def ready_renderer(config: Config, site: Site, store: Store, *, images: ImageMap,
                   parses: ImageFinder, force: bool, strict: bool, key: str | None,
                   before_render: Callable[[Renderer], None] | None = None) -> ReadyRender:
    """The renderer of *site* (see the module docstring): *key* is `beacon_key`'s answer,
    *parses* the images stage's markdown parses (the render renders from them), *force*
    renders every body anew, *strict* warns of each missing translation; *before_render* is
    handed the renderer before its warnings (the preview's first pages, and tests')."""
    compiled = StoredBytecode(store)
    themes = ThemeSet(config, bytecode=compiled)
    check_templates(site.own_pages, themes.template_source)
    assets = theme_assets(config, themes, key is not None)
    bodies = BodyCache(store, body_fingerprint(
        themes.template_dirs(), site.base_url, themes.fingerprint()), reuse=not force)
    renderer = Renderer(config, site, themes, asset_url=assets.url,
                        assets_fingerprint=assets.fingerprint(),
                        beacon=beacon_settings(config, key, assets), bodies=bodies,
                        images=images, parsed=parses)
    if before_render is not None:
        before_render(renderer)
    renderer.warn_metadata()
    if strict:  # a missing translation is silent (English) otherwise
        renderer.warn_missing_messages()
    return ReadyRender(renderer, assets, compiled)
