"""ApiClient: auth headers, retries, status mapping, limits, and the key never leaking."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import httpx
import pytest
import respx

from sitegen.errors import ApiError, AuthError, QuotaError, UnreachableError
from sitegen.fetch.answers import NotFound
from sitegen.fetch.client import ApiClient
from sitegen.fetch.ledger import CallLedger
from sitegen.fetch.retry import AdaptiveLimit
from tests.fetch.conftest import BASE, KEY, WS

ARTICLES = f"{BASE}/api/v2/workspaces/{WS}/articles"


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def get(client: ApiClient, version: str = "v2",
              path: str = f"/workspaces/{WS}/articles") -> dict[str, Any]:
    async with client:
        return await client.get_json(version, path)  # type: ignore[arg-type]


def client(**options: Any) -> ApiClient:
    options.setdefault("retry_budget", 20.0)
    # respx mocks httpx's own transport; the lean default one is tested over real sockets
    # in test_transport.py.
    options.setdefault("transport", httpx.AsyncHTTPTransport())
    return ApiClient(BASE, KEY, ledger=options.pop("ledger", CallLedger()), **options)


@respx.mock
def test_v2_sends_the_bare_key_and_v1_the_bearer_form() -> None:
    v2 = respx.get(ARTICLES).respond(json={"articles": []})
    v1 = respx.get(f"{BASE}/api/v1/articles/{WS}").respond(json={"article": {"id": WS}})
    run(get(client()))
    run(get(client(), "v1", f"/articles/{WS}"))
    assert v2.calls.last.request.headers["x-api-key"] == KEY
    assert v1.calls.last.request.headers["x-api-key"] == f"Bearer {KEY}"


@pytest.mark.parametrize(("status", "error", "exit_code"), [
    (401, AuthError, 3), (403, AuthError, 3), (402, QuotaError, 4)])
@respx.mock
def test_refusals_fail_at_once_without_retry(status: int, error: type[Exception],
                                            exit_code: int) -> None:
    route = respx.get(ARTICLES).respond(status, json={"error": "x", "details": "y"})
    with pytest.raises(error) as caught:
        run(get(client()))
    assert route.call_count == 1
    assert caught.value.exit_code == exit_code  # type: ignore[attr-defined]
    if status == 402:
        assert "quota" in str(caught.value)


@respx.mock
def test_404_is_not_found_and_400_is_an_api_error_naming_the_endpoint() -> None:
    respx.get(ARTICLES).respond(404, json={"error": "Not Found"})
    with pytest.raises(NotFound):
        run(get(client()))
    respx.get(ARTICLES).respond(400, json={"error": "Bad", "details": "Invalid query"})
    with pytest.raises(ApiError) as caught:
        run(get(client()))
    assert type(caught.value) is ApiError
    assert "GET /api/v2/workspaces/{id}/articles" in str(caught.value)
    assert "Invalid query" in str(caught.value)


@pytest.mark.parametrize("bad", [
    httpx.Response(200, content=b"<html><body>Gateway</body></html>",
                   headers={"content-type": "text/html"}),
    httpx.Response(200, content=b'{"articles": [', headers={"content-type": "application/json"}),
    httpx.Response(200, content=b"", headers={"content-type": "application/json"}),
    httpx.Response(200, json=[1, 2]),
    httpx.Response(503, json={"error": "busy"}),
    httpx.Response(500, text="oops"),
])
@respx.mock
def test_transient_answers_are_retried_then_succeed(bad: httpx.Response) -> None:
    ledger = CallLedger()
    respx.get(ARTICLES).mock(side_effect=[bad, httpx.Response(200, json={"articles": [1]})])
    assert run(get(client(ledger=ledger))) == {"articles": [1]}
    assert ledger.total == 2 and ledger.retries == 1


@respx.mock
def test_html_forever_gives_up_as_unreachable_naming_the_endpoint() -> None:
    route = respx.get(ARTICLES).respond(200, html="<html>login</html>")
    with pytest.raises(UnreachableError) as caught:
        run(get(client(max_retries=3)))
    assert route.call_count == 4
    assert "GET /api/v2/workspaces/{id}/articles" in str(caught.value)
    assert "not JSON" in str(caught.value)
    assert caught.value.exit_code == 5


@pytest.mark.parametrize("error", [
    httpx.ReadTimeout("slow"), httpx.ConnectTimeout("slow"), httpx.ConnectError("refused"),
    httpx.ReadError("connection reset by peer"), httpx.RemoteProtocolError("closed"),
])
@respx.mock
def test_timeouts_and_resets_are_retried(error: Exception) -> None:
    respx.get(ARTICLES).mock(side_effect=[error, error, httpx.Response(200, json={"ok": 1})])
    ledger = CallLedger()
    assert run(get(client(ledger=ledger))) == {"ok": 1}
    assert ledger.retries == 2
    assert [r.status for r in ledger.records] == [0, 0, 200]


@respx.mock
def test_persistent_failure_is_bounded_in_count() -> None:
    route = respx.get(ARTICLES).mock(side_effect=httpx.ConnectError("down"))
    with pytest.raises(UnreachableError):
        run(get(client(max_retries=2)))
    assert route.call_count == 3


@respx.mock
def test_burst_of_429_honours_retry_after_and_reset(_no_sleep: list[float]) -> None:
    respx.get(ARTICLES).mock(side_effect=[
        httpx.Response(429, headers={"Retry-After": "3"}),
        httpx.Response(429, headers={"X-RateLimit-Reset": "2"}),
        httpx.Response(429, headers={"Retry-After": "1"}),
        httpx.Response(200, json={"ok": True}),
    ])
    api = client()
    assert run(get(api)) == {"ok": True}
    assert len(_no_sleep) == 3
    assert 3.0 <= _no_sleep[0] < 3.5 and 2.0 <= _no_sleep[1] < 2.5 and 1.0 <= _no_sleep[2] < 1.5


@respx.mock
def test_a_wait_beyond_the_budget_gives_up_at_once(_no_sleep: list[float]) -> None:
    route = respx.get(ARTICLES).respond(429, headers={"Retry-After": "25"})
    with pytest.raises(UnreachableError) as caught:
        run(get(client(retry_budget=20.0)))
    assert route.call_count == 1 and _no_sleep == []
    assert "asked to wait 25 s" in str(caught.value)


@respx.mock
def test_backoff_is_exponential_with_full_jitter(_no_sleep: list[float]) -> None:
    respx.get(ARTICLES).respond(500)
    with pytest.raises(UnreachableError):
        run(get(client(max_retries=5, retry_budget=100.0)))
    assert len(_no_sleep) == 5
    for attempt, delay in enumerate(_no_sleep):
        assert 0.0 <= delay <= 0.25 * 2 ** attempt


def test_retries_stop_within_the_time_budget() -> None:
    calls = 0

    async def slow(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        raise httpx.ReadTimeout("no answer", request=request)

    transport = httpx.MockTransport(slow)
    api = client(transport=transport, retry_budget=0.0, max_retries=5)
    with pytest.raises(UnreachableError):
        run(get(api))
    assert calls == 1


@respx.mock
def test_429_halves_concurrency_and_success_brings_it_back() -> None:
    respx.get(ARTICLES).mock(side_effect=[httpx.Response(429, headers={"Retry-After": "0"}),
                                          httpx.Response(200, json={})])
    api = client(concurrency=8)

    async def scenario() -> tuple[int, int]:
        async with api:
            await api.get_json("v2", f"/workspaces/{WS}/articles")
            after = api.concurrency
            respx.get(ARTICLES).respond(200, json={})
            for _ in range(40):
                await api.get_json("v2", f"/workspaces/{WS}/articles")
            return after, api.concurrency

    after, recovered = run(scenario())
    assert after == 4
    assert recovered == 8


def test_adaptive_limit_never_goes_below_one() -> None:
    limit = AdaptiveLimit(3)
    for _ in range(5):
        limit.throttle()
    assert limit.limit == 1
    limit.succeeded()
    assert limit.limit == 2


def test_adaptive_limit_hands_slots_over_in_order_and_survives_cancellation() -> None:
    """A freed slot goes to the longest waiter; a cancelled waiter never keeps one."""
    order: list[int] = []

    async def scenario() -> tuple[int, int]:
        limit = AdaptiveLimit(1)
        gate = asyncio.Event()

        async def user(n: int) -> None:
            async with limit:
                order.append(n)
                await gate.wait()

        first = asyncio.ensure_future(user(0))
        await asyncio.sleep(0)
        waiting = [asyncio.ensure_future(user(n)) for n in (1, 2, 3)]
        await asyncio.sleep(0)
        waiting[0].cancel()  # cancelled while waiting: skipped
        await asyncio.sleep(0)
        gate.set()
        await first
        await asyncio.gather(*waiting[1:])
        # Handed a slot, then cancelled before it ran: the slot comes back.
        async with limit:
            late = asyncio.ensure_future(user(4))
            await asyncio.sleep(0)
        late.cancel()
        await asyncio.gather(late, return_exceptions=True)
        return limit.active, len(limit._waiters)

    active, waiters = run(scenario())
    assert order == [0, 2, 3]
    assert (active, waiters) == (0, 0)


def test_adaptive_limit_serves_a_retry_before_requests_not_yet_tried() -> None:
    """A retry's budget runs from its first attempt: it must not queue behind a sync."""
    order: list[str] = []

    async def scenario() -> None:
        limit = AdaptiveLimit(1)
        gate = asyncio.Event()

        async def user(name: str, retry: bool) -> None:
            async with limit.slot(retry=retry):
                order.append(name)
                await gate.wait()

        first = asyncio.ensure_future(user("first", False))
        await asyncio.sleep(0)
        fresh = [asyncio.ensure_future(user(f"fresh {n}", False)) for n in (1, 2)]
        await asyncio.sleep(0)
        retry = asyncio.ensure_future(user("retry", True))
        await asyncio.sleep(0)
        gate.set()
        await asyncio.gather(first, *fresh, retry)

    run(scenario())
    assert order == ["first", "retry", "fresh 1", "fresh 2"]


