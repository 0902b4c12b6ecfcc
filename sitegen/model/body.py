"""An article's body source: blocks or markdown, checked and measured.

Role: apply the body rule (an article renders its `blocks` when it has at least
one known block, else its markdown `content`), drop unknown blocks and media
blocks whose URL is unsafe (each a repair sentence for the caller to warn
about), and derive what the model needs from the body: word count, first image,
and a content hash render caches key on. `BodyFacts` is that derivation without
the blocks themselves (positions instead), so a build can keep it between builds
(`sitegen.bodyfacts` stores it) and skip the pass over an unchanged article:
facts are used only for the article they were taken from, unchanged by its
`updatedAt` (the service's change marker, which the sync trusts too), its
markdown length and its block count. With facts, the kept blocks of an article
whose blocks the cache has not made objects yet are picked only when read
(`PickedBlocks`). Must never do I/O, log, or render HTML.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sitegen.fetch.records import (
    Article,
    Block,
    CodeBlock,
    HeaderBlock,
    ImageBlock,
    KnownBlock,
    ListBlock,
    TextBlock,
    UnknownBlock,
    VideoBlock,
)
from sitegen.lazylist import LazyList
from sitegen.render.urls import safe_http_url

WORDS_PER_MINUTE = 220
# Tuples, not `A | B`: isinstance with a union builds the union on every call (~10x slower).
_TEXT_BLOCKS = (TextBlock, HeaderBlock, CodeBlock)
_MEDIA_BLOCKS = (ImageBlock, VideoBlock)
_MD_IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)")


@dataclass(frozen=True, slots=True)
class Body:
    """The checked body of one article."""

    kind: Literal["blocks", "markdown"]
    blocks: list[KnownBlock]
    content: str
    words: int
    image: str
    hash: str
    repairs: list[str]

    @property
    def reading_minutes(self) -> int:
        """Reading time at ~220 words per minute, at least one minute."""
        return max(1, round(self.words / WORDS_PER_MINUTE))


def _markdown_hash(content: str) -> str:
    return hashlib.sha256(b"markdown" + content.encode("utf-8")).hexdigest()[:32]


def _first_markdown_image(content: str) -> str:
    for match in _MD_IMAGE.finditer(content):
        url = safe_http_url(match.group(1))
        if url is not None:
            return url
    return ""


def article_body(article: Article) -> Body:
    """Choose and check the body of *article* (blocks when any known block, else markdown).

    One pass over the blocks checks them, counts their words, finds the first image
    and hashes the kind and each kept block's JSON, NUL-separated (this runs for every
    article of every build); a markdown body hashes its source.
    """
    content = article.content or ""
    if article.blocks:
        kept: list[KnownBlock] = []
        repairs: list[str] = []
        unknown: dict[str, int] = {}
        words = 0
        image: str | None = None
        digest = hashlib.sha256(b"blocks")
        for block in article.blocks:
            if isinstance(block, UnknownBlock):
                label = f"{block.type!r} ({block.reason})"
                unknown[label] = unknown.get(label, 0) + 1
                continue
            if isinstance(block, _TEXT_BLOCKS):
                words += len(block.content.split())
            elif isinstance(block, ListBlock):
                words += sum(len(item.split()) for item in block.items)
            elif isinstance(block, _MEDIA_BLOCKS):
                if safe_http_url(block.url) is None:
                    repairs.append(f"article {article.id}: {block.type} block with an unusable "
                                   "URL was left out")
                    continue
                if isinstance(block, ImageBlock):
                    words += len((block.caption or "").split())
                    if image is None:
                        image = block.url.strip()
            kept.append(block)
            digest.update(block.__pydantic_serializer__.to_json(block))
            digest.update(b"\x00")
        for label, count in unknown.items():
            times = f" ×{count}" if count > 1 else ""
            repairs.append(f"article {article.id}: block type {label}{times} was left out")
        if kept:
            return Body("blocks", kept, content, words, image or "", digest.hexdigest()[:32],
                        repairs)
    else:
        repairs = []
    words = len(content.split())
    image = _first_markdown_image(content)
    return Body("markdown", [], content, words, image, _markdown_hash(content), repairs)


#: What makes facts belong to one version of an article (see the module docstring).
Guard = tuple[str, int, int]


@dataclass(frozen=True, slots=True)
class BodyFacts:
    """A `Body` without its blocks: the kept blocks' positions in the article's list."""

    guard: Guard
    kind: Literal["blocks", "markdown"]
    kept: tuple[int, ...]
    words: int
    image: str
    hash: str
    repairs: tuple[str, ...]


def _guard(article: Article) -> Guard | None:
    if article.updatedAt is None:
        return None
    return (article.updatedAt.isoformat(), len(article.content or ""), len(article.blocks or ()))


def body_facts(article: Article, body: Body) -> BodyFacts | None:
    """The facts of *body* (`article_body(article)`), or None for an undated article."""
    guard = _guard(article)
    if guard is None:
        return None
    kept: tuple[int, ...] = ()
    if body.kind == "blocks":
        mine = {id(block) for block in body.blocks}
        kept = tuple(i for i, block in enumerate(article.blocks or ()) if id(block) in mine)
    return BodyFacts(guard, body.kind, kept, body.words, body.image, body.hash,
                     tuple(body.repairs))


class PickedBlocks(LazyList[KnownBlock]):
    """The kept blocks of an article whose blocks are not loaded yet, picked on first read.

    The facts that name the positions belong to this very version of the article (the
    guard), so the picked blocks are the known ones they were; should one not be, it is
    left out then, as `article_body` would have.
    """

    __slots__ = ("_source",)

    def __init__(self, source: Sequence[Block], positions: Sequence[int]) -> None:
        super().__init__(list(positions))
        self._source = source

    def unread(self) -> tuple[Sequence[Block], tuple[int, ...]] | None:
        """(source, positions) while no block was read yet, else None."""
        if self.loaded:
            return None
        stand_ins: list[Any] = list(list.__iter__(self))  # the positions, unread
        return self._source, tuple(stand_ins)

    def _produce(self, stand_ins: list[Any]) -> list[KnownBlock]:
        source = self._source
        picked = [source[i] for i in stand_ins if 0 <= i < len(source)]
        return [b for b in picked if not isinstance(b, UnknownBlock)]


def known_body(article: Article, known: Mapping[str, BodyFacts]) -> tuple[Body, BodyFacts | None]:
    """`article_body(article)`, from *known* facts when they belong to this article version.

    Returns the body and its facts (to keep for the next build).
    """
    facts = known.get(article.id)
    if facts is not None and facts.guard == _guard(article):
        blocks = article.blocks or []
        positions = facts.kept  # ascending (as enumerate gave them)
        if isinstance(blocks, LazyList) and not blocks.loaded and (
                not positions or (positions[0] >= 0 and positions[-1] < len(blocks))):
            return Body(facts.kind, PickedBlocks(blocks, facts.kept), article.content or "",
                        facts.words, facts.image, facts.hash, list(facts.repairs)), facts
        picked = [blocks[i] for i in facts.kept if 0 <= i < len(blocks)]
        kept = [b for b in picked if not isinstance(b, UnknownBlock)]
        if len(kept) == len(facts.kept):
            return Body(facts.kind, kept, article.content or "", facts.words, facts.image,
                        facts.hash, list(facts.repairs)), facts
    body = article_body(article)
    return body, body_facts(article, body)
