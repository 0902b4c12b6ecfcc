"""The owner's own pages in the site graph: slugs, URLs, the menu, and collisions.

Role: turn the `PageSource`s read from `pages/` into `OwnPage` views at `/<slug>/`
(the slug made safe exactly as an article's is), order the menu, and refuse — as a
configuration error naming both — a page whose URL another own page or a generated
page already has. Pure: it must never do I/O, log, or render.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from sitegen.errors import ConfigError
from sitegen.model.slugs import device_safe, reserved, short_hash, slugify, url_to_path
from sitegen.model.views import OwnPage, Page
from sitegen.ownpages import PageSource


def _stem(name: str) -> str:
    base = name.rpartition("/")[2]
    return base.rpartition(".")[0] or base


def own_page_views(sources: Sequence[PageSource]) -> list[OwnPage]:
    """The views of *sources* (file order); two pages with one URL are an error."""
    views: list[OwnPage] = []
    taken: dict[str, str] = {}
    for source in sources:
        wanted = source.slug or _stem(source.name)
        slug = device_safe(slugify(wanted) or "page-" + short_hash(wanted), "page")
        if slug in reserved():
            raise ConfigError(f"{source.name}: the slug {slug!r} is a URL sitegen keeps for "
                              "itself: set another slug in its front matter")
        url = f"/{slug}/"
        if slug in taken:
            raise ConfigError(f"{source.name} and {taken[slug]} both want the URL {url}: set "
                              "another slug in the front matter of one of them")
        taken[slug] = source.name
        titled = source.title + "\x00" if "![" in source.content else ""  # (`titled_hash`)
        body_hash = hashlib.sha256(f"own\x00{titled}{source.content}".encode()).hexdigest()
        views.append(OwnPage(
            slug=slug, url=url, path=url_to_path(url), title=source.title,
            description=source.description, menu=source.menu, template=source.template,
            content=source.content, body_hash=body_hash, source=source.name,
            updated=source.updated))
    return views


def menu_of(pages: Sequence[OwnPage]) -> list[OwnPage]:
    """The pages with a menu position, in that order (then by slug)."""
    return sorted((p for p in pages if p.menu is not None),
                  key=lambda p: (p.menu if p.menu is not None else 0, p.slug))


def own_layout(pages: Sequence[OwnPage], generated: Sequence[Page],
               language: str) -> list[Page]:
    """The own pages' `Page`s; one on a generated page's URL is an error naming both."""
    by_path = {page.path: page for page in generated}
    laid: list[Page] = []
    for own in pages:
        clash = by_path.get(own.path)
        if clash is not None:
            raise ConfigError(f"{own.source} wants the URL {own.url}, which sitegen generates "
                              f"for the {clash.kind} page {clash.title!r}: set another slug "
                              "in its front matter")
        laid.append(Page(kind="own", path=own.path, url=own.url, template=own.template,
                         title=own.title, obj=own, language=language, updated=own.updated))
    return laid