def test_adaptive_limit_growing_back_lets_waiters_in() -> None:
    async def scenario() -> int:
        limit = AdaptiveLimit(2)
        limit.throttle()  # 1 slot
        await limit.__aenter__()
        second = asyncio.ensure_future(limit.__aenter__())
        await asyncio.sleep(0)
        assert not second.done()
        limit.succeeded()  # a full round at 1: back to 2, the waiter gets in
        await asyncio.sleep(0)
        assert second.done()
        return limit.active

    assert run(scenario()) == 2


def test_concurrency_is_bounded() -> None:
    active = peak = 0

    async def handler(request: httpx.Request) -> httpx.Response:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.01)
        active -= 1
        return httpx.Response(200, json={})

    api = client(transport=httpx.MockTransport(handler), concurrency=3)

    async def scenario() -> None:
        async with api:
            await asyncio.gather(*(api.get_json("v2", "/x") for _ in range(20)))

    run(scenario())
    assert peak == 3


@respx.mock
def test_max_calls_stops_before_the_next_call() -> None:
    route = respx.get(ARTICLES).respond(json={})
    ledger = CallLedger()
    api = client(ledger=ledger, max_calls=2)

    async def scenario() -> None:
        async with api:
            for _ in range(3):
                await api.get_json("v2", f"/workspaces/{WS}/articles")

    with pytest.raises(QuotaError) as caught:
        run(scenario())
    assert route.call_count == 2 and ledger.total == 2
    assert "--max-calls 2 reached" in str(caught.value)


