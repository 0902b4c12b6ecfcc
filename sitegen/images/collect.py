"""Every image the site shows, found in the site model, and where each is shown.

Role: walk a built `Site` for the image URLs its pages show (article images, image
blocks, markdown images of articles and own pages, author images, social post images; not
the root-relative images of own pages, which are files of the site), each as its templates
write it (after `safe_http_url`), with the first place that shows
it (for warnings) and, per body, the images its HTML holds (the body cache keys on
them). It must never do I/O.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

from sitegen.fetch.records import ImageBlock
from sitegen.model.views import Site
from sitegen.render.markdown import HeadingIds, MarkdownRenderer
from sitegen.urls import safe_http_url


@dataclass(slots=True)
class Found:
    """The images of one site: written URL → where it is first shown; body hash → URLs."""

    where: dict[str, str] = field(default_factory=dict)
    bodies: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: Markdown bodies parsed in this call (body hash → image URLs), for the store.
    parsed: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def add(self, url: str, where: str) -> None:
        """Note *url* (as written) shown by *where* (the first place is kept)."""
        if url:
            self.where.setdefault(url, where)


def markdown_images(markdown: MarkdownRenderer, source: str) -> tuple[str, ...]:
    """The image URLs of a markdown document, as its rendered HTML writes them."""
    if "![" not in source:  # no image syntax at all: nothing to parse
        return ()
    urls: list[str] = []
    for token in markdown.md.parse(source, {"ids": HeadingIds()}):
        for child in token.children or ():
            if child.type == "image":
                src = str(child.attrGet("src") or "")
                if src and src not in urls:
                    urls.append(src)
    return tuple(urls)


def parse_key() -> str:
    """What decides a markdown body's image URLs besides its source (the parser's code and
    version): part of the key under which they are kept."""
    digest = hashlib.sha256(version("markdown-it-py").encode())
    package = Path(__file__).resolve().parent.parent
    for name in ("render/markdown.py", "urls.py", "images/collect.py"):
        digest.update((package / name).read_bytes())
    return digest.hexdigest()[:12]


def site_relative(url: str) -> bool:
    """Whether *url* is root-relative (`/logo.png`): in an own page, a file of the site."""
    return url.startswith("/") and not url.startswith("//")


def own_files(site: Site) -> frozenset[str]:
    """The root-relative image URLs of the owner's own pages: files of the site (`static/`),
    never fetched, written as they are (the link check finds the ones missing)."""
    markdown = MarkdownRenderer(site.base_url)
    return frozenset(url for page in site.own_pages
                     for url in markdown_images(markdown, page.content) if site_relative(url))


def markdown_bodies(site: Site) -> set[str]:
    """The body hashes of the markdown bodies that may hold an image (`![` in them)."""
    return {a.body_hash for a in site.articles if a.body_kind == "markdown"
            and "![" in a.content} | {p.body_hash for p in site.own_pages if "![" in p.content}


def collect(site: Site, known: Mapping[str, tuple[str, ...]] | None = None) -> Found:
    """Every image *site* shows (see the module docstring); *known* gives the image URLs of
    markdown bodies parsed by an earlier build (by body hash), which are not parsed again."""
    found = Found()
    markdown = MarkdownRenderer(site.base_url)
    known = known or {}

    def images_of(body_hash: str, source: str) -> tuple[str, ...]:
        urls = known.get(body_hash)
        if urls is None:
            urls = found.parsed[body_hash] = markdown_images(markdown, source)
        return urls
    for article in site.articles:
        where = f"article {article.title!r} ({article.id})"
        found.add(article.image, where)
        if article.body_hash not in found.bodies:
            if article.body_kind == "blocks":
                urls = tuple(dict.fromkeys(
                    url for block in article.blocks if isinstance(block, ImageBlock)
                    for url in [safe_http_url(block.url)] if url))
            else:
                urls = images_of(article.body_hash, article.content)
            found.bodies[article.body_hash] = urls
        for url in found.bodies[article.body_hash]:
            found.add(url, where)
    for page in site.own_pages:
        if page.body_hash not in found.bodies:
            found.bodies[page.body_hash] = images_of(page.body_hash, page.content)
        for url in found.bodies[page.body_hash]:
            if not site_relative(url):  # (a root-relative one is a file of the site)
                found.add(url, f"page {page.source}")
    for author in site.authors:
        found.add(author.image, f"author {author.name!r}")
    for post in site.social_posts:
        found.add(post.image, f"social post {post.title!r}")
        found.add(post.share_image, f"social post {post.title!r}")  # (link previews)
    return found
