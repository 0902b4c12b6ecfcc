"""The built-in page kinds, each declared once (see `sitegen.model.registry`).

Role: register the kinds every site has — home, articles, sections (agents, topics, authors,
tags, languages) and their indexes, social posts, the archive by month and its index, the
drafts of `serve --drafts`, search, the owner's pages, the 404 page and the site files
(feeds, sitemaps, robots.txt) — with their layout functions (`sitegen.model.layout`;
the archive's, with its views, `sitegen.model.archive`), in the order pages are laid
out. The registry's look-ups are re-exported here. Must never do I/O, log, or render.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sitegen.model.archive as archive
import sitegen.model.layout as layout
from sitegen.model.registry import (
    KINDS,
    Kind,
    feed_kinds,
    indexed_kinds,
    kind_of,
    layout_files,
    layout_pages,
    messages,
    register,
    reserved_segments,
    unregister,
    view_keys,
)
from sitegen.model.views import (
    AgentView,
    ArticleView,
    AuthorView,
    ClusterView,
    LanguageView,
    OwnPage,
    Section,
    SectionIndex,
    Site,
    SocialPostView,
    TagView,
)

__all__ = ["KINDS", "Kind", "feed_kinds", "indexed_kinds", "kind_of", "layout_files",
           "layout_pages", "messages", "register", "reserved_segments", "unregister",
           "view_keys"]


def _section(name: str, url: str, view: type, members: Callable[[Site], Sequence[Section]],
             *, index: tuple[str, str, str] = ("", "", ""), feed_link: bool = False,
             beacon: str = "unknown") -> Kind:
    return Kind(name, url, f"{name}.html", layout.sections, view=view, members=members,
                feeds=True, feed_link=feed_link, index_url=index[0], index_title=index[1],
                index_description=index[2], beacon=beacon)


for _kind in (
    Kind("home", "/", "home.html", layout.home, seo="Blog", beacon="workspace"),
    Kind("article", "", "article.html", layout.articles, view=ArticleView,
         seo="BlogPosting", og_type="article", beacon="article"),
    _section("agent", "/agents/{slug}/", AgentView, lambda s: s.agents,
             index=("/agents/", "Agents", "All agents of {site}"), feed_link=True, beacon="agent"),
    _section("cluster", "/topics/{slug}/", ClusterView, lambda s: s.clusters,
             index=("/topics/", "Topics", "All topics of {site}"), feed_link=True),
    _section("author", "/authors/{slug}/", AuthorView, lambda s: s.authors,
             index=("/authors/", "Authors", "All authors of {site}")),
    _section("tag", "/tags/{slug}/", TagView, lambda s: s.tags,
             index=("/tags/", "Tags", "All tags of {site}"), feed_link=True),
    _section("language", "/lang/{slug}/", LanguageView, lambda s: s.languages),
    Kind("terms", "", "terms.html", layout.indexes, view=SectionIndex, key="index",
         view_id="kind", interface_title=True),
    Kind("social", "/social/", "social.html", layout.social, interface_title=True),
    Kind("social_post", "/social/{slug}/", "social_post.html", layout.social_posts,
         view=SocialPostView, key="social", seo="SocialMediaPosting", og_type="article"),
    Kind("month", "/archive/{year}/{month}/", "archive.html", archive.month_pages,
         view=archive.MonthView, key="month", messages=archive.MESSAGES),
    Kind("archive", "/archive/", "archive.html", archive.archive_pages,
         view=archive.ArchiveView, key="archive", interface_title=True),
    # `serve --drafts` only: each draft marked (THEMES.md: `draft`), and their list.
    Kind("draft", "/drafts/{slug}/", "article.html", layout.drafts, view=ArticleView,
         seo="BlogPosting", og_type="article", robots="noindex,nofollow", sitemap=False,
         preview_only=True),
    Kind("drafts", "/drafts/", "drafts.html", layout.drafts_index, robots="noindex,nofollow",
         interface_title=True, sitemap=False, preview_only=True),
    Kind("search", "/search/", "search.html", layout.search, robots="noindex,follow",
         sitemap=False),
    Kind("own", "/{slug}/", "page.html", layout.own, view=OwnPage, view_id="slug",
         seo="WebPage"),
    Kind("404", "/404.html", "404.html", layout.not_found, seo="", robots="noindex",
         canonical=False, interface_title=True, sitemap=False),
    Kind("feed", "/feed.xml", "feed.xml", layout.feeds, sitemap=False, file=True),
    Kind("sitemap", "/sitemap.xml", "sitemap.xml", layout.sitemaps, sitemap=False, file=True),
    Kind("sitemap_index", "", "sitemap_index.xml", layout.nothing, sitemap=False, file=True),
    Kind("robots", "/robots.txt", "robots.txt", layout.robots, sitemap=False, file=True),
):
    register(_kind)
