"""Social posts in the site graph: a page each at `/social/{slug}/`, and the article promoted.

Role: turn the workspace's social post records into `SocialPostView`s with unique safe
slugs (never `page`, which the list's pagination uses), the image of the slot each
selected, the image link previews want (landscape first), and the published article
a post promotes when the record names one (by id, slug or URL of this site; nothing
else is ever linked). A post whose URL a file of the owner's holds moves to a free slug
(`sitegen.model.claims`; the warning goes to the caller's *warn*). Pure: it must never do
I/O, log, or render.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import partial
from urllib.parse import urlsplit

from sitegen.fetch.records import SocialPost
from sitegen.model.claims import Claims, give_way
from sitegen.model.slugs import SlugAllocator, device_safe, short_hash, slugify, url_to_path
from sitegen.model.views import ArticleView, SocialPostView
from sitegen.urls import safe_http_url

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
SLOTS = ("square", "portrait", "landscape")


def _text(value: str | None) -> str:
    return " ".join(value.split()) if value else ""


class _Articles:
    """The site's articles by id, slug and URL: made once for all the posts."""

    def __init__(self, articles: Sequence[ArticleView]) -> None:
        self.by_id = {a.id: a for a in articles}
        self.by_slug = {a.slug: a for a in articles}
        self.by_url = {a.url: a for a in articles}


def _promoted(record: SocialPost, articles: _Articles, base_url: str) -> ArticleView | None:
    by_id, by_slug, by_url = articles.by_id, articles.by_slug, articles.by_url
    if record.articleId and record.articleId in by_id:
        return by_id[record.articleId]
    if record.articleSlug and record.articleSlug in by_slug:
        return by_slug[record.articleSlug]
    base = urlsplit(base_url)
    for raw in (record.articleUrl, record.url):
        if not raw:
            continue
        parts = urlsplit(raw.strip())
        if parts.scheme and (parts.scheme not in ("http", "https")
                             or parts.netloc.lower() != base.netloc.lower()):
            continue
        if not parts.scheme and parts.netloc:
            continue
        path = parts.path
        prefix = base.path.rstrip("/")
        if prefix and path.startswith(prefix + "/"):
            path = path[len(prefix):]
        found = by_url.get(path if path.endswith("/") else path + "/")
        if found is not None:
            return found
    return None


def _alt_in(article: ArticleView | None, image: str) -> str:
    """The text alternative *article* gives *image* when it shows it first ("" otherwise)."""
    if article is not None and image and article.image == image:
        return article.image_alt
    return ""


def _post_url(slug: str) -> str:
    return f"/social/{slug}/"


def _slots(record: SocialPost) -> tuple[dict[str, str], str]:
    """A post's safe image URL in each slot ("": none), and the slot it shows: the one it
    selects when that has an image, else the first of landscape, square, portrait that has."""
    slot = (record.selectedImageSlot or "").strip().lower()
    by_slot = {name: safe_http_url(getattr(record.images, name, None)) or "" for name in SLOTS}
    chosen = slot if slot in SLOTS and by_slot.get(slot) else next(
        (name for name in ("landscape", "square", "portrait") if by_slot[name]), "")
    return by_slot, chosen


def social_views(records: Sequence[SocialPost], articles: Sequence[ArticleView],
                 base_url: str, language: str = "", claims: Claims | None = None,
                 warn: Callable[[str], None] = lambda message: None) -> list[SocialPostView]:
    """The posts (newest first), each with its page URL, promoted article and language: the
    article's, else *language* (`[social] language`; "": the site's); a post on a URL the
    owner's files hold (*claims*) moves, *warn* told."""
    allocator = SlugAllocator({"page", "feed.xml", "index.html"})
    posts: list[SocialPostView] = []
    found = _Articles(articles)
    ordered = sorted(records, key=lambda r: (r.createdAt or r.updatedAt or EPOCH, r.id))
    for record in ordered:  # oldest first: an older post keeps its slug
        by_slot, chosen = _slots(record)
        image = by_slot.get(chosen, "")
        title = _text(record.title) or _text(record.slug) or "Untitled"
        wanted = slugify(record.slug) or slugify(title) or "post-" + short_hash(record.id)
        safe = device_safe(wanted, "post")
        slug, moved = give_way(claims or Claims(), allocator.allocate(safe), _post_url,
                               partial(allocator.allocate, safe), f"social post {record.id}")
        if moved:
            warn(moved)
        url = f"/social/{slug}/"
        promoted = _promoted(record, found, base_url)
        share = by_slot["landscape"] or image
        posts.append(SocialPostView(
            id=record.id, title=title, slug=slug, content=(record.content or "").strip(),
            image=image, published=record.createdAt or record.updatedAt,
            updated=record.updatedAt or record.createdAt, url=url,
            path=url_to_path(url), slot=chosen, share_image=share, article=promoted,
            image_alt=_alt_in(promoted, image), share_alt=_alt_in(promoted, share),
            language=promoted.language if promoted is not None and promoted.language
            else language))
    posts.sort(key=lambda p: (p.published or EPOCH, p.id), reverse=True)
    return posts