@respx.mock
def test_put_and_post_send_json() -> None:
    put = respx.put(f"{BASE}/api/v2/workspaces/{WS}/digest").respond(json={"digest": {}})
    post = respx.post(f"{BASE}/api/v2/workspaces/{WS}/analytics").respond(
        201, json={"analytics": {"inserted": True}})

    async def scenario() -> dict[str, Any]:
        async with client() as api:
            await api.put_json("v2", f"/workspaces/{WS}/digest", {"enabled": True})
            return await api.post_json("v2", f"/workspaces/{WS}/analytics", {"visitorId": "abcdef"})

    assert run(scenario()) == {"analytics": {"inserted": True}}
    assert json.loads(put.calls.last.request.content) == {"enabled": True}
    assert post.calls.last.request.headers["content-type"] == "application/json"


@respx.mock
def test_the_key_never_leaks_on_any_path(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    echo = {"error": "Bad", "details": f"key {KEY} is malformed"}
    outcomes = [
        httpx.Response(400, json=echo), httpx.Response(401, json=echo),
        httpx.Response(402, json=echo), httpx.Response(403, json=echo),
        httpx.Response(404, json=echo), httpx.Response(500, json=echo),
        httpx.Response(200, text=f"<html>{KEY}</html>"),
        httpx.ConnectError(f"cannot connect {KEY}"), httpx.ReadTimeout(KEY),
    ]
    messages: list[str] = []
    for outcome in outcomes:
        respx.get(ARTICLES).mock(side_effect=lambda request, o=outcome: _raise_or(o))
        ledger = CallLedger()
        api = client(ledger=ledger, max_retries=1)
        messages.append(repr(api))
        with pytest.raises(ApiError) as caught:
            run(get(api))
        messages += [str(caught.value), repr(caught.value), json.dumps(ledger.to_report()),
                     repr(ledger)]
    assert len(messages) > 20
    for text in [*messages, caplog.text]:
        assert KEY not in text


def _raise_or(outcome: httpx.Response | Exception) -> httpx.Response:
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


def test_a_same_origin_redirect_is_followed_with_the_key_each_time() -> None:
    paths: list[str] = []
    keys: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        paths.append(request.url.path)
        keys.append(request.headers.get("x-api-key", ""))
        if request.url.path.startswith("/old"):
            return httpx.Response(301, headers={"location": f"{BASE}/new{request.url.path}"})
        return httpx.Response(200, json={"path": request.url.path})

    ledger = CallLedger()

    async def go() -> list[dict[str, Any]]:
        async with ApiClient(f"{BASE}/old", KEY, transport=httpx.MockTransport(handler),
                             ledger=ledger) as api:
            return [await api.get_json("v2", "/a"), await api.get_json("v2", "/b")]

    first, second = run(go())
    assert first == {"path": "/new/old/api/v2/a"} and second == {"path": "/new/old/api/v2/b"}
    assert paths == ["/old/api/v2/a", "/new/old/api/v2/a", "/old/api/v2/b", "/new/old/api/v2/b"]
    assert keys == [KEY] * 4  # the same origin: the key goes with the redirected request
    # every request the service saw counts against the quota, redirect answers included
    assert ledger.total == len(paths) == 4
    assert sorted(record.status for record in ledger.records) == [200, 200, 301, 301]


@pytest.mark.parametrize(("variable", "direct"), [(None, True), ("HTTPS_PROXY", False),
                                                  ("http_proxy", False), ("ALL_PROXY", False)])
def test_requests_skip_the_full_client_only_without_a_proxy(
        monkeypatch: pytest.MonkeyPatch, variable: str | None, direct: bool) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                 "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    if variable is not None:
        monkeypatch.setenv(variable, "http://proxy.test:3128")
    api = client(transport=httpx.MockTransport(lambda request: httpx.Response(200, json={})))
    assert api._direct is direct  # noqa: SLF001
    run(api.aclose())
