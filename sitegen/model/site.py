"""`build_site`: Workspace + Config → the Site graph every page is rendered from.

Role: keep published articles only, repair what is defective (slugs, titles,
dates, languages, colours, media URLs — one warning each), give every object a
safe URL, order articles newest first, attach agents, clusters, authors, tags and
languages, derive reading time, related and newer/older links, then lay out the
pages. Pure and deterministic: the same inputs give the same Site. It must never
do I/O or render HTML; it logs repairs through `sitegen.model`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from functools import partial
from typing import TypeVar

from sitegen.config import Config
from sitegen.fetch.fields import Record
from sitegen.fetch.records import Article, Cluster
from sitegen.model.body import article_body, titled_hash
from sitegen.model.claims import Claims, give_way
from sitegen.model.kinds import kind_of, layout_files, layout_pages
from sitegen.model.languages import native_name
from sitegen.model.own import menu_of, own_page_views
from sitegen.model.related import link_neighbours, link_related
from sitegen.model.slugs import (
    SlugAllocator,
    allocate_slug,
    device_safe,
    expand_permalink,
    is_device_name,
    reserved,
    short_hash,
    slugify,
    url_to_path,
    wanted_slug,
)
from sitegen.model.social import social_views
from sitegen.model.tags import attach_tags, tag_name, tag_names
from sitegen.model.views import (
    AgentView,
    ArticleView,
    AuthorView,
    ClusterView,
    LanguageView,
    Section,
    Site,
    TagRef,
    TagView,
)
from sitegen.ownpages import PageSource
from sitegen.urls import DEFAULT_COLOUR, is_safe_colour, safe_colour, safe_http_url
from sitegen.workspace import Workspace

log = logging.getLogger("sitegen.model")

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*$")
S = TypeVar("S", bound=Section)


def _text(value: str | None) -> str:
    return " ".join(value.split()) if value else ""


def _language(value: str | None, default: str, what: str) -> tuple[str, str]:
    """The normalized language code, and the repair made ("" when none)."""
    if value is None or not value.strip():
        return default, ""
    code = value.strip().replace("_", "-")
    if not _LANGUAGE.match(code):
        return default, f"{what} has an invalid language {value[:40]!r}; using {default!r}"
    primary, _, rest = code.partition("-")
    return primary.lower() + ("-" + rest if rest else ""), ""


def is_published(article: Article) -> bool:
    """True for an article the service calls published."""
    return (article.status or "").strip().lower() == "published"


def is_empty(article: Article) -> bool:
    """True for an article with neither title nor body (the model leaves it out)."""
    return not _text(article.title) and not article.content and not article.blocks


def _sections(
    records: Iterable[Record],
    make: Callable[[Record, str], S],
    name_of: Callable[[Record], str | None],
    what: str,
    warn: Callable[[str], None],
    kind: str,
    claims: Claims,
) -> dict[str, S]:
    """Views for records (sorted by id), with unique slugs derived from their names; one
    on a URL of the *kind* the owner's files hold (*claims*) moves."""
    url_of = partial(_kind_url, kind)
    allocator = SlugAllocator()
    views: dict[str, S] = {}
    for record in sorted(records, key=lambda r: str(getattr(r, "id", ""))):
        record_id = str(getattr(record, "id", ""))
        if record_id in views:
            warn(f"{what} {record_id} appears twice; the first record was kept")
            continue
        name = _text(name_of(record))
        wanted = slugify(name) or slugify(record_id) or short_hash(record_id)
        slug = allocator.allocate(wanted)
        if is_device_name(wanted):
            warn(f"{what} {record_id} slug {wanted!r} is a reserved name; using {slug!r} instead")
        slug, moved = give_way(claims, slug, url_of, partial(allocator.allocate, wanted),
                               f"{what} {record_id}", section=True)
        if moved:
            warn(moved)
        views[record_id] = make(record, slug)
    return views


def _kind_url(kind: str, slug: str) -> str:
    return kind_of(kind).url_for(slug=slug)


