"""Every image the site shows, found in the site model, and where each is shown.

Role: walk a built `Site` for the image URLs its pages show (article images, image
blocks, markdown images of articles and own pages, author images, social post images),
each as its templates write it (after `safe_http_url`), with the first place that shows
it (for warnings) and, per body, the images its HTML holds (the body cache keys on
them). `resolve` makes a written URL absolute against the service's base URL. It must
never do I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

from sitegen.fetch.records import ImageBlock
from sitegen.model.views import Site
from sitegen.render.markdown import HeadingIds, MarkdownRenderer
from sitegen.urls import safe_http_url


@dataclass(slots=True)
class Found:
    """The images of one site: written URL → where it is first shown; body hash → URLs."""

    where: dict[str, str] = field(default_factory=dict)
    bodies: dict[str, tuple[str, ...]] = field(default_factory=dict)

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


def collect(site: Site) -> Found:
    """Every image *site* shows (see the module docstring)."""
    found = Found()
    markdown = MarkdownRenderer(site.base_url)
    for article in site.articles:
        where = f"article {article.title!r} ({article.id})"
        found.add(article.image, where)
        if article.body_hash not in found.bodies:
            if article.body_kind == "blocks":
                urls = tuple(dict.fromkeys(
                    url for block in article.blocks if isinstance(block, ImageBlock)
                    for url in [safe_http_url(block.url)] if url))
            else:
                urls = markdown_images(markdown, article.content)
            found.bodies[article.body_hash] = urls
        for url in found.bodies[article.body_hash]:
            found.add(url, where)
    for page in site.own_pages:
        urls = found.bodies.setdefault(page.body_hash, markdown_images(markdown, page.content))
        for url in urls:
            found.add(url, f"page {page.source}")
    for author in site.authors:
        found.add(author.image, f"author {author.name!r}")
    for post in site.social_posts:
        found.add(post.image, f"social post {post.title!r}")
    return found


def resolve(url: str, service: str) -> str | None:
    """The absolute http(s) URL to fetch for *url* as written (relative ones against the
    service's base URL), or None when it cannot be fetched."""
    absolute = urljoin(service.rstrip("/") + "/", url) if url.startswith("/") and not \
        url.startswith("//") else ("https:" + url if url.startswith("//") else url)
    try:
        parts = urlsplit(absolute)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return absolute
