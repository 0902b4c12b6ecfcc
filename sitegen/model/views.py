"""The site graph's nouns: what a theme template can see of the content.

Role: plain dataclasses built by `sitegen.model.site.build_site` from a
`Workspace`. Every string in here is still *untrusted text* (titles, bios,
captions...) that the templates escape; URLs and colours, however, have been
checked (`url`, `image` and `colour` fields are safe to put in attributes).
This module must never do I/O, log, or hold HTML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from sitegen.blocktypes import BlockRecord
from sitegen.config import Config

#: A page kind's name: one of the page kinds registry's (`sitegen.model.kinds`).
PageKind = str


@dataclass(eq=False, slots=True, frozen=True)
class TagRef:
    """A tag as shown on an article: its display name, slug and listing URL.

    (Frozen: the articles of a tag share one.)
    """

    name: str
    slug: str
    url: str


@dataclass(eq=False, slots=True)
class Section:
    """Common shape of every listing section (agent, cluster, author, tag, language)."""

    id: str
    name: str
    slug: str
    url: str
    description: str = ""
    articles: list[ArticleView] = field(default_factory=list, repr=False)

    @property
    def feed_url(self) -> str:
        """The section's own Atom feed (`<url>feed.xml`), written by the emit stage."""
        return self.url + "feed.xml"


@dataclass(eq=False, slots=True)
class AgentView(Section):
    """An agent with at least one published article; `language` is the one it writes in
    (its record's, else the site's): its description's."""

    model: str = ""
    language: str = ""


@dataclass(eq=False, slots=True)
class ClusterView(Section):
    """A topic hub; `colour` is a validated `#rgb`/`#rrggbb` hex colour."""

    colour: str = "#6b7280"


@dataclass(eq=False, slots=True)
class AuthorView(Section):
    """An author identity (an AI voice persona); `image` is a safe URL or empty; `language`
    the one its bio is written in (its record's, else the site's default)."""

    bio: str = ""
    image: str = ""
    language: str = ""


@dataclass(eq=False, slots=True)
class TagView(Section):
    """A tag with its articles (`id` is the slug)."""


@dataclass(eq=False, slots=True)
class LanguageView(Section):
    """A language section: `id` is the language code, `name` the language's own name for
    itself, capitalised ("Français"; `sitegen.model.languages`)."""


@dataclass(eq=False, slots=True)
class SectionIndex:
    """The index of one kind of section (`/topics/`, `/tags/`, `/authors/`, `/agents/`).

    `kind` is the sections' page kind ("cluster", "tag", "author", "agent"); `sections`
    are in the site's order, each with its `articles` (so templates can count them).
    """

    kind: str
    name: str
    url: str
    sections: list[Section]


@dataclass(eq=False, slots=True)
class SocialPostView:
    """A short-form social post, listed in the social section and on its own page.

    `image` is the selected slot's image (safe URL or ""), `share_image` the one of the
    shape link previews want (landscape when there is one), `article` the published
    article it promotes (None when the record names none of the site's), `updated` its
    last change (the sitemap's `lastmod`; None when the record has no date).
    """

    id: str
    title: str
    slug: str
    content: str
    image: str
    published: datetime | None
    url: str = ""
    path: str = ""
    slot: str = ""
    share_image: str = ""
    article: ArticleView | None = field(default=None, repr=False)
    updated: datetime | None = None
    #: `image`'s text alternative when the promoted article shows the same image with one.
    image_alt: str = ""
    #: `share_image`'s, likewise.
    share_alt: str = ""
    #: The language its page is in (`lang`): the promoted article's, else `[social]
    #: language`; "" for the site's.
    language: str = ""


@dataclass(eq=False, slots=True)
class OwnPage:
    """One of the site owner's own pages (`pages/*.md`), rendered at `/<slug>/`.

    `content` is its Markdown (untrusted, rendered like an article's); `menu` its
    position in the navigation (None: not in it); `source` the file it came from;
    `updated` the date its front matter gives (None: none).
    """

    slug: str
    url: str
    path: str
    title: str
    description: str
    menu: int | None
    template: str
    content: str = field(repr=False)
    body_hash: str
    source: str
    #: When its content last changed (front matter `updated` or `date`): its sitemap
    #: `lastmod`; None when the file says not (a file's mtime is no content date).
    updated: datetime | None = None


