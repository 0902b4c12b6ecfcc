"""What a page tells search engines and link previews: title, description, canonical, JSON-LD.

Role: compute, per page, the document title, meta description (a tag page's its own:
how many articles and the first titles), keywords, canonical absolute URL (none on the
404 page, which has no address of its own), OpenGraph/Twitter image, its alt text (the
image's own, never the page's title; none when the image has none) and type, robots
directive, and the JSON-LD object (BlogPosting on articles, with its image — the hero,
else the body's first the site shows, else its generated share card
(`sitegen.render.sharecard`; a social post's too; none with `[share_cards] enabled = false`)
— and its author, an AI persona, described as
one; Blog/CollectionPage elsewhere; the publisher with its raster logo; each page
kind's types, robots directive and interface title come from the page kinds registry,
`sitegen.model.kinds`); and, once per build, what the build should warn about
(`site_warnings`: SVG share images, no site description). The English words of structural pages
(the index and 404 titles, "page 2", list descriptions); a title that begins with
the site's name (the home page's continuations) does not repeat it at its end go through the page's
translator. The values are plain data; templates
escape them, and JSON-LD goes through the `jsonld` filter. Must never build
markup, log (pages render in workers) or do I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from sitegen.model.kinds import Kind, kind_of
from sitegen.model.views import (
    ArticleView,
    Page,
    Section,
    SectionIndex,
    Site,
    SocialPostView,
    TagView,
)
from sitegen.render.filters import iso_date
from sitegen.render.i18n import Translator, english
from sitegen.render.sharecard import card_facts, card_url

MAX_DESCRIPTION = 300


def _listing_title(page: Page, kind: Kind, t: Callable[..., str]) -> str:
    """*page*'s title in its language: interface titles translated, "(page 2)" too."""
    title = page.title.removesuffix(f" (page {page.number})")  # the model's English suffix
    if kind.interface_title:
        title = t(title)
    if page.number > 1:
        title = f"{title} ({t('page {number}', number=page.number)})"
    return title


@dataclass(frozen=True, slots=True)
class PageMeta:
    """SEO values of one page (all plain text or absolute URLs)."""

    title: str
    description: str
    canonical: str
    og_type: str
    image: str
    keywords: str
    robots: str
    jsonld: dict[str, object] = field(default_factory=dict)
    image_alt: str = ""
    #: (hreflang, absolute URL) of the page's language alternates (`_alternates`).
    alternates: tuple[tuple[str, str], ...] = ()


def _clip(text: str) -> str:
    text = " ".join(text.split())
    if len(text) <= MAX_DESCRIPTION:
        return text
    return text[: MAX_DESCRIPTION - 1].rsplit(" ", 1)[0] + "…"


def _article_ld(site: Site, kind: Kind, article: ArticleView, canonical: str, image: str,
                logo: str, t: Callable[..., str]) -> dict[str, object]:
    publisher: dict[str, object] = {"@type": "Organization", "name": site.title,
                                    "url": site.base_url + "/"}
    if logo:
        publisher["logo"] = {"@type": "ImageObject", "url": logo}
    data: dict[str, object] = {
        "@context": "https://schema.org",
        "@type": kind.seo,
        "headline": article.title[:110],
        "url": canonical,
        "mainEntityOfPage": canonical,
        "datePublished": iso_date(article.published),
        "dateModified": iso_date(article.updated),
        "inLanguage": article.language,
        "publisher": publisher,
    }
    if article.description:
        data["description"] = _clip(article.description)
    if image:
        data["image"] = image
    if article.keywords:
        data["keywords"] = ", ".join(article.keywords)
    if article.author is not None:
        # A Person (what search engines want of an article's author), said to be what it is.
        data["author"] = {"@type": "Person", "name": article.author.name,
                          "url": site.absolute(article.author.url),
                          "description": t("An AI persona of {site}", site=site.title)}
    elif article.agent is not None:
        data["author"] = {"@type": "Organization", "name": article.agent.name,
                          "url": site.absolute(article.agent.url)}
    if article.tags:
        data["articleSection"] = article.cluster.name if article.cluster else article.tags[0].name
    return data