#: Chooses an article's final slug from the one it wants, its description and the URL a
#: slug gives it: (slug, repairs).
SlugChoice = Callable[[str, str, Callable[[str], str]], tuple[str, list[str]]]


def article_view(config: Config, article: Article, choose: SlugChoice,
                 repairs: list[str]) -> ArticleView:
    """The view of *article*; its repairs are added to *repairs*."""
    what = f"article {article.id}"
    body = article_body(article)
    repairs += body.repairs
    title = _text(article.title)
    if not title:
        title = _text(article.slug) or "Untitled"
        repairs.append(f"{what} has no title; using {title!r}")
    published = article.createdAt or article.updatedAt
    if published is None:
        repairs.append(f"{what} has no creation date; using 1970-01-01")
        published = EPOCH
    updated = max(article.updatedAt or published, published)
    language, repair = _language(article.language, config.site.language, what)

    urls: dict[str, str] = {}  # (the slug's URL: asked by *choose*, then here)

    def url_of(slug: str) -> str:
        url = urls.get(slug)
        if url is None:
            url = urls[slug] = expand_permalink(config.site.permalink, slug, published,
                                                language, article.id)
        return url

    wanted, made = wanted_slug(article.slug, article.title, article.id, what)
    slug, allocated = choose(wanted, what, url_of)
    repairs += made + allocated
    if repair:
        repairs.append(repair)
    url = url_of(slug)
    meta = article.meta
    description = _text(article.description) or _text(meta.description if meta else None)
    keywords = [k.strip() for k in (meta.keywords or "").split(",")] if meta else []
    return ArticleView(
        id=article.id, slug=slug, url=url, path=url_to_path(url), title=title,
        description=description, language=language, tags=[],
        keywords=[k for k in keywords if k][:20], published=published, updated=updated,
        reading_minutes=body.reading_minutes, body_kind=body.kind, blocks=body.blocks,
        content=body.content, body_hash=titled_hash(body, title), image=body.image,
        image_alt=body.image_alt, model=_text(article.model),
    )


def _move_languages(languages: dict[str, LanguageView], claims: Claims,
                    warn: Callable[[str], None]) -> None:
    """Move each language whose URL the owner's files hold to a free slug no language has."""
    if not claims or len(languages) < 2:  # (one language: no language pages)
        return
    allocator = SlugAllocator(view.slug for view in languages.values())
    for code, view in sorted(languages.items()):
        slug, warning = give_way(claims, view.slug, partial(_kind_url, "language"),
                                 partial(allocator.allocate, view.slug), f"language {code!r}",
                                 section=True)
        if warning:
            warn(warning)
            view.slug, view.url = slug, _kind_url("language", slug)


def _cluster(record: Record, slug: str, warn: Callable[[str], None]) -> ClusterView:
    assert isinstance(record, Cluster)
    if record.color is not None and not is_safe_colour(record.color):
        warn(f"cluster {record.id} has an invalid colour {record.color[:40]!r}; using a "
             "neutral grey")
    return ClusterView(
        id=record.id, name=_text(record.name) or slug, slug=slug,
        url=kind_of("cluster").url_for(slug=slug),
        description=_text(record.description), colour=safe_colour(record.color, DEFAULT_COLOUR),
    )