@dataclass(eq=False, slots=True)
class ArticleView:
    """A published article, with everything a template shows about it.

    `blocks` holds the URL-checked blocks (unknown ones too) when the article renders from
    blocks (`body_kind == "blocks"`); otherwise `content` is its markdown.
    `body_hash` identifies the body source (render caches key on it).
    """

    id: str
    slug: str
    url: str
    path: str
    title: str
    description: str
    language: str
    tags: list[TagRef]
    keywords: list[str]
    published: datetime
    updated: datetime
    reading_minutes: int
    body_kind: Literal["blocks", "markdown"]
    blocks: list[BlockRecord]
    content: str = field(repr=False)
    body_hash: str
    image: str
    #: `image`'s text alternative (its alt, else its caption; "" when it has neither).
    image_alt: str = ""
    #: The model that wrote it (the record's, else its agent's; "" when neither says).
    model: str = ""
    # The links of the site graph stay out of repr (else one article prints the whole site).
    agent: AgentView | None = field(default=None, repr=False)
    cluster: ClusterView | None = field(default=None, repr=False)
    author: AuthorView | None = field(default=None, repr=False)
    related: list[ArticleView] = field(default_factory=list, repr=False)
    newer: ArticleView | None = field(default=None, repr=False)
    older: ArticleView | None = field(default=None, repr=False)

    @property
    def authors(self) -> list[AuthorView]:
        """Author refs as a list (empty or one author identity)."""
        return [self.author] if self.author is not None else []


@dataclass(eq=False, slots=True)
class Page:
    """One output file drawn by a template: what it is about, where it goes, which
    template draws it — an HTML page, or a site file (a feed, the sitemap, robots.txt).

    `path` is POSIX and relative to the output root ("my-post/index.html",
    "page/2/index.html", "404.html", "tags/x/feed.xml"); `url` is root-relative
    ("/my-post/"). `updated` is the newest update of what it shows (None: nothing dated),
    `listed` the pages a sitemap lists, `description` a site file's subtitle.
    """

    kind: PageKind
    path: str
    url: str
    template: str
    title: str
    obj: object | None = None
    articles: list[ArticleView] = field(default_factory=list)
    number: int = 1
    total: int = 1
    prev_url: str | None = None
    next_url: str | None = None
    feed_url: str | None = None
    language: str = ""
    social_posts: list[SocialPostView] = field(default_factory=list)
    updated: datetime | None = None
    listed: list[Page] = field(default_factory=list)
    description: str = ""

    @property
    def article(self) -> ArticleView | None:
        """The article of an article page, else None."""
        return self.obj if isinstance(self.obj, ArticleView) else None

    @property
    def own_page(self) -> OwnPage | None:
        """The owner's page of an own page, else None."""
        return self.obj if isinstance(self.obj, OwnPage) else None


@dataclass(eq=False, slots=True)
class Site:
    """The whole site graph: one consistent view every page is rendered from."""

    config: Config
    title: str
    description: str
    base_url: str
    language: str
    articles: list[ArticleView]
    agents: list[AgentView]
    clusters: list[ClusterView]
    authors: list[AuthorView]
    tags: list[TagView]
    languages: list[LanguageView]
    social_posts: list[SocialPostView]
    pages: list[Page] = field(default_factory=list)
    #: The site files drawn by templates, rendered like pages: feeds, sitemap, robots.txt.
    files: list[Page] = field(default_factory=list)
    feed_url: str = "/feed.xml"
    #: `[site] ai_disclosure`: article pages and feed entries say an AI agent wrote them.
    ai_disclosure: bool = True
    #: The owner's own pages (file order), and those in the navigation (menu order).
    own_pages: list[OwnPage] = field(default_factory=list)
    menu: list[OwnPage] = field(default_factory=list)
    #: The search page's URL (`[search] enabled`), or None: no search link, no page.
    search_url: str | None = None
    #: The search page of each other language of a site in several (`/lang/<slug>/search/`):
    #: Pagefind searches the index of the page's language.
    search_urls: dict[str, str] = field(default_factory=dict)
    #: The workspace's draft articles (`serve --drafts` only; newest update first): each at
    #: `/drafts/<slug>/`, in no listing, feed, sitemap or search index. None: not a drafts
    #: preview (no `/drafts/` page); an empty list: one with no drafts.
    drafts: list[ArticleView] | None = None

    def absolute(self, url: str) -> str:
        """`base_url` + a root-relative URL (absolute URLs pass through)."""
        if url.startswith(("http://", "https://")):
            return url
        return self.base_url + (url if url.startswith("/") else "/" + url)
