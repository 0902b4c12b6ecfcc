"""Tolerant API records: unknown fields ignored, scalars coerced, bad blocks contained."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from sitegen.blocktypes import HeaderBlock, ImageBlock, UnknownBlock, parse_block
from sitegen.fetch.payloads import AnalyticsEvent, DigestUpdate
from sitegen.fetch.records import Article


def test_article_tolerates_unknown_and_mistyped_fields() -> None:
    article = Article.model_validate(
        {"id": "65f0c0ffee0123456789abc1", "title": 42, "tags": "a, b ,", "surprise": {"x": 1},
         "createdAt": "not a date", "updatedAt": "2026-03-04T09:15:00.000Z", "meta": "junk"}
    )
    assert article.title == "42"
    assert article.tags == ["a", "b"]
    assert article.createdAt is None
    assert article.updatedAt is not None and article.updatedAt.year == 2026
    assert article.meta is None
    assert not article.has_body


def test_article_without_id_is_rejected() -> None:
    with pytest.raises(ValidationError):
        Article.model_validate({"title": "No id"})


def test_blocks_unknown_and_broken_become_unknown() -> None:
    article = Article.model_validate(
        {"id": "a1", "blocks": [{"type": "header", "content": "H", "level": 9},
                                {"type": "carousel"}, {"type": "image"}, "text"]}
    )
    assert article.blocks is not None
    header, carousel, image, junk = article.blocks
    assert isinstance(header, HeaderBlock) and header.level == 6
    assert isinstance(carousel, UnknownBlock) and carousel.type == "carousel"
    assert isinstance(image, UnknownBlock) and "image" in image.reason
    assert isinstance(junk, UnknownBlock)
    assert article.has_body


@pytest.mark.parametrize("level", [float("inf"), float("-inf"), float("nan"), "x", None])
def test_header_level_that_is_no_number_falls_back_to_2(level: object) -> None:
    article = Article.model_validate(
        {"id": "a1", "blocks": [{"type": "header", "content": "H", "level": level}]})
    assert article.blocks is not None
    (header,) = article.blocks
    assert isinstance(header, HeaderBlock) and header.level == 2


def test_blocks_round_trip_through_json() -> None:
    article = Article.model_validate(
        {"id": "a1", "blocks": [{"type": "image", "url": "https://x.test/a.png", "caption": "c"},
                                {"type": "mystery", "payload": 1}]}
    )
    again = Article.model_validate_json(article.model_dump_json())
    assert again.blocks is not None
    assert isinstance(again.blocks[0], ImageBlock)
    assert isinstance(again.blocks[1], UnknownBlock)


@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(["type", "url", "content", "level", "items", "x"]),
                      children, max_size=5),
    max_leaves=12,
))
def test_parse_block_never_raises(raw: Any) -> None:
    parse_block(raw)


def test_digest_update_bounds() -> None:
    DigestUpdate(enabled=True, frequency="weekly", subject="Hi", senderName="Ann")
    with pytest.raises(ValidationError):
        DigestUpdate(enabled=True, frequency="hourly", subject="Hi", senderName="Ann")
    with pytest.raises(ValidationError):
        DigestUpdate(enabled=True, frequency="daily", subject="x" * 181, senderName="Ann")
    with pytest.raises(ValidationError):
        DigestUpdate(enabled=True, frequency="daily", subject="s", senderName="A",
                     replyTo="not-an-email")


def test_analytics_event_bounds() -> None:
    AnalyticsEvent(visitorId="abcdef", page={"type": "article"})
    with pytest.raises(ValidationError):
        AnalyticsEvent(visitorId="abc")
    with pytest.raises(ValidationError):
        AnalyticsEvent(visitorId="abcdef", landingUrl="x" * 2001)
    with pytest.raises(ValidationError):
        AnalyticsEvent(visitorId="abcdef", page={"type": "home"})