def _draft_views(config: Config, drafts: Sequence[Article], published: set[str],
                 agents: dict[str, AgentView], clusters: dict[str, ClusterView],
                 authors: dict[str, AuthorView], tags: dict[str, TagView]) -> list[ArticleView]:
    """The views of `serve --drafts`' draft articles, newest update first: each at
    `/drafts/<slug>/` (slugs unique among the drafts), linked to the agent, topic, author and
    tags only where the published site has their page, and in none of their listings."""
    allocator = SlugAllocator()
    drafted = kind_of("draft")

    def choose(wanted: str, what: str, url_of: Callable[[str], str]) -> tuple[str, list[str]]:
        return allocate_slug(wanted, allocator, what)

    seen: set[str] = set()
    records = sorted((a for a in drafts if a.id not in published and not is_empty(a)),
                     key=lambda a: (a.createdAt or a.updatedAt or EPOCH, a.id))
    views: list[ArticleView] = []
    for record in records:
        if record.id in seen:
            continue
        seen.add(record.id)
        made: list[str] = []
        view = article_view(config, record, choose, made)
        for repair in made:
            log.warning("draft %s", repair)
        view.url = drafted.url_for(slug=view.slug)
        view.path = url_to_path(view.url)
        view.agent = agents.get(record.agentId or "")
        view.cluster = clusters.get(record.clusterId or "")
        view.author = authors.get(record.authorIdentityId or "")
        if not view.model and view.agent is not None:
            view.model = view.agent.model
        for raw in tag_names(record):
            tag = tags.get(tag_name(raw, lambda message: None)[1])
            if tag is not None and all(ref.slug != tag.slug for ref in view.tags):
                view.tags.append(TagRef(tag.name, tag.slug, tag.url))
        views.append(view)
    views.sort(key=lambda v: (v.updated, v.id), reverse=True)
    return views


def _published(articles: Iterable[Article]) -> tuple[list[Article], set[str]]:
    """The published articles with a title or body, the first of each id, oldest first (for
    slug allocation: an older article keeps its slug); and their ids."""
    records: list[Article] = []
    seen_ids: set[str] = set()
    for article in articles:
        if not is_published(article):
            continue
        if article.id in seen_ids:
            log.warning("article %s appears twice; the first record was kept", article.id)
            continue
        if is_empty(article):
            log.warning("article %s has neither title nor body; it was skipped", article.id)
            continue
        seen_ids.add(article.id)
        records.append(article)
    records.sort(key=lambda a: (a.createdAt or a.updatedAt or EPOCH, a.id))
    return records, seen_ids


def _article_views(config: Config, records: Sequence[Article], claims: Claims
                   ) -> list[tuple[Article, ArticleView]]:
    """Each record (oldest first) with its view, newest first (createdAt, then id,
    descending); a slug the owner's files hold (*claims*) moves."""
    allocator = SlugAllocator(reserved())

    def choose(wanted: str, what: str, url_of: Callable[[str], str]) -> tuple[str, list[str]]:
        slug, repairs = allocate_slug(wanted, allocator, what)
        slug, moved = give_way(claims, slug, url_of, lambda: allocator.allocate(wanted), what)
        return slug, repairs + ([moved] if moved else [])

    pairs: list[tuple[Article, ArticleView]] = []
    for record in records:
        made: list[str] = []
        view = article_view(config, record, choose, made)
        for repair in made:
            log.warning("%s", repair)
        pairs.append((record, view))
    pairs.reverse()
    return pairs


def _agent(default_language: str, record: Record, slug: str) -> AgentView:
    return AgentView(
        id=str(getattr(record, "id", "")), name=_text(getattr(record, "name", None)) or slug,
        slug=slug, url=kind_of("agent").url_for(slug=slug),
        description=_text(getattr(record, "description", None)),
        model=_text(getattr(record, "model", None)),
        language=_language(getattr(record, "language", None), default_language, "")[0],
    )


def _author(default_language: str, record: Record, slug: str) -> AuthorView:
    return AuthorView(
        id=str(getattr(record, "id", "")), name=_text(getattr(record, "name", None)) or slug,
        slug=slug, url=kind_of("author").url_for(slug=slug),
        bio=(getattr(record, "bio", None) or "").strip(),
        image=safe_http_url(getattr(record, "imageUrl", None)) or "",
        language=_language(getattr(record, "language", None), default_language, "")[0],
    )