def page_meta(site: Site, page: Page, logo: str = "",
              shown: Callable[[str], str] | None = None,
              t: Callable[..., str] = english,
              body_images: Mapping[str, Sequence[str]] | None = None) -> PageMeta:
    """The SEO values of *page*; *logo* is the publisher's logo (an absolute URL) or "";
    *shown* maps an image URL as written to the one the site serves (its largest processed
    file, `Renderer.share_image`; "" when it has none); *t* translates interface text into
    the page's language; *body_images* gives the image URLs of a body, by its hash (an
    article whose first image cannot be shown offers its next one)."""
    canonical = site.absolute(page.url)
    kind = kind_of(page.kind)

    def absolute_image(url: str) -> str:
        found = shown(url) if shown is not None and url else url
        return site.absolute(found) if found else ""

    article = page.article
    if article is not None:
        others = body_images.get(article.body_hash, ()) if body_images is not None else ()
        return _article_meta(site, kind, article, canonical, absolute_image, others, logo, t)
    if isinstance(page.obj, SocialPostView):
        return _post_meta(site, kind, page.obj, canonical, absolute_image)
    return _listing_meta(site, page, kind, canonical, absolute_image, t)


def _article_meta(site: Site, kind: Kind, article: ArticleView, canonical: str,
                  absolute_image: Callable[[str], str], others: Sequence[str], logo: str,
                  t: Callable[..., str]) -> PageMeta:
    """An article's values: its image, else the first of its body's (*others*) shown."""
    image = absolute_image(article.image)
    found = next((i for i in map(absolute_image, others) if i), "") if not image else ""
    card = _card(site, article) if not (image or found) else ""
    return PageMeta(
        title=f"{article.title} – {site.title}",
        description=_clip(article.description or site.description),
        canonical=canonical, og_type=kind.og_type, image=image or found or card,
        keywords=", ".join(article.keywords), robots=kind.robots,
        jsonld=_article_ld(site, kind, article, canonical, image or found or card, logo, t),
        image_alt=article.image_alt if image else "",
    )


def _post_meta(site: Site, kind: Kind, post: SocialPostView, canonical: str,
               absolute_image: Callable[[str], str]) -> PageMeta:
    """A social post's values: its share image (else its generated card), and the article
    it shares."""
    image = absolute_image(post.share_image) or _card(site, post)
    ld: dict[str, object] = {
        "@context": "https://schema.org", "@type": kind.seo,
        "headline": post.title[:110], "url": canonical, "inLanguage": site.language}
    if post.published is not None:
        ld["datePublished"] = iso_date(post.published)
    if image:
        ld["image"] = image
    if post.article is not None:
        ld["sharedContent"] = {"@type": "BlogPosting", "headline": post.article.title[:110],
                               "url": site.absolute(post.article.url)}
    return PageMeta(title=f"{post.title} – {site.title}",
                    description=_clip(post.content or site.description),
                    canonical=canonical, og_type=kind.og_type, image=image, keywords="",
                    robots=kind.robots, jsonld=ld,
                    image_alt=post.share_alt if image and post.share_image else "")


def _listing_description(site: Site, page: Page, t: Callable[..., str]) -> str:
    """A listing's (or an own page's) description: its own, else one said for its kind."""
    own = page.own_page
    if own is not None:
        return own.description or site.description
    if isinstance(page.obj, TagView):
        return _tag_description(site, page, page.obj, t)
    if isinstance(page.obj, Section):
        description = page.obj.description or t("Articles: {name} – {site}",
                                                name=page.obj.name, site=site.title)
        return getattr(page.obj, "bio", "") or description
    if isinstance(page.obj, SectionIndex):
        return t(kind_of(page.obj.kind).index_description, site=site.title)
    return site.description


