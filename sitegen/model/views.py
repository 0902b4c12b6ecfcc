"""The site graph's nouns: what a theme template can see of the content.

Role: plain dataclasses built by `sitegen.model.site.build_site` from a
`Workspace`. Every string in here is still *untrusted text* (titles, bios,
captions...) that the templates escape; URLs and colours, however, have been
checked (`url`, `image` and `colour` fields are safe to put in attributes).
This module must never do I/O, log, or hold HTML.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from sitegen.config import Config
from sitegen.fetch.records import KnownBlock
from sitegen.model.body import BodyFacts

if TYPE_CHECKING:
    from sitegen.model.related import RelatedMemo

PageKind = Literal[
    "home", "article", "agent", "cluster", "author", "tag", "language", "social", "terms",
    "404",
]


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
    """An agent with at least one published article."""

    model: str = ""


@dataclass(eq=False, slots=True)
class ClusterView(Section):
    """A topic hub; `colour` is a validated `#rgb`/`#rrggbb` hex colour."""

    colour: str = "#6b7280"


@dataclass(eq=False, slots=True)
class AuthorView(Section):
    """An author identity (voice persona); `image` is a safe URL or empty."""

    bio: str = ""
    image: str = ""


@dataclass(eq=False, slots=True)
class TagView(Section):
    """A tag with its articles (`id` is the slug)."""


@dataclass(eq=False, slots=True)
class LanguageView(Section):
    """A language section (`id` and `name` are the language code)."""


@dataclass(eq=False, slots=True)
class SectionIndex:
    """The index of one kind of section (`/topics/`, `/tags/`, `/authors/`, `/agents/`).

    `kind` is the sections' page kind ("cluster", "tag", "author", "agent"); `sections`
    are in the site's order, each with its `articles` (so templates can count them).
    """

    kind: Literal["agent", "cluster", "author", "tag"]
    name: str
    url: str
    sections: list[Section]


@dataclass(eq=False, slots=True)
class SocialPostView:
    """A short-form social post, listed in the social section."""

    id: str
    title: str
    slug: str
    content: str
    image: str
    published: datetime | None


@dataclass(eq=False, slots=True)
class ArticleView:
    """A published article, with everything a template shows about it.

    `blocks` holds the known, URL-checked blocks when the article renders from
    blocks (`body_kind == "blocks"`); otherwise `content` is its markdown (kept in
    `content_source`, which a graph from the model memo fills with a reader).
    `body_hash` identifies the body source (render caches key on it);
    `card_digest` and `digest` hash what a list card and the full page show.
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
    blocks: list[KnownBlock]
    #: The markdown, or (a graph from the model memo) what reads it when first asked for.
    content_source: str | Callable[[], str] = field(repr=False)
    body_hash: str
    image: str
    # The links of the site graph stay out of repr (else one article prints the whole site).
    agent: AgentView | None = field(default=None, repr=False)
    cluster: ClusterView | None = field(default=None, repr=False)
    author: AuthorView | None = field(default=None, repr=False)
    related: list[ArticleView] = field(default_factory=list, repr=False)
    newer: ArticleView | None = field(default=None, repr=False)
    older: ArticleView | None = field(default=None, repr=False)
    card_digest: str = ""
    digest: str = ""

    @property
    def content(self) -> str:
        """The article's markdown (the body of a markdown article)."""
        source = self.content_source
        if isinstance(source, str):
            return source
        text = self.content_source = source()
        return text

    @property
    def authors(self) -> list[AuthorView]:
        """Author refs as a list (empty or one author identity)."""
        return [self.author] if self.author is not None else []


@dataclass(eq=False, slots=True)
class Page:
    """One output HTML file: what it is about, where it goes, which template draws it.

    `path` is POSIX and relative to the output root ("my-post/index.html",
    "page/2/index.html", "404.html"); `url` is root-relative ("/my-post/").
    `input_digest` hashes every content input of the page (incremental builds).
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
    input_digest: str = ""
    social_posts: list[SocialPostView] = field(default_factory=list)

    @property
    def article(self) -> ArticleView | None:
        """The article of an article page, else None."""
        return self.obj if isinstance(self.obj, ArticleView) else None


@dataclass(frozen=True, slots=True)
class ArticlePlace:
    """What fixes an article's place in the graph, beside its date, language and slug.

    `wanted` is the slug the article asked for before allocation; `tags` its raw tag
    names; `agent`, `cluster` and `author` the ids it names ("" for none).
    """

    wanted: str
    tags: tuple[str, ...]
    agent: str
    cluster: str
    author: str


@dataclass(eq=False, slots=True)
class ModelRepairs:
    """The repair sentences a model logged: the filter's, each article's, the sections'.

    A full build logs them in this order, the articles' oldest first.
    """

    #: (article id, sentence): the records the filter left out, in the workspace's order.
    early: list[tuple[str, str]] = field(default_factory=list)
    articles: dict[str, list[str]] = field(default_factory=dict)
    late: list[str] = field(default_factory=list)

    def in_order(self, articles_newest_first: list[ArticleView]) -> list[str]:
        """Every sentence, in the order a full build logs them."""
        found = self.articles
        return [*(m for _, m in self.early),
                *(m for a in reversed(articles_newest_first) for m in found.get(a.id, ())),
                *self.late]


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
    nav_digest: str = ""
    feed_url: str = "/feed.xml"
    #: What the model derived from each article's body, for the next build (by id).
    body_facts: dict[str, BodyFacts] = field(default_factory=dict)
    #: The related links chosen, for the next build (see `sitegen.model.related`).
    related_memo: RelatedMemo | None = None
    #: What fixes each article's place, by id (see `sitegen.model.patch`).
    places: dict[str, ArticlePlace] = field(default_factory=dict)
    #: The repairs the model logged, grouped so a patch can log them again in order.
    repairs: ModelRepairs = field(default_factory=lambda: ModelRepairs())

    def absolute(self, url: str) -> str:
        """`base_url` + a root-relative URL (absolute URLs pass through)."""
        if url.startswith(("http://", "https://")):
            return url
        return self.base_url + (url if url.startswith("/") else "/" + url)
