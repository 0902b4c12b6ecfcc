"""Page layout: the pages of each page kind — their URLs, titles, pagination and dates.

Role: one function per page kind (`sitegen.model.kinds` declares each kind once and names
its function here): from a linked Site graph, the kind's `Page`s — home (paginated), one
per article, per agent, cluster, author, tag, language (only when several), an index of
each kind of section that has any, the social section with a page per post, the search
pages (one per language), the owner's pages, the drafts of `serve --drafts` and their list,
the 404 page; and the site files drawn by
templates: the feeds (the site's, and one per section of a kind that has feeds), the
sitemap (an index past `MAX_URLS`) and robots.txt. Each page's `updated` is the newest
update of what it shows (a sitemap's `lastmod`). URLs come from slugs that
`slugs.slugify` made, so no path leaves the output. Must never do I/O, log, or render.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TypeVar, cast

from sitegen.model.own import own_layout
from sitegen.model.registry import Kind, feed_kinds, indexed_kinds, kind_of
from sitegen.model.slugs import url_to_path
from sitegen.model.views import ArticleView, Page, Section, SectionIndex, Site, SocialPostView

T = TypeVar("T")
#: URLs per sitemap file (the sitemap protocol's limit); past it, sitemap.xml is an index.
MAX_URLS = 50_000


def page_url(base: str, number: int) -> str:
    """URL of page *number* of a listing whose first page is *base* ("/x/" → "/x/page/2/")."""
    return base if number <= 1 else f"{base}page/{number}/"


def _chunks(items: Sequence[T], size: int) -> list[Sequence[T]]:
    if not items:
        return [items]
    return [items[i:i + size] for i in range(0, len(items), size)]


def newest(articles: Sequence[ArticleView]) -> datetime | None:
    """The newest `updated` of *articles* (None for none)."""
    return max(a.updated for a in articles) if articles else None


def paginated(site: Site, kind: Kind, base: str, title: str, obj: object | None,
               feed_url: str | None, language: str, articles: Sequence[ArticleView] = (),
               posts: Sequence[SocialPostView] = ()) -> list[Page]:
    """The pages of a listing at *base* of *articles* (or *posts*), `per_page` to a page:
    "/x/", "/x/page/2/", …, each titled *title* ("(page N)" after the first), dated by the
    newest update it shows. Any kind's layout function may lay out its listings with it."""
    per_page = site.config.site.per_page
    chunks: list[Sequence[object]] = _chunks(posts or articles, per_page)
    total = len(chunks)
    pages: list[Page] = []
    for number, chunk in enumerate(chunks, start=1):
        url = page_url(base, number)
        shown = [] if posts else cast("list[ArticleView]", list(chunk))
        pages.append(Page(
            kind=kind.name, path=url_to_path(url), url=url, template=kind.template,
            title=title if number == 1 else f"{title} (page {number})", obj=obj,
            articles=shown, number=number, total=total,
            prev_url=page_url(base, number - 1) if number > 1 else None,
            next_url=page_url(base, number + 1) if number < total else None,
            feed_url=feed_url, language=language,
            social_posts=cast("list[SocialPostView]", list(chunk) if posts else []),
            updated=newest(shown) if not posts else max(
                (p.updated for p in cast("list[SocialPostView]", chunk) if p.updated),
                default=None)))
    return pages


def home(kind: Kind, site: Site, laid: Sequence[Page]) -> list[Page]:
    """The home listing of every article."""
    return paginated(site, kind, "/", site.title, None, site.feed_url, site.language,
                      site.articles)


def articles(kind: Kind, site: Site, laid: Sequence[Page]) -> list[Page]:
    """One page per article."""
    return [Page(kind=kind.name, path=a.path, url=a.url, template=kind.template, title=a.title,
                 obj=a, language=a.language, feed_url=site.feed_url, updated=a.updated)
            for a in site.articles]


def sections(kind: Kind, site: Site, laid: Sequence[Page]) -> list[Page]:
    """The listing of each section of the kind (its `members`), with the section's feed
    when the kind has feeds (else the site's)."""
    pages: list[Page] = []
    for section in kind.members(site):
        title = f"#{section.name}" if kind.name == "tag" else section.name
        language = section.id if kind.name == "language" else site.language
        feed = section.feed_url if kind.feed_link else site.feed_url
        pages += paginated(site, kind, section.url, title, section, feed, language,
                            section.articles)
    return pages


def section_indexes(site: Site) -> list[SectionIndex]:
    """The index of each kind of section the site has (none for a kind with no section)."""
    return [SectionIndex(kind=k.name, name=k.index_title, url=k.index_url,
                         sections=list(k.members(site)))
            for k in indexed_kinds() if k.members(site)]


def indexes(kind: Kind, site: Site, laid: Sequence[Page]) -> list[Page]:
    """The index page of each kind of section the site has, dated by the newest article of
    its sections (the sitemap's `lastmod`)."""
    return [Page(kind=kind.name, path=url_to_path(i.url), url=i.url, template=kind.template,
                 title=i.name, obj=i, language=site.language, feed_url=site.feed_url,
                 updated=newest([a for section in i.sections for a in section.articles]))
            for i in section_indexes(site)]


