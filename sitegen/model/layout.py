"""Page layout: which HTML files the site has, their URLs, templates and pagination.

Role: from a linked Site graph, list every `Page` — home (paginated), one per
article, per agent, cluster, author, tag, language (only when several), an
index of each kind of section that has any (`/agents/`, `/topics/`, `/authors/`,
`/tags/`), the social section (when any posts) with a page per post, the search pages
(`[search]`: one per language) and the 404 page — in a deterministic order. URLs come from
slugs that `slugs.slugify` made, so no path leaves the output. Must never do I/O, log, or render.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, TypeVar

from sitegen.model.slugs import url_to_path
from sitegen.model.views import (
    ArticleView,
    Page,
    PageKind,
    Section,
    SectionIndex,
    Site,
    SocialPostView,
)

T = TypeVar("T")


def page_url(base: str, number: int) -> str:
    """URL of page *number* of a listing whose first page is *base* ("/x/" → "/x/page/2/")."""
    return base if number <= 1 else f"{base}page/{number}/"


def _chunks(items: Sequence[T], size: int) -> list[Sequence[T]]:
    if not items:
        return [items]
    return [items[i:i + size] for i in range(0, len(items), size)]


def _listing(
    site: Site, kind: PageKind, base: str, title: str, obj: Section | None,
    articles: Sequence[ArticleView], feed_url: str | None, language: str) -> list[Page]:
    per_page = site.config.site.per_page
    chunks = _chunks(articles, per_page)
    total = len(chunks)
    pages: list[Page] = []
    for number, chunk in enumerate(chunks, start=1):
        url = page_url(base, number)
        page = Page(
            kind=kind, path=url_to_path(url), url=url, template=f"{kind}.html",
            title=title if number == 1 else f"{title} (page {number})", obj=obj,
            articles=list(chunk), number=number, total=total,
            prev_url=page_url(base, number - 1) if number > 1 else None,
            next_url=page_url(base, number + 1) if number < total else None,
            feed_url=feed_url, language=language,
        )
        pages.append(page)
    return pages


def _social(site: Site) -> list[Page]:
    per_page = site.config.site.per_page
    chunks: list[Sequence[SocialPostView]] = _chunks(site.social_posts, per_page)
    pages: list[Page] = []
    for number, chunk in enumerate(chunks, start=1):
        url = page_url("/social/", number)
        page = Page(
            kind="social", path=url_to_path(url), url=url, template="social.html",
            title="Social posts" if number == 1 else f"Social posts (page {number})",
            number=number, total=len(chunks),
            prev_url=page_url("/social/", number - 1) if number > 1 else None,
            next_url=page_url("/social/", number + 1) if number < len(chunks) else None,
            language=site.language, social_posts=list(chunk),
        )
        pages.append(page)
    return pages


#: The section indexes: (kind, URL, title), in page order.
INDEXES: tuple[tuple[Literal["agent", "cluster", "author", "tag"], str, str], ...] = (
    ("agent", "/agents/", "Agents"), ("cluster", "/topics/", "Topics"),
    ("author", "/authors/", "Authors"), ("tag", "/tags/", "Tags"))


def section_indexes(site: Site) -> list[SectionIndex]:
    """The index of each kind of section the site has (none for a kind with no section)."""
    members: dict[str, Sequence[Section]] = {
        "agent": site.agents, "cluster": site.clusters, "author": site.authors,
        "tag": site.tags}
    return [SectionIndex(kind=kind, name=title, url=url, sections=list(members[kind]))
            for kind, url, title in INDEXES if members[kind]]


def _index_page(site: Site, index: SectionIndex) -> Page:
    page = Page(kind="terms", path=url_to_path(index.url), url=index.url,
                template="terms.html", title=index.name, obj=index, language=site.language,
                feed_url=site.feed_url)
    return page


def layout_pages(site: Site) -> list[Page]:
    """Every page of *site*, in a deterministic order (home, articles, sections, 404)."""
    lang = site.language
    pages = _listing(site, "home", "/", site.title, None, site.articles, site.feed_url, lang)
    for article in site.articles:
        page = Page(
            kind="article", path=article.path, url=article.url, template="article.html",
            title=article.title, obj=article, language=article.language,
            feed_url=site.feed_url,
        )
        pages.append(page)
    for agent in site.agents:
        pages += _listing(site, "agent", agent.url, agent.name, agent, agent.articles,
                          agent.feed_url, lang)
    for cluster in site.clusters:
        pages += _listing(site, "cluster", cluster.url, cluster.name, cluster, cluster.articles,
                          cluster.feed_url, lang)
    for author in site.authors:
        pages += _listing(site, "author", author.url, author.name, author, author.articles,
                          site.feed_url, lang)
    for tag in site.tags:
        pages += _listing(site, "tag", tag.url, f"#{tag.name}", tag, tag.articles,
                          tag.feed_url, lang)
    for language in site.languages:
        pages += _listing(site, "language", language.url, language.name, language,
                          language.articles, site.feed_url, language.id)
    pages += [_index_page(site, index) for index in section_indexes(site)]
    if site.social_posts:
        pages += _social(site)
        pages += [Page(kind="social_post", path=post.path, url=post.url,
                       template="social_post.html", title=post.title, obj=post,
                       language=site.language, feed_url=site.feed_url)
                  for post in site.social_posts]
    if site.search_url is not None:
        searches = [(site.search_url, lang), *((url, code) for code, url in
                                                 sorted(site.search_urls.items()))]
        pages += [Page(kind="search", path=url_to_path(url), url=url, template="search.html",
                       title="Search", language=code, feed_url=site.feed_url)
                  for url, code in searches]
    not_found = Page(kind="404", path="404.html", url="/404.html", template="404.html",
                     title="Page not found", language=lang, feed_url=site.feed_url)
    pages.append(not_found)
    return pages
