"""Every image the site shows, found in the site model, and where each is shown.

Role: walk a built `Site` for the image URLs its pages show (article images, image
blocks, markdown images of articles and own pages, author images, social post images; not
the root-relative images of own pages, which are files of the site), each as its templates
write it (after `safe_http_url`), with the first place that shows it (for warnings) and, per
body, the images its HTML holds (the body cache keys on them). A markdown body's image URLs
are given (`refs`, by body hash): the render's parse finds them (`FindImages`, handed down
by the build), and the store keeps them, so this module never parses. It must never do I/O
and never import the render.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from sitegen.fetch.records import ImageBlock
from sitegen.model.views import ArticleView, Site
from sitegen.urls import safe_http_url

Refs = Mapping[str, tuple[str, ...]]  #: a markdown body's image URLs, by body hash


class FindImages(Protocol):
    """The render's parse as the images stage uses it (`render.markdown.ImageFinder`)."""

    @property
    def key(self) -> str:
        """What decides the URLs found besides the source (the parser's code, version)."""
        ...

    def __call__(self, source: str) -> tuple[str, ...]:
        """The image URLs of a markdown source, as its rendered HTML writes them."""
        ...


@dataclass(slots=True)
class Found:
    """The images of one site: written URL → where it is first shown; body hash → URLs."""

    where: dict[str, str] = field(default_factory=dict)
    bodies: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def add(self, url: str, where: str) -> None:
        """Note *url* (as written) shown by *where* (the first place is kept)."""
        if url:
            self.where.setdefault(url, where)


def site_relative(url: str) -> bool:
    """Whether *url* is root-relative (`/logo.png`): in an own page, a file of the site."""
    return url.startswith("/") and not url.startswith("//")


def markdown_sources(site: Site, *, articles: bool = True) -> dict[str, str]:
    """The markdown bodies that may hold an image (`![` in them): body hash → source (the
    own pages' only, without *articles*)."""
    found = {p.body_hash: p.content for p in site.own_pages if "![" in p.content}
    if articles:
        found.update((a.body_hash, a.content) for a in [*site.articles, *(site.drafts or ())]
                     if a.body_kind == "markdown" and "![" in a.content)
    return found


def own_files(site: Site, refs: Refs) -> frozenset[str]:
    """The root-relative image URLs of the owner's own pages: files of the site (`static/`),
    never fetched, written as they are (the link check finds the ones missing)."""
    return frozenset(url for page in site.own_pages
                     for url in refs.get(page.body_hash, ()) if site_relative(url))


def collect(site: Site, refs: Refs) -> Found:
    """Every image *site* shows (see the module docstring)."""
    found = Found()
    for article in [*site.articles, *(site.drafts or ())]:  # (drafts: `serve --drafts`)
        where = f"article {article.title!r} ({article.id})"
        found.add(article.image, where)
        urls = found.bodies.setdefault(article.body_hash, _body_images(article, refs))
        for url in urls:
            found.add(url, where)
    for page in site.own_pages:
        urls = found.bodies.setdefault(page.body_hash, refs.get(page.body_hash, ()))
        for url in urls:
            if not site_relative(url):  # (a root-relative one is a file of the site)
                found.add(url, f"page {page.source}")
    for url, where in _people_and_posts(site):
        found.add(url, where)
    return found


def _body_images(article: ArticleView, refs: Refs) -> tuple[str, ...]:
    """The image URLs of an article's body: its image blocks', or its markdown's."""
    if article.body_kind != "blocks":
        return refs.get(article.body_hash, ())
    return tuple(dict.fromkeys(url for block in article.blocks if isinstance(block, ImageBlock)
                               for url in [safe_http_url(block.url)] if url))


def _people_and_posts(site: Site) -> Iterator[tuple[str, str]]:
    """The images of authors and social posts (their link previews' too), with where."""
    for author in site.authors:
        yield author.image, f"author {author.name!r}"
    for post in site.social_posts:
        yield post.image, f"social post {post.title!r}"
        yield post.share_image, f"social post {post.title!r}"
