"""Tags in the site graph: the tags of each article, their slugs, and their pages' URLs.

Role: name each raw tag (whitespace folded, 80 characters at most) and slug it (a Windows
device name suffixed), merge the tags that slug alike (the oldest article's name shown),
keep `MAX_TAGS` per article, and move a tag whose URL a file of the owner's holds
(`sitegen.model.claims`) to a slug no tag has. Pure: it must never do I/O or log (the
caller's *warn* hears of each repair).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from sitegen.fetch.records import Article
from sitegen.model.claims import Claims, give_way
from sitegen.model.registry import kind_of
from sitegen.model.slugs import SlugAllocator, device_safe, short_hash, slugify
from sitegen.model.views import ArticleView, TagRef, TagView

#: Tags kept per article: plenty for any real article, and what keeps the tag pages and
#: feeds of a record with 10,000 tags linear (each tag's feed repeats its entries' tags).
MAX_TAGS = 50


def _text(value: str | None) -> str:
    return " ".join(value.split()) if value else ""


def _url(slug: str) -> str:
    return kind_of("tag").url_for(slug=slug)


def tag_names(article: Article) -> tuple[str, ...]:
    """The raw tag names of *article* (its tags, else its meta's)."""
    return tuple(article.tags) or (tuple(article.meta.tags) if article.meta else ())


def attach_tags(pairs: list[tuple[Article, ArticleView]],
                 warn: Callable[[str], None], claims: Claims) -> dict[str, TagView]:
    """Tags by slug; a tag's display name is the one its oldest article used.

    An article keeps its first `MAX_TAGS` distinct tags (a warning says so); a tag on a URL
    the owner's files hold (*claims*) moves.
    """
    moves = _moves(pairs, claims, warn) if claims else {}
    tags: dict[str, TagView] = {}
    refs: dict[str, TagRef] = {}  # one per tag, shared by its articles
    named: dict[str, tuple[str, str]] = {}  # raw tag → (name, slug): tags repeat a lot
    for record, view in reversed(pairs):  # oldest first: names and slugs stay stable
        names = tag_names(record)
        seen: set[str] = set()
        for raw in names:
            found = named.get(raw)
            if found is None:
                found = named[raw] = tag_name(raw, warn)
            name, slug = found
            slug = moves.get(slug, slug)
            if not name:
                continue
            if slug in seen:
                continue
            if len(seen) == MAX_TAGS:
                warn(f"article {record.id} has more than {MAX_TAGS} tags; only its first "
                     f"{MAX_TAGS} were kept")
                break
            seen.add(slug)
            ref = refs.get(slug)
            if ref is None:
                tag = tags[slug] = TagView(id=slug, name=name, slug=slug,
                                           url=kind_of("tag").url_for(slug=slug))
                ref = refs[slug] = TagRef(tag.name, slug, tag.url)
            view.tags.append(ref)
    for _, view in pairs:
        for ref in view.tags:
            tags[ref.slug].articles.append(view)
    return tags


def _moves(pairs: list[tuple[Article, ArticleView]], claims: Claims,
               warn: Callable[[str], None]) -> dict[str, str]:
    """The tags whose URL the owner's files hold: their slug → a free one no tag has."""
    names: dict[str, str] = {}
    for record, _ in reversed(pairs):  # (oldest first: the name the tag pages show)
        for raw in tag_names(record):
            name, slug = tag_name(raw, lambda message: None)
            if name:
                names.setdefault(slug, name)
    allocator, moves = SlugAllocator(names), {}
    for slug, name in sorted(names.items()):
        moved, warning = give_way(claims, slug, _url,
                                  partial(allocator.allocate, slug), f"tag {name!r}",
                                  section=True)
        if warning:
            warn(warning)
            moves[slug] = moved
    return moves


def tag_name(raw: str, warn: Callable[[str], None]) -> tuple[str, str]:
    """A raw tag's display name and slug ("" for both when nothing is left of it)."""
    name = _text(raw)[:80]
    if not name:
        return "", ""
    wanted = slugify(name) or "tag-" + short_hash(name)
    slug = device_safe(wanted, "tag")
    if slug != wanted:
        warn(f"tag {name!r} slug {wanted!r} is a reserved name; using {slug!r} instead")
    return name, slug
