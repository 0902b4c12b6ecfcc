"""ApiClient against misbehaving servers on loopback: redirects, trickles, endless bodies.

Real sockets and the client's default transport (no mocks), except where a test needs
an https origin, which a `MockTransport` stands in for.
"""

from __future__ import annotations

import asyncio
import time
import tracemalloc
from typing import Any

import httpx
import pytest

from sitegen.errors import UnreachableError
from sitegen.fetch.client import ApiClient
from tests.fetch.hostile import (
    WS,
    Hostile,
    Request,
    endless_chunks,
    json_answer,
    redirect,
    trickle,
)

KEY = "k3y-Tr4vels-0nly-h0me"
PATH = f"/workspaces/{WS}/articles"


def get(api: ApiClient, path: str = PATH) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        async with api:
            return await api.get_json("v2", path)

    return asyncio.run(go())


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_origin_is_refused_and_the_key_never_goes_there(
        status: int) -> None:
    with Hostile(lambda request: json_answer({"articles": []})) as elsewhere, \
            Hostile(lambda request: redirect(elsewhere.url + request.target, status)) as home:
        started = time.monotonic()
        with pytest.raises(UnreachableError) as caught:
            get(ApiClient(home.url, KEY, retry_budget=5.0))
        assert time.monotonic() - started < 2  # refused at once, not retried
    message = str(caught.value)
    assert caught.value.exit_code == 5
    assert elsewhere.origin in message and "another origin" in message
    assert KEY not in message and "\n" not in message and message.count(": ") <= 2
    assert elsewhere.requests == []  # nothing reached it, the key least of all
    assert len(home.requests) == 1 and home.requests[0].headers["x-api-key"] == KEY


def test_a_redirect_within_the_origin_is_followed_with_the_key() -> None:
    def reply(request: Request) -> bytes:
        if request.path.startswith("/moved"):
            return json_answer({"articles": [], "at": request.path})
        return redirect("/moved" + request.target)

    with Hostile(reply) as home:
        data = get(ApiClient(home.url, KEY))
    assert data["at"] == f"/moved/api/v2{PATH}"
    assert [r.headers["x-api-key"] for r in home.requests] == [KEY, KEY]


def test_https_never_redirects_to_http_with_the_key() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.scheme == "https":
            return httpx.Response(301, headers={"location": str(request.url.copy_with(
                scheme="http"))})
        return httpx.Response(200, json={"articles": []})

    with pytest.raises(UnreachableError) as caught:
        get(ApiClient("https://cas.test", KEY, transport=httpx.MockTransport(handler)))
    assert "http://cas.test:80" in str(caught.value)
    assert [r.url.scheme for r in seen] == ["https"]


def test_a_server_trickling_one_byte_every_2_s_is_cut_off_at_the_deadline() -> None:
    with Hostile(lambda request: trickle(every=2.0)) as slow:
        started = time.monotonic()
        with pytest.raises(UnreachableError) as caught:
            # each read comes within the 2.5 s timeout; only a deadline per attempt ends it
            get(ApiClient(slow.url, KEY, timeout=2.5, retry_budget=4.0))
        elapsed = time.monotonic() - started
    message = str(caught.value)
    assert elapsed < 5.5, elapsed  # the budget bounds the whole, retries included
    assert "no complete answer within" in message and KEY not in message
    assert len(slow.requests) >= 2  # retried within the budget


def test_an_endless_chunked_body_stops_at_the_size_cap_with_bounded_memory() -> None:
    cap = 1024 * 1024
    with Hostile(lambda request: endless_chunks()) as endless:
        tracemalloc.start()
        try:
            started = time.monotonic()
            with pytest.raises(UnreachableError) as caught:
                get(ApiClient(endless.url, KEY, max_body=cap, timeout=30.0))
            elapsed = time.monotonic() - started
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 6 * cap, peak
    assert elapsed < 10
    assert caught.value.exit_code == 5
    assert "answered more than 1 MiB" in str(caught.value)
    assert len(endless.requests) == 1  # not retried: no answer of the service is that big


def test_a_declared_length_past_the_cap_is_refused_before_reading() -> None:
    with Hostile(lambda request: json_answer({"articles": ["x" * 4096]})) as large:
        with pytest.raises(UnreachableError) as caught:
            get(ApiClient(large.url, KEY, max_body=1024))
    assert "answered more than" in str(caught.value)


def test_a_good_answer_after_a_trickle_is_taken() -> None:
    calls = []

    def reply(request: Request) -> Any:
        calls.append(request)
        return trickle(every=2.0) if len(calls) == 1 else json_answer({"articles": [1]})

    with Hostile(reply) as flaky:
        assert get(ApiClient(flaky.url, KEY, timeout=0.5, retry_budget=5.0)) == {
            "articles": [1]}
