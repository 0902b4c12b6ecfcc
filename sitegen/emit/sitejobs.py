"""A build's files beside its pages: hashed assets, headers, redirects, the owner's files.

Role: for `sitegen.build`, gather every site-wide file not drawn by a template as (path,
bytes): the theme's static files as the render's set-up named them (content-hashed,
`sitegen.render.setup`), `_headers`, redirect pages and `_redirects`, the owner's `static/`
files. Feeds, sitemaps and
robots.txt are drawn by templates and rendered with the pages (`site.files`; those the
owner's `static/` does not replace: `sitegen.emit.ownfiles.rendered_files`). Every build
makes these files: they are cheap next to the pages, and the writer keeps each file whose
bytes did not change. It must never render a page, never write the output itself, and
never read the wall clock into a file, and never import the render (what it needs of it
is handed in: the hashed files, the beacon's endpoint, the messages of a language).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from sitegen.model.views import Site

log = logging.getLogger("sitegen.build")

#: The messages of a language (`Renderer.translator`): a message → its translation.
Translator = Callable[[str], Callable[..., str]]


def site_files(site: Site, assets: Mapping[str, bytes],
               beacon: str | None) -> Iterator[tuple[str, bytes]]:
    """Every file of the site not drawn by a template: `_headers` (naming the beacon's
    endpoint *beacon*, if any), the hashed *assets* (the images are the images stage's:
    `sitegen.images.stage`)."""
    from sitegen.emit.headers import render_headers

    yield "_headers", render_headers(urlsplit(site.base_url).path, beacon,
                                     search=site.search_url is not None)
    yield from assets.items()


def output_files(site: Site, assets: Mapping[str, bytes], beacon: str | None,
                 translator: Translator, own_static: Mapping[str, bytes],
                 history: Mapping[str, list[str]]) -> dict[str, bytes]:
    """`site_files`, the redirects of moved articles (*history*; their pages in the
    language of their target, through *translator*) and the owner's `static/`.

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
    files = dict(site_files(site, assets, beacon))
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
    redirects = dict(redirect_files(site, moved, translator, owner_redirects))
    check_collisions(own, redirects)
    return {**files, **redirects, **own}
