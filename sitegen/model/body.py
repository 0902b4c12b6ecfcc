"""An article's body source: blocks or markdown, checked and measured.

Role: apply the body rule (an article renders its `blocks` when it has at least
one known block, else its markdown `content`), keep unknown blocks (drawn by
`blocks/unknown.html`) and drop media blocks whose URL is unsafe (each a repair
sentence for the caller to warn about), and derive what the model needs from the
body: word count (each block's plain text, from the block registry
`sitegen.blocktypes`), first image and its text alternative, and a content hash render
caches key on (with the article's title folded in when an image may take its text
alternative from it: `titled_hash`).
Must never do I/O, log, or render HTML.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Literal

from sitegen.blocktypes import (
    BlockRecord,
    ImageBlock,
    UnknownBlock,
    VideoBlock,
    plain_text,
)
from sitegen.fetch.records import Article
from sitegen.urls import safe_http_url

WORDS_PER_MINUTE = 220
# A tuple, not `A | B`: isinstance with a union builds the union on every call (~10x slower).
_MEDIA_BLOCKS = (ImageBlock, VideoBlock)
_MD_IMAGE = re.compile(r"!\[([^\]]*)\]\(\s*<?([^)\s>]+)")
_MD_MARKS = re.compile(r"[*_`~\\]")


@dataclass(frozen=True, slots=True)
class Body:
    """The checked body of one article."""

    kind: Literal["blocks", "markdown"]
    blocks: list[BlockRecord]
    content: str
    words: int
    image: str
    hash: str
    repairs: list[str]
    #: The first image's text alternative (its alt, else its caption; "" when neither).
    image_alt: str = ""
    #: Whether an image of the body may have neither alt nor caption: its text alternative
    #: then comes from its context, the title among it (`titled_hash`).
    titled: bool = False

    @property
    def reading_minutes(self) -> int:
        """Reading time at ~220 words per minute, at least one minute."""
        return max(1, round(self.words / WORDS_PER_MINUTE))


def _markdown_hash(content: str) -> str:
    return hashlib.sha256(b"markdown" + content.encode("utf-8")).hexdigest()[:32]


def _first_markdown_image(content: str) -> tuple[str, str]:
    """The first usable image URL of a markdown body and its alt text, without markup."""
    for match in _MD_IMAGE.finditer(content):
        url = safe_http_url(match.group(2))
        if url is not None:
            return url, " ".join(_MD_MARKS.sub("", match.group(1)).split())
    return "", ""


def titled_hash(body: Body, title: str) -> str:
    """The hash render caches key *body* on: its own, with *title* folded in when an image
    of it may take its text alternative from the title (`Body.titled`), so a rendered body
    holds no stale title."""
    if not body.titled:
        return body.hash
    return hashlib.sha256(f"{body.hash}\x00{title}".encode()).hexdigest()[:32]


def article_body(article: Article) -> Body:
    """Choose and check the body of *article* (blocks when any known block, else markdown).

    One pass over the blocks checks them, counts their words, finds the first image
    and hashes the kind and each kept block's JSON, NUL-separated (this runs for every
    article of every build); a markdown body hashes its source.
    """
    content = article.content or ""
    if article.blocks:
        kept: list[BlockRecord] = []
        repairs: list[str] = []
        unknown: dict[str, int] = {}
        words = known = 0
        image: str | None = None
        image_alt = ""
        titled = False
        digest = hashlib.sha256(b"blocks")
        for block in article.blocks:
            if isinstance(block, UnknownBlock):
                label = f"{block.type!r} ({block.reason})"
                unknown[label] = unknown.get(label, 0) + 1
            else:
                if isinstance(block, _MEDIA_BLOCKS):
                    url = safe_http_url(block.url)
                    if url is None:
                        repairs.append(f"article {article.id}: {block.type} block with an "
                                       "unusable URL was left out")
                        continue
                    if isinstance(block, ImageBlock):
                        alt = " ".join((block.alt or block.caption or "").split())
                        titled = titled or not alt
                        if image is None:
                            image, image_alt = url, alt  # (a valid URL: cards, share tags)
                known += 1
            words += len(plain_text(block).split())
            kept.append(block)
            digest.update(block.__pydantic_serializer__.to_json(block))
            digest.update(b"\x00")
        shown = ("is shown as an unknown block (blocks/unknown.html)" if known
                 else "was left out")
        for label, count in unknown.items():
            times = f" ×{count}" if count > 1 else ""
            repairs.append(f"article {article.id}: block type {label}{times} {shown}")
        if known:
            return Body("blocks", kept, content, words, image or "", digest.hexdigest()[:32],
                        repairs, image_alt, titled)
    else:
        repairs = []
    words = len(content.split())
    image, image_alt = _first_markdown_image(content)
    return Body("markdown", [], content, words, image, _markdown_hash(content), repairs,
                image_alt, "![" in content)
