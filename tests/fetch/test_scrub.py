"""Key scrubbing: whole key values only, never a garbled message, never a key letter shown."""

from __future__ import annotations

import asyncio

import pytest

from sitegen.errors import ApiError
from sitegen.fetch.client import ApiClient
from sitegen.fetch.scrub import scrub
from tests.fetch.hostile import WS, Hostile, json_answer

MESSAGE = ("GET /api/v2/workspaces/{id}/articles failed 2 time(s) in 0.4 s (HTTP 500: a "
           "bad answer): check [api] url and your connection, or try again later")


@pytest.mark.parametrize("key", ["e", "x", "0", "4", "5", "ap", "ai", "rl", "ET", "i/", "GE"])
def test_a_short_key_never_garbles_a_message_it_is_not_in(key: str) -> None:
    assert scrub(MESSAGE, key) == MESSAGE


@pytest.mark.parametrize("key", ["a", "k3", "x-y", "Zq9"])
def test_a_short_key_is_replaced_where_it_stands_whole(key: str) -> None:
    for text, expected in [
        (f"the key {key} is malformed", "the key *** is malformed"),
        (f"x-api-key: {key}", "x-api-key: ***"),
        (f'{{"key": "{key}"}}', '{"key": "***"}'),
        (f"Bearer {key}.", "Bearer ***."),
        (key, "***"),
        (f"{key},{key}", "***,***"),
        (f"v1.{key}", f"v1.{key}"),  # part of a dotted word: not the key standing whole
    ]:
        assert scrub(text, key) == expected


def test_a_long_key_is_replaced_even_inside_a_longer_token() -> None:
    key = "SeCrEt-KEY-4242-zz-do-not-print"
    assert scrub(f"token=x{key}y and {key}", key) == "token=x***y and ***"


def test_nothing_changes_without_a_key() -> None:
    assert scrub(MESSAGE, "") == MESSAGE


@pytest.mark.parametrize("key", ["a", "es", "ice"])
def test_a_short_key_echoed_by_the_service_is_hidden_and_the_message_intact(key: str) -> None:
    echo = {"error": "Bad", "details": f"service says key {key} is malformed"}

    async def go(url: str) -> None:
        async with ApiClient(url, key, max_retries=0) as api:
            await api.get_json("v2", f"/workspaces/{WS}/articles")

    with Hostile(lambda request: json_answer(echo, 400)) as service, \
            pytest.raises(ApiError) as caught:
        asyncio.run(go(service.url))
    message = str(caught.value)
    assert "service says key *** is malformed" in message
    assert "the service rejected GET /api/v2/workspaces/{id}/articles (HTTP 400" in message
    assert "check [api] workspace" in message