def _attach_sections(pairs: Iterable[tuple[Article, ArticleView]],
                     agents: dict[str, AgentView], clusters: dict[str, ClusterView],
                     authors: dict[str, AuthorView]) -> dict[str, LanguageView]:
    """Link each article and its agent, cluster and author both ways; the languages, each
    with its articles (in *pairs*' order)."""
    languages: dict[str, LanguageView] = {}
    for record, view in pairs:
        view.agent = agents.get(record.agentId or "")
        view.cluster = clusters.get(record.clusterId or "")
        view.author = authors.get(record.authorIdentityId or "")
        if not view.model and view.agent is not None:
            view.model = view.agent.model
        for section in (view.agent, view.cluster, view.author):
            if section is not None:
                section.articles.append(view)
        code = view.language
        if code not in languages:
            slug = device_safe(slugify(code) or "und", "lang")
            languages[code] = LanguageView(id=code, name=native_name(code), slug=slug,
                                           url=kind_of("language").url_for(slug=slug))
        languages[code].articles.append(view)
    return languages


def _shown(sections: dict[str, S]) -> list[S]:
    """The sections with an article (the others have no page), in *sections*' order."""
    return [section for section in sections.values() if section.articles]


def _search_urls(site: Site) -> dict[str, str]:
    """Each other language's search page, with `[search]` on (else none)."""
    if site.search_url is None:
        return {}
    return {language.id: f"{language.url}search/" for language in site.languages
            if language.id != site.language}


def build_site(config: Config, workspace: Workspace,
               own: Sequence[PageSource] = (), drafts: Sequence[Article] | None = None,
               claimed: Iterable[str] = ()) -> Site:
    """The Site graph for *workspace* under *config* and the owner's pages *own*: pure,
    deterministic, repairs logged. *drafts* (`serve --drafts` only) are laid out at
    `/drafts/<slug>/` and nowhere else (None: not a drafts preview). *claimed* holds the
    output paths of the owner's `static/` files: like the owner's pages, they keep their
    paths, and a page the service names (article, tag, agent…) moves off them."""
    own_pages = own_page_views(own)
    records, seen_ids = _published(workspace.articles)
    # One URL, two pages: the owner's page or file keeps it, the service's article moves.
    claims = Claims({page.path: page.source for page in own_pages}, claimed)
    pairs = _article_views(config, records, claims)
    articles = [view for _, view in pairs]

    def late(message: str) -> None:
        log.warning("%s", message)

    agents = _sections(workspace.agents, partial(_agent, config.site.language),
                       lambda r: getattr(r, "name", None), "agent", late, "agent", claims)
    clusters = _sections(workspace.clusters or [], lambda r, s: _cluster(r, s, late),
                         lambda r: getattr(r, "name", None), "cluster", late, "cluster",
                         claims)
    authors = _sections(workspace.authors or [], partial(_author, config.site.language),
                        lambda r: getattr(r, "name", None), "author identity", late, "author",
                        claims)
    tags = attach_tags(pairs, late, claims)
    languages = _attach_sections(pairs, agents, clusters, authors)

    link_neighbours(articles)
    link_related(articles)
    _move_languages(languages, claims, late)
    social = social_views(workspace.social_posts or [], articles, config.site.base_url,
                          config.social.language or "", claims, late)
    site = Site(
        config=config, title=config.site.title, description=config.site.description,
        base_url=config.site.base_url, language=config.site.language, articles=articles,
        agents=_shown(agents), clusters=_shown(clusters), authors=_shown(authors),
        tags=sorted(_shown(tags), key=lambda t: t.slug),
        languages=sorted(languages.values(), key=lambda lang: lang.id)
        if len(languages) > 1 else [],
        social_posts=social, ai_disclosure=config.site.ai_disclosure,
        own_pages=own_pages, menu=menu_of(own_pages),
        search_url=kind_of("search").url if config.search.enabled and articles else None,
    )
    if drafts is not None:
        site.drafts = _draft_views(
            config, drafts, seen_ids, {a.id: a for a in site.agents},
            {c.id: c for c in site.clusters}, {a.id: a for a in site.authors},
            {t.slug: t for t in site.tags})
    site.search_urls = _search_urls(site)
    site.pages = layout_pages(site)
    site.files = layout_files(site)
    return site
