"""From the site graph to the site-wide files: feeds, sitemaps and robots.txt.

Role: decide *which* feeds exist (the site's newest articles at `feed.xml`, and
one per agent, cluster, author, tag and language at `<section url>feed.xml`),
what each holds (the newest `site.feed_size` articles, full sanitized HTML from
`Renderer.feed_html`: the theme's AI disclosure, then the body, with videos as links:
`emit.feedhtml`); every build renders them all, and the writer keeps the files whose
bytes did not change. Also lists the sitemap entries: every HTML page but 404.html and /search/,
dated from content. This module must never write files (the writer does) and never use
the wall clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from operator import attrgetter

from sitegen.emit.feed import FeedEntry, FeedInfo, render_atom
from sitegen.emit.feedhtml import feed_html
from sitegen.emit.sitemap import SitemapEntry
from sitegen.model.views import ArticleView, Section, Site


@dataclass(frozen=True, slots=True)
class FeedPlan:
    """One feed to write: its output path, what it is about, and its articles."""

    path: str
    title: str
    subtitle: str
    page_url: str
    feed_url: str
    articles: tuple[ArticleView, ...]


def newest(articles: Sequence[ArticleView], count: int) -> tuple[ArticleView, ...]:
    """The *count* most recently published of the site's or a section's *articles*.

    Those lists are newest first already (published, then id, descending: `build_site`
    makes them so, and the listing pages show them in that order).
    """
    return tuple(articles[:count])


def _feed_path(url: str) -> str:
    return url.lstrip("/")


def _sections(site: Site) -> Iterator[tuple[str, Section]]:
    for kind, sections in (("agent", site.agents), ("cluster", site.clusters),
                           ("author", site.authors), ("tag", site.tags),
                           ("language", site.languages)):
        for section in sections:
            yield kind, section


def plan_feeds(site: Site) -> list[FeedPlan]:
    """Every feed of the site."""
    size = site.config.site.feed_size
    plans = [_plan(site, "feed.xml", site.title, site.description, "/", site.feed_url,
                   newest(site.articles, size))]
    for kind, section in _sections(site):
        plans.append(_plan(
            site, _feed_path(section.feed_url), f"{site.title}: {section.name}",
            section.description or f"Articles of the {kind} {section.name}", section.url,
            section.feed_url, newest(section.articles, size),
        ))
    return plans


def _plan(site: Site, path: str, title: str, subtitle: str, page_url: str, feed_url: str,
          articles: tuple[ArticleView, ...]) -> FeedPlan:
    return FeedPlan(path, title, subtitle, page_url, feed_url, articles)


def render_feed(site: Site, plan: FeedPlan, article_html: Callable[[ArticleView], str]) -> bytes:
    """The Atom bytes of one planned feed."""
    entries = tuple(
        FeedEntry(
            article_id=article.id,
            url=site.absolute(article.url),
            title=article.title,
            updated=article.updated,
            published=article.published,
            author=_author(article),
            summary=article.description or None,
            content_html=feed_html(article_html(article), site.absolute(article.url)),
            categories=tuple(tag.name for tag in article.tags),
            language=article.language or None,
        )
        for article in plan.articles
    )
    info = FeedInfo(
        title=plan.title, subtitle=plan.subtitle, page_url=site.absolute(plan.page_url),
        feed_url=site.absolute(plan.feed_url), site_url=site.base_url + "/",
        language=site.language, author=site.title, entries=entries,
    )
    return render_atom(info)


def _author(article: ArticleView) -> str | None:
    if article.author is not None and article.author.name:
        return article.author.name
    if article.agent is not None and article.agent.name:
        return article.agent.name
    return None


def sitemap_entries(site: Site) -> list[SitemapEntry]:
    """Every HTML page but 404.html, with the newest updatedAt of what it shows.

    (One loop over every page of the site, in each build that writes the sitemap: the
    article page's date is its article's, a listing's the newest of its articles'.)
    """
    absolute = site.absolute
    base = site.base_url
    updated = attrgetter("updated")
    entries: list[SitemapEntry] = []
    add = entries.append
    for page in site.pages:
        if page.kind in ("404", "search") or not page.path.endswith(".html"):
            continue
        shown = page.obj
        if isinstance(shown, ArticleView):
            lastmod: datetime | None = shown.updated
        else:
            lastmod = max(map(updated, page.articles)) if page.articles else None
        url = page.url
        add(SitemapEntry(base + url if url[:1] == "/" else absolute(url), lastmod))
    return entries
