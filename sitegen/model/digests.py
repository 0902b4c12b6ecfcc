"""Content digests: stable hashes of what each page shows, for incremental builds.

Role: give every article a `card_digest` (what a list card shows) and a
`digest` (what its own page shows: body hash, author box, related cards,
newer/older links), and the site a `nav_digest` (the names and URLs of every
site-wide list — clusters, agents, authors, tags, languages — but not their
article counts or the article list, so one new article does not touch every
page; THEMES.md tells theme authors this). `layout` combines them into `Page.input_digest`. Must
never do I/O or log; digests must not depend on dict order or object identity.
"""

from __future__ import annotations

import hashlib
import marshal
from collections.abc import Iterable
from typing import Any

from sitegen.model.views import ArticleView, Section, Site


def stable_hash(parts: Iterable[object]) -> str:
    """SHA-256 (32 hex chars) of *parts* (plain values: str, int, bool, None, tuples, lists).

    They are written with `marshal` format 0, which has no back-references and no
    interning flags, so equal values give equal bytes whatever their identity (about
    twice as fast as the `repr` of each part). A value marshal cannot write is hashed by
    its `repr` instead.
    """
    values: Any = parts if isinstance(parts, tuple) else tuple(parts)
    try:
        data = marshal.dumps(values, 0)
    except ValueError:
        data = "\x00".join(map(repr, values)).encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:32]


def _ref(section: Section | None) -> tuple[str, str] | None:
    return (section.name, section.url) if section is not None else None


def _card(article: ArticleView) -> str:
    return stable_hash((
        article.id, article.url, article.title, article.description, article.language,
        article.published.isoformat(), article.updated.isoformat(), article.reading_minutes,
        article.image, [(t.name, t.url) for t in article.tags], _ref(article.agent),
        _ref(article.cluster), article.cluster.colour if article.cluster else None,
        _ref(article.author), article.author.image if article.author else None,
    ))


def section_digest(section: Section) -> str:
    """What a section page's header shows about its object."""
    return stable_hash((
        type(section).__name__, section.id, section.name, section.url, section.description,
        getattr(section, "colour", None), getattr(section, "bio", None),
        getattr(section, "image", None), getattr(section, "model", None),
    ))


def card_digest(article: ArticleView) -> str:
    """What a list card shows of *article*."""
    return _card(article)


class SectionDigests:
    """`section_digest` of each section, hashed once each (sections are keyed by identity)."""

    def __init__(self) -> None:
        self._found: dict[int, str] = {}

    def __call__(self, section: Section | None) -> str | None:
        if section is None:
            return None
        found = self._found.get(id(section))
        if found is None:
            found = self._found[id(section)] = section_digest(section)
        return found


def page_digest(article: ArticleView, about: SectionDigests) -> str:
    """What *article*'s own page shows (its card digest must be set, and its related's)."""
    return stable_hash((
        article.card_digest, article.body_hash, article.keywords,
        about(article.author), about(article.cluster), about(article.agent),
        [r.card_digest for r in article.related],
        _ref_article(article.newer), _ref_article(article.older),
    ))


def digest_articles(site: Site) -> None:
    """Fill `card_digest` and `digest` on every article, and `site.nav_digest`."""
    for article in site.articles:
        article.card_digest = _card(article)
    about = SectionDigests()
    for article in site.articles:
        article.digest = page_digest(article, about)
    site.nav_digest = stable_hash((
        site.title, site.description, site.base_url, site.language, site.feed_url,
        [(c.name, c.url, c.colour) for c in site.clusters],
        [(a.name, a.url) for a in site.agents],
        [(a.name, a.url) for a in site.authors],
        [(t.name, t.url) for t in site.tags],
        [(lang.name, lang.url) for lang in site.languages],
        bool(site.social_posts),
    ))


def _ref_article(article: ArticleView | None) -> tuple[str, str] | None:
    return (article.title, article.url) if article is not None else None
