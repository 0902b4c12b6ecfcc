"""An article's body source: blocks or markdown, checked and measured.

Role: apply the body rule (an article renders its `blocks` when it has at least
one known block, else its markdown `content`), drop unknown blocks and media
blocks whose URL is unsafe (each a repair sentence for the caller to warn
about), and derive what the model needs from the body: word count, first image,
and a content hash render caches key on. Must never do I/O, log, or render HTML.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Literal

from sitegen.fetch.records import (
    Article,
    CodeBlock,
    HeaderBlock,
    ImageBlock,
    KnownBlock,
    ListBlock,
    TextBlock,
    UnknownBlock,
    VideoBlock,
)
from sitegen.render.urls import safe_http_url

WORDS_PER_MINUTE = 220
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


def _block_words(block: KnownBlock) -> int:
    if isinstance(block, TextBlock | HeaderBlock | CodeBlock):
        return len(block.content.split())
    if isinstance(block, ListBlock):
        return sum(len(item.split()) for item in block.items)
    if isinstance(block, ImageBlock):
        return len((block.caption or "").split())
    return 0


def _check_blocks(article: Article) -> tuple[list[KnownBlock], list[str]]:
    kept: list[KnownBlock] = []
    repairs: list[str] = []
    unknown: dict[str, int] = {}
    for block in article.blocks or []:
        if isinstance(block, UnknownBlock):
            label = f"{block.type!r} ({block.reason})"
            unknown[label] = unknown.get(label, 0) + 1
        elif isinstance(block, ImageBlock | VideoBlock) and safe_http_url(block.url) is None:
            repairs.append(
                f"article {article.id}: {block.type} block with an unusable URL was left out"
            )
        else:
            kept.append(block)
    for label, count in unknown.items():
        times = f" ×{count}" if count > 1 else ""
        repairs.append(f"article {article.id}: block type {label}{times} was left out")
    return kept, repairs


def _hash(kind: str, blocks: list[KnownBlock], content: str) -> str:
    digest = hashlib.sha256(kind.encode())
    if kind == "blocks":
        for block in blocks:
            digest.update(block.model_dump_json().encode("utf-8"))
            digest.update(b"\x00")
    else:
        digest.update(content.encode("utf-8"))
    return digest.hexdigest()[:32]


def _first_markdown_image(content: str) -> str:
    for match in _MD_IMAGE.finditer(content):
        url = safe_http_url(match.group(1))
        if url is not None:
            return url
    return ""


def article_body(article: Article) -> Body:
    """Choose and check the body of *article* (blocks when any known block, else markdown)."""
    blocks, repairs = _check_blocks(article)
    content = article.content or ""
    if blocks:
        image = next(
            (b.url.strip() for b in blocks if isinstance(b, ImageBlock)), ""
        )
        words = sum(_block_words(b) for b in blocks)
        return Body("blocks", blocks, content, words, image, _hash("blocks", blocks, ""), repairs)
    words = len(content.split())
    image = _first_markdown_image(content)
    return Body("markdown", [], content, words, image, _hash("markdown", [], content), repairs)