def _listing_meta(site: Site, page: Page, kind: Kind, canonical: str,
                  absolute_image: Callable[[str], str], t: Callable[..., str]) -> PageMeta:
    """The values of every other page: a listing, an own page, the home page."""
    description = _listing_description(site, page, t)
    title = (site.title if page.kind == "home" and page.number == 1
             else _listing_title(page, kind, t))
    if not title.startswith(site.title):  # ("Notes (page 2)", never "… – Notes" again)
        title += f" – {site.title}"
    first = next((a for a in page.articles if a.image), None)
    image = absolute_image(first.image) if first is not None else ""
    jsonld: dict[str, object] = {
        "@context": "https://schema.org", "@type": kind.seo, "name": title, "url": canonical,
        "inLanguage": page.language or site.language,
    }
    if description:
        jsonld["description"] = _clip(description)
    return PageMeta(
        title=title, description=_clip(description),
        canonical=canonical if kind.canonical else "", og_type=kind.og_type, image=image,
        keywords="", robots=kind.robots, jsonld=jsonld if kind.seo else {},
        image_alt=first.image_alt if first is not None and image else "",
        alternates=_alternates(site, page),
    )


def _card(site: Site, obj: ArticleView | SocialPostView) -> str:
    """The absolute address of *obj*'s generated share card, "" when `[share_cards]` is off."""
    if not site.config.share_cards.enabled:
        return ""
    return site.absolute(card_url(card_facts(site, obj)))


def _tag_description(site: Site, page: Page, tag: TagView, t: Callable[..., str]) -> str:
    """A tag page's own description: how many articles carry the tag, and the titles of
    the page's first three ("3 articles tagged shell on Notes: A; B; C"), in its language."""
    one, other = ("{n} article tagged {tag} on {site}: {titles}",
                  "{n} articles tagged {tag} on {site}: {titles}")
    values: dict[str, object] = {"tag": tag.name, "site": site.title,
                                 "titles": "; ".join(a.title for a in page.articles[:3])}
    n = len(tag.articles)
    if isinstance(t, Translator):
        return t.count(n, one, other, **values)
    return t(one if n == 1 else other, n=n, **values)


def meta_sources(site: Site, page: Page,
                 body_images: Mapping[str, Sequence[str]] | None = None,
                 ) -> tuple[list[object], list[str]]:
    """What `page_meta` reads of the model beside *page*, its `obj` and the site's own
    fields: the entities it looks into (each counts whole) and the image URLs it shows.

    A page's context is recorded as these reads (`render.contextprint.context_reads`), so
    an entity `page_meta` reads and this leaves out would leave a page stale when it
    changes: `tests/render/test_seo_meta.py` changes every other entity of a site and finds
    no page's values changed."""
    entities: list[object] = [*page.articles]
    images = [a.image for a in page.articles if a.image]
    article = page.article
    if article is not None:
        entities += [e for e in (article.author, article.agent, article.cluster,
                                 *article.tags[:1]) if e is not None]
        images.append(article.image)
        images += body_images.get(article.body_hash, ()) if body_images is not None else ()
    post = page.obj if isinstance(page.obj, SocialPostView) else None
    if post is not None:
        entities += [post.article] if post.article is not None else []
        images.append(post.share_image)
    if _has_alternates(site, page):
        entities += site.languages
    return entities, [url for url in images if url]


def _has_alternates(site: Site, page: Page) -> bool:
    return len(site.languages) > 1 and page.number == 1 and page.kind in ("home", "language")


def _alternates(site: Site, page: Page) -> tuple[tuple[str, str], ...]:
    """On a site in several languages, the first page of the home and of each language's
    list name one another (`hreflang`): each language's list in its language, the home as
    `x-default`. Articles have no translations in the service, so they name none."""
    if not _has_alternates(site, page):
        return ()
    found = [(language.id, site.absolute(language.url)) for language in site.languages]
    return (*found, ("x-default", site.absolute("/")))


def is_svg(url: str) -> bool:
    """Whether *url* names an SVG file (social platforms ignore SVG share images)."""
    return url.split("?", 1)[0].split("#", 1)[0].lower().endswith((".svg", ".svgz"))


def site_warnings(site: Site) -> list[str]:
    """What the build warns about once (see the module docstring), as sentences."""
    found: list[str] = []
    svg = [a for a in site.articles if a.image and is_svg(a.image)]
    if svg:
        found.append(
            f"{len(svg)} article(s) have an SVG share image, which social platforms ignore "
            f"(first: {svg[0].slug!r}, {svg[0].image}): give them a PNG, JPEG or WebP image")
    if not site.description.strip():
        found.append("[site] description is empty, so the home and list pages have no meta "
                      "description: write one sentence about the site in site.toml")
    return found