def social(kind: Kind, site: Site, laid: Sequence[Page]) -> list[Page]:
    """The social section's listing (when any posts)."""
    if not site.social_posts:
        return []
    return paginated(site, kind, kind.url, "Social posts", None, None, site.language,
                      posts=site.social_posts)


def social_posts(kind: Kind, site: Site, laid: Sequence[Page]) -> list[Page]:
    """One page per social post."""
    return [Page(kind=kind.name, path=post.path, url=post.url, template=kind.template,
                 title=post.title, obj=post, language=post.language or site.language,
                 feed_url=site.feed_url, updated=post.updated) for post in site.social_posts]


def drafts(kind: Kind, site: Site, laid: Sequence[Page]) -> list[Page]:
    """One page per draft article (`serve --drafts` only), at `/drafts/<slug>/`."""
    return [Page(kind=kind.name, path=a.path, url=a.url, template=kind.template, title=a.title,
                 obj=a, language=a.language, feed_url=site.feed_url, updated=a.updated)
            for a in site.drafts or ()]


def drafts_index(kind: Kind, site: Site, laid: Sequence[Page]) -> list[Page]:
    """The list of the drafts (`serve --drafts` only, even with none)."""
    if site.drafts is None:
        return []
    return [Page(kind=kind.name, path=url_to_path(kind.url), url=kind.url,
                 template=kind.template, title="Drafts", articles=list(site.drafts),
                 language=site.language, feed_url=site.feed_url, updated=newest(site.drafts))]


def search(kind: Kind, site: Site, laid: Sequence[Page]) -> list[Page]:
    """The search page of each language (`[search] enabled`)."""
    if site.search_url is None:
        return []
    found = [(site.search_url, site.language), *((url, code) for code, url in
                                                 sorted(site.search_urls.items()))]
    return [Page(kind=kind.name, path=url_to_path(url), url=url, template=kind.template,
                 title="Search", language=code, feed_url=site.feed_url) for url, code in found]


def own(kind: Kind, site: Site, laid: Sequence[Page]) -> list[Page]:
    """The owner's pages (one on a page laid out before is an error naming both)."""
    return own_layout(site.own_pages, laid, site.language)


def not_found(kind: Kind, site: Site, laid: Sequence[Page]) -> list[Page]:
    """The 404 page."""
    return [Page(kind=kind.name, path=kind.url.lstrip("/"), url=kind.url,
                 template=kind.template, title="Page not found", language=site.language,
                 feed_url=site.feed_url)]


def feeds(kind: Kind, site: Site, laid: Sequence[Page]) -> list[Page]:
    """The site's feed (its newest `feed_size` articles), and one per section of each kind
    that has feeds."""
    size = site.config.site.feed_size
    found = [_feed(kind, site, site.feed_url, site.title, site.description, None,
                   site.articles[:size])]
    for section_kind in feed_kinds():
        for section in section_kind.members(site):
            found.append(_feed(
                kind, site, section.feed_url, f"{site.title}: {section.name}",
                section.description or f"Articles of the {section_kind.name} {section.name}",
                section, section.articles[:size]))
    return found


def _feed(kind: Kind, site: Site, url: str, title: str, description: str,
          section: Section | None, shown: Sequence[ArticleView]) -> Page:
    dates = [d for a in shown for d in (a.updated, a.published)]
    return Page(kind=kind.name, path=url.lstrip("/"), url=url, template=kind.template,
                title=title, description=description, obj=section, articles=list(shown),
                feed_url=url, language=site.language, updated=max(dates) if dates else None)


def sitemaps(kind: Kind, site: Site, laid: Sequence[Page]) -> list[Page]:
    """sitemap.xml listing every page of a kind listed in sitemaps, sorted by URL; past
    `MAX_URLS`, sitemap-1.xml, … and sitemap.xml their index (kind `sitemap_index`)."""
    unique = {p.url: p for p in site.pages if kind_of(p.kind).sitemap}
    listed = [unique[url] for url in sorted(unique)]
    if len(listed) <= MAX_URLS:
        return [Page(kind=kind.name, path=kind.url.lstrip("/"), url=kind.url,
                     template=kind.template, title="Sitemap", listed=listed,
                     language=site.language)]
    parts = [listed[i:i + MAX_URLS] for i in range(0, len(listed), MAX_URLS)]
    files = [Page(kind=kind.name, path=f"sitemap-{n}.xml", url=f"/sitemap-{n}.xml",
                  template=kind.template, title="Sitemap", listed=part, language=site.language,
                  updated=max((p.updated for p in part if p.updated), default=None))
             for n, part in enumerate(parts, start=1)]
    index = kind_of("sitemap_index")
    return [Page(kind=index.name, path=kind.url.lstrip("/"), url=kind.url,
                 template=index.template, title="Sitemap", listed=files,
                 language=site.language), *files]


def robots(kind: Kind, site: Site, laid: Sequence[Page]) -> list[Page]:
    """robots.txt."""
    return [Page(kind=kind.name, path=kind.url.lstrip("/"), url=kind.url,
                 template=kind.template, title="robots.txt", language=site.language)]


def nothing(kind: Kind, site: Site, laid: Sequence[Page]) -> list[Page]:
    """No pages of its own (a kind laid out by another's function)."""
    return []
