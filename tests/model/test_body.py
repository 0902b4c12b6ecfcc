"""An article's body: the one-pass check equals the plain rule on any mix of blocks."""

from __future__ import annotations

import hashlib
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.blocktypes import (
    CodeBlock,
    HeaderBlock,
    ImageBlock,
    ListBlock,
    TextBlock,
    UnknownBlock,
    VideoBlock,
)
from sitegen.fetch.records import Article
from sitegen.model.body import article_body
from sitegen.urls import safe_http_url

WORDS = st.text(alphabet="ab \n\u00e9", max_size=12)
URLS = st.sampled_from(["https://img.test/a.png", " https://img.test/b.png ",
                        "javascript:alert(1)", "", "ftp://x.test/y", "https://v.test/v"])
BLOCKS = st.one_of(
    st.builds(lambda c: {"type": "text", "content": c}, WORDS),
    st.builds(lambda c, n: {"type": "header", "content": c, "level": n}, WORDS,
              st.integers(0, 9)),
    st.builds(lambda items, o: {"type": "list", "items": items, "ordered": o},
              st.lists(WORDS, max_size=3), st.booleans()),
    st.builds(lambda c: {"type": "code", "content": c, "language": "py"}, WORDS),
    st.builds(lambda u, c: {"type": "image", "url": u, "caption": c}, URLS,
              st.one_of(st.none(), WORDS)),
    st.builds(lambda u: {"type": "video", "url": u}, URLS),
    st.builds(lambda t: {"type": t, "x": 1}, st.sampled_from(["quote", "table", "embed"])),
    st.builds(lambda c: {"type": "quote", "content": c}, WORDS),  # its text is shown
    st.just({"type": "image"}),  # no url: unusable
)


def _expected(article: Article) -> tuple[str, int, str, str, list[str]]:
    """The body rule written plainly: kind, words, first image, hash, repairs."""
    kept: list[Any] = []
    repairs: list[str] = []
    unknown: dict[str, int] = {}
    for block in article.blocks or []:
        if isinstance(block, UnknownBlock):
            label = f"{block.type!r} ({block.reason})"
            unknown[label] = unknown.get(label, 0) + 1
            kept.append(block)  # shown through blocks/unknown.html
        elif isinstance(block, ImageBlock | VideoBlock) and safe_http_url(block.url) is None:
            repairs.append(f"article {article.id}: {block.type} block with an unusable URL "
                           "was left out")
        else:
            kept.append(block)
    known = [b for b in kept if not isinstance(b, UnknownBlock)]
    for label, count in unknown.items():
        repairs.append(f"article {article.id}: block type {label}"
                       f"{f' ×{count}' if count > 1 else ''} " + (
                           "is shown as an unknown block (blocks/unknown.html)" if known
                           else "was left out"))
    content = article.content or ""
    if not known:
        digest = hashlib.sha256(b"markdown" + content.encode())
        return "markdown", len(content.split()), "", digest.hexdigest()[:32], repairs
    words = 0
    for block in kept:
        if isinstance(block, TextBlock | HeaderBlock | CodeBlock | UnknownBlock):
            words += len(block.content.split())
        elif isinstance(block, ListBlock):
            words += sum(len(item.split()) for item in block.items)
        elif isinstance(block, ImageBlock):
            words += len((block.caption or "").split())
    image = next((b.url.strip() for b in kept if isinstance(b, ImageBlock)), "")
    digest = hashlib.sha256(b"blocks")
    for block in kept:
        digest.update(block.model_dump_json().encode() + b"\x00")
    return "blocks", words, image, digest.hexdigest()[:32], repairs


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.none(), st.lists(BLOCKS, max_size=8)), WORDS)
def test_article_body_follows_the_body_rule(blocks: list[dict[str, Any]] | None,
                                            content: str) -> None:
    article = Article.model_validate({"id": "65f0c0ffee0123456789abcd", "blocks": blocks,
                                      "content": content})
    body = article_body(article)
    assert (body.kind, body.words, body.image, body.hash, body.repairs) == _expected(article)
    if body.kind == "blocks":
        assert any(not isinstance(b, UnknownBlock) for b in body.blocks)
