"""What a page's context is made of, for incremental builds: its reads and its fingerprints.

Role: a page's context (`Renderer.context`) is made of the page, the site, the page's `obj`,
what its SEO values read (`sitegen.render.seo.meta_sources`), its template and the build's
settings. `context_reads` names the first four as reads (`sitegen.render.reads`), recorded
with the page's own, so the plan keeps a page by looking up fingerprints it takes anyway;
`settings_fingerprint` is the rest, one per template. `values_fingerprint` takes a context's
values whole (entities by key, the body by its key, the rest as plain values), for the few
pages a cached partial was rendered with (the read `C page:<path>`). This module must never
render, write files, or read the wall clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sitegen.model.views import Page, Site
from sitegen.render.fingerprints import context_fingerprint
from sitegen.render.i18n import Translator
from sitegen.render.seo import meta_sources


def context_reads(site: Site, page: Page, keys: Mapping[int, str],
                  body_images: Mapping[str, Sequence[str]]) -> list[str]:
    """The reads *page*'s context is made of: the page, the site (its own fields and its
    languages), the page's `obj`, and the entities and images its SEO values read."""
    entities, images = meta_sources(site, page, body_images)
    return [keys.get(id(page)) or "page:" + page.path, "site", "site.languages", *(
        keys[id(entity)] for entity in (page.obj, *entities) if id(entity) in keys),
        *("I\x00" + url for url in images)]


def settings_fingerprint(template: str, settings: Mapping[str, object]) -> bytes:
    """What a context holds beside its reads: the page's template and the build's settings."""
    return context_fingerprint(repr([template, dict(settings)]))


def values_fingerprint(page: Page, context: Mapping[str, object], keys: Mapping[int, str],
                       skipped: set[int], settings: Mapping[str, object]) -> bytes:
    """Every value of *context* but those in *skipped* (the helpers: their settings count),
    entities by key (their reads are recorded one by one), the body by its key, the rest as
    plain values (their `repr` is canonical), in the order `Renderer.context` makes."""
    parts: list[object] = [page.template, dict(settings)]
    for name, value in context.items():
        if id(value) in skipped:
            continue
        if name in ("body", "toc"):  # the body's source and code count instead
            value = (page.article.body_hash if page.article is not None else
                     page.own_page.body_hash if page.own_page is not None else "")
        elif type(value) is Translator:
            value = value.language  # (its messages count in the settings)
        elif id(value) in keys:
            value = "E" + keys[id(value)]
        elif type(value) is list:
            value = ["E" + keys[id(v)] if id(v) in keys else v for v in value]
        parts += (name, value)
    return context_fingerprint(repr(parts))
