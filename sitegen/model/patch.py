"""Patching a Site graph with new versions of a few articles, when nothing moves.

Role: a rebuild after an edit mostly changes an article's body, title or
description, which moves nothing: the article keeps its slug, URL, date, language,
tags and sections, so every other article keeps its slug, every list keeps its
order and every page its place. `patch_site` checks that each new record is such
an edit of an article the graph already holds (or of one it never held that is
still unpublished), and only then changes the graph in place: the article's own
fields, the digests that show it (its card and page, its neighbours' and the pages
listing it as related), the input digests of the pages that show those, and its
repair sentences. Anything else — a new, unpublished or deleted article, a new
date, slug, language, tag or section — returns None, and the caller builds the
graph again from the whole workspace (`build_site`); a patched graph equals the one
`build_site` would make (the tests compare the two). Must never do I/O, log, or
leave a graph half patched.
"""

from __future__ import annotations

from collections.abc import Sequence

from sitegen.config import Config
from sitegen.fetch.records import Article
from sitegen.model.digests import SectionDigests, card_digest, page_digest, section_digest
from sitegen.model.layout import article_page_digest, listing_digest
from sitegen.model.site import article_place, article_view, is_empty, is_published
from sitegen.model.slugs import RESERVED, allocation_repairs
from sitegen.model.views import ArticleView, Section, Site

#: The fields an in-place edit may change (everything else of a view is its place or links).
OWN_FIELDS = ("title", "description", "keywords", "updated", "reading_minutes", "body_kind",
              "blocks", "content_source", "body_hash", "image")
_LISTINGS = frozenset({"home", "agent", "cluster", "author", "tag", "language"})


def patch_site(site: Site, config: Config, records: Sequence[Article]) -> list[str] | None:
    """Apply *records* (new versions of articles) to *site* in place, or None if any moves.

    Returns the model's repair sentences in the order a full build would log them
    (the caller logs them). With None, *site* is untouched.
    """
    by_id = {a.id: a for a in site.articles}
    skipped = {key for key, _ in site.repairs.early}
    edits: list[tuple[ArticleView, ArticleView, list[str]]] = []
    for record in records:
        if record.id in skipped:
            return None  # the filter's sentence would change with it
        old = by_id.get(record.id)
        if old is None:
            if is_published(record):
                return None  # a newly published article takes a place
            continue  # an edit of a draft: no page shows it
        view = _edited_view(site, config, record, old)
        if view is None:
            return None
        edits.append((old, view[0], view[1]))
    if not edits:
        return site.repairs.in_order(site.articles)
    for old, new, made in edits:
        for name in OWN_FIELDS:
            setattr(old, name, getattr(new, name))
        if made:
            site.repairs.articles[old.id] = made
        else:
            site.repairs.articles.pop(old.id, None)
    _refresh_digests(site, [old for old, _, _ in edits])
    return site.repairs.in_order(site.articles)


def _edited_view(site: Site, config: Config, record: Article,
                 old: ArticleView) -> tuple[ArticleView, list[str]] | None:
    """The new view of *old* from *record* and its repairs, or None when it moves."""
    if not is_published(record) or is_empty(record):
        return None
    place = site.places.get(record.id)
    if place is None:
        return None

    def keep_slug(wanted: str, what: str) -> tuple[str, list[str]]:
        # The same wanted slug, with every other article as it was, is allocated the same.
        return old.slug, allocation_repairs(wanted, old.slug, wanted in RESERVED, what)

    made: list[str] = []
    view, wanted = article_view(config, record, keep_slug, {}, {}, made)
    if (article_place(record, wanted) != place or view.published != old.published
            or view.language != old.language or view.url != old.url):
        return None
    return view, made


def _refresh_digests(site: Site, edited: list[ArticleView]) -> None:
    """Digests of the edited articles, of the articles that show them, and their pages."""
    cards: set[int] = set()
    for article in edited:
        digest = card_digest(article)
        if digest != article.card_digest:
            article.card_digest = digest
            cards.add(id(article))
    shown = {id(a): a for a in edited}
    for article in edited:
        for near in (article.newer, article.older):
            if near is not None:
                shown[id(near)] = near
    if cards:
        for article in site.articles:
            if not cards.isdisjoint(map(id, article.related)):
                shown[id(article)] = article
    about = SectionDigests()
    pages: set[int] = set()
    for article in shown.values():
        digest = page_digest(article, about)
        if digest != article.digest:
            article.digest = digest
            pages.add(id(article))
    titled = {id(a) for a in edited}
    for page in site.pages:
        shows = page.article
        if shows is not None:
            if id(shows) in titled:
                page.title = shows.title
            if id(shows) in pages:
                page.input_digest = article_page_digest(site, shows)
        elif page.kind in _LISTINGS and not cards.isdisjoint(map(id, page.articles)):
            obj = page.obj
            page.input_digest = listing_digest(
                site, page, section_digest(obj) if isinstance(obj, Section) else "")
