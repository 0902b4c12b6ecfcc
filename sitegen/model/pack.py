"""A Site graph as plain values, and back: what the model memo stores.

Role: `pack_site` turns a Site (articles, sections, tags, languages, social posts,
digests, places, repairs and every page's input digest) into nested tuples of
str, int and None that `marshal` writes; `unpack_site` makes the graph again under
the same config, the links (sections, related, newer/older) by position and the
pages laid out anew with their stored digests. Article bodies travel as text,
apart from the graph (one (blocks, markdown) pair per article, in the articles'
order): markdown as it is, blocks as the content cache packs them (one JSON text,
made objects only when read), so neither direction touches a block, and an
unpacked graph reads an article's body text only when it is asked for (a rebuild
renders a handful). Values of the wrong shape raise TypeError, ValueError,
IndexError or KeyError (the memo's reader then has no memo); the values themselves
are trusted as this code wrote them (the reader checks a checksum). Must never do
I/O, log, or render.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial
from typing import Any

from sitegen.config import Config
from sitegen.fetch.cache import LazyBlocks, PackedBlocks, pack_blocks
from sitegen.model.body import PickedBlocks
from sitegen.model.layout import layout_pages
from sitegen.model.related import link_neighbours
from sitegen.model.views import (
    AgentView,
    ArticlePlace,
    ArticleView,
    AuthorView,
    ClusterView,
    LanguageView,
    ModelRepairs,
    Section,
    Site,
    SocialPostView,
    TagRef,
    TagView,
)

Packed = tuple[Any, ...]


def pack_site(site: Site) -> Packed:
    """*site* as nested tuples of plain values: (graph, bodies) (see the module docstring)."""
    index = {id(a): i for i, a in enumerate(site.articles)}
    sections: list[Sequence[Section]] = [site.agents, site.clusters, site.authors, site.tags,
                                         site.languages]
    where: dict[int, int] = {}
    for group in sections[:3]:
        where.update((id(s), i) for i, s in enumerate(group))
    repairs = site.repairs
    rows = tuple(_pack_article(a, site.places[a.id], index, where) for a in site.articles)
    graph = (
        (site.title, site.description, site.base_url, site.language, site.nav_digest,
         site.feed_url),
        tuple(row for row, _ in rows),
        tuple(tuple(_pack_section(s, index) for s in group) for group in sections),
        tuple((p.id, p.title, p.slug, p.content, p.image,
               p.published.isoformat() if p.published else None) for p in site.social_posts),
        (tuple(repairs.early), tuple((k, tuple(v)) for k, v in repairs.articles.items()),
         tuple(repairs.late)),
        tuple((page.path, page.input_digest) for page in site.pages),
    )
    return graph, tuple(body for _, body in rows)


def _pack_article(a: ArticleView, place: ArticlePlace, index: dict[int, int],
                  where: dict[int, int]) -> tuple[Packed, tuple[str, str]]:
    blocks, text = _pack_blocks(a.blocks)
    return (
        a.id, a.slug, a.url, a.path, a.title, a.description, a.language,
        tuple((t.name, t.slug, t.url) for t in a.tags), tuple(a.keywords),
        a.published.isoformat(), a.updated.isoformat(), a.reading_minutes, a.body_kind,
        blocks, None, a.body_hash, a.image,
        *(-1 if s is None else where[id(s)] for s in (a.agent, a.cluster, a.author)),
        tuple(index[id(r)] for r in a.related), a.card_digest, a.digest,
        (place.wanted, place.tags, place.agent, place.cluster, place.author),
    ), (text, a.content)


def _pack_blocks(blocks: list[Any]) -> tuple[Packed | None, str]:
    """(("picked", count, positions) for unread picked blocks, else (count,); JSON text)."""
    if not blocks and not isinstance(blocks, PickedBlocks):
        return None, ""
    if isinstance(blocks, PickedBlocks):
        unread = blocks.unread()
        if unread is not None:
            source, positions = unread
            if isinstance(source, LazyBlocks) and not source.loaded:
                count, text = pack_blocks(source) or (0, "")
                return ("picked", count, positions), text
    packed = pack_blocks(blocks)
    assert packed is not None
    return (packed[0],), packed[1]


def _unpack_blocks(value: Any, text: Callable[[], str]) -> list[Any]:
    if value is None:
        return []
    if value[0] == "picked":
        _, count, positions = value
        return PickedBlocks(PackedBlocks(count, text), positions)
    (count,) = value
    return PackedBlocks(count, text)


def _body_part(bodies: Sequence[tuple[str, str]], index: int, part: int) -> str:
    """One text of article *index*'s body (0: its blocks' JSON, 1: its markdown)."""
    text = bodies[index][part]
    if not isinstance(text, str):
        raise TypeError(f"the body of article {index} is not text")
    return text


def _pack_section(s: Section, index: dict[int, int]) -> Packed:
    extra = tuple(getattr(s, name) for name in _EXTRA.get(type(s), ()))
    return (s.id, s.name, s.slug, s.url, s.description, extra,
            tuple(index[id(a)] for a in s.articles))


_EXTRA: dict[type, tuple[str, ...]] = {
    AgentView: ("model",), ClusterView: ("colour",), AuthorView: ("bio", "image")}
_KINDS: tuple[type[Section], ...] = (AgentView, ClusterView, AuthorView, TagView, LanguageView)


def unpack_site(packed: Packed, config: Config) -> Site:
    """The Site that `pack_site` packed, under *config* (the same one it was built under).

    *packed* is (graph, bodies); the bodies may be any sequence that gives an article's
    (blocks, markdown) pair by position (the memo's reads them at the first such ask).
    """
    graph, bodies = packed
    head, rows, groups, social, repairs, digests = graph
    title, description, base_url, language, nav_digest, feed_url = head
    articles: list[ArticleView] = []
    places: dict[str, ArticlePlace] = {}
    tag_refs: dict[tuple[str, str, str], TagRef] = {}  # one per tag, as `build_site` makes
    for number, row in enumerate(rows):
        view, place = _unpack_article(row, bodies, number, tag_refs)
        articles.append(view)
        places[view.id] = place
    made: list[list[Section]] = []
    for kind, group in zip(_KINDS, groups, strict=True):
        made.append([_unpack_section(kind, row, articles) for row in group])
    agents, clusters, authors, tags, languages = made
    for view, row in zip(articles, rows, strict=True):
        agent, cluster, author = row[17:20]
        view.agent = agents[agent] if agent >= 0 else None
        view.cluster = clusters[cluster] if cluster >= 0 else None
        view.author = authors[author] if author >= 0 else None
        view.related = [articles[i] for i in row[20]]
    link_neighbours(articles)
    early, by_article, late = repairs
    site = Site(
        config=config, title=title, description=description, base_url=base_url,
        language=language, articles=articles,
        agents=agents, clusters=clusters, authors=authors,  # type: ignore[arg-type]
        tags=tags, languages=languages,  # type: ignore[arg-type]
        social_posts=[SocialPostView(i, t, s, c, m, _date(p) if p is not None else None)
                      for i, t, s, c, m, p in social],
        nav_digest=nav_digest, feed_url=feed_url, places=places,
        repairs=ModelRepairs([(k, m) for k, m in early],
                             {k: list(v) for k, v in by_article}, list(late)),
    )
    site.pages = layout_pages(site, dict(digests))
    return site


def _unpack_article(row: Sequence[Any], bodies: Sequence[tuple[str, str]], number: int,
                    tag_refs: dict[tuple[str, str, str], TagRef],
                    ) -> tuple[ArticleView, ArticlePlace]:
    (key, slug, url, path, title, description, language, tags, keywords, published,
     updated, minutes, kind, blocks, _, body_hash, image, _, _, _, _, card, digest,
     place) = row
    if kind not in _BODY_KINDS:
        raise ValueError(f"unknown body kind {kind!r}")
    refs = []
    for tag in tags:
        ref = tag_refs.get(tag)
        if ref is None:
            ref = tag_refs[tag] = TagRef(*tag)
        refs.append(ref)
    view = ArticleView(
        key, slug, url, path, title, description, language, refs,
        list(keywords), _date(published), _date(updated), minutes, kind,
        _unpack_blocks(blocks, partial(_body_part, bodies, number, 0)),
        partial(_body_part, bodies, number, 1), body_hash, image, card_digest=card,
        digest=digest)
    return view, ArticlePlace(*place)


_BODY_KINDS = frozenset({"blocks", "markdown"})


def _unpack_section(kind: type[Section], row: Sequence[Any],
                    articles: list[ArticleView]) -> Section:
    key, name, slug, url, description, extra, members = row
    section = kind(id=key, name=name, slug=slug, url=url, description=description,
                   articles=[articles[i] for i in members])
    for field_name, value in zip(_EXTRA.get(kind, ()), extra, strict=True):
        setattr(section, field_name, value)
    return section


def _date(value: Any) -> datetime:
    return datetime.fromisoformat(value)
