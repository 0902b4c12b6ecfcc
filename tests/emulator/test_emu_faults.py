"""Simulated trouble: programmed faults, rate limits, quota, missing v2, latency, CORS, counts."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sitegen.emulator import Faults
from sitegen.emulator import app as app_module

pytestmark = pytest.mark.anyio

ARTICLES_V2 = "GET /api/v2/workspaces/{workspaceId}/articles"


async def test_fail_next_three_429s_then_success(client: Any, ns: Any) -> None:
    client.emulator.faults.fail_next(429, count=3)
    statuses = []
    for _ in range(4):
        response = await client.get(f"{ns.BASE2}/articles", headers=ns.V2)
        statuses.append(response.status_code)
        if response.status_code == 429:
            assert response.headers["retry-after"].isdigit()
    assert statuses == [429, 429, 429, 200]
    assert client.emulator.calls[ARTICLES_V2] == 4


async def test_fail_next_path_filter_and_raw_bodies(client: Any, ns: Any) -> None:
    faults = client.emulator.faults
    faults.fail_next(200, path_contains="/digest", body=b"<html>login</html>",
                     content_type="text/html")
    faults.fail_next(200, path_contains="/clusters", body=b'{"clusters": [')
    faults.fail_next(503, path_contains="/agents")
    assert (await client.get(f"{ns.BASE2}/articles", headers=ns.V2)).status_code == 200
    html = await client.get(f"{ns.BASE2}/digest", headers=ns.V2)
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    assert html.text == "<html>login</html>"
    broken = await client.get(f"{ns.BASE2}/clusters", headers=ns.V2)
    assert broken.content == b'{"clusters": ['
    unavailable = await client.get(f"{ns.BASE2}/agents", headers=ns.V2)
    assert unavailable.status_code == 503
    assert unavailable.json()["error"] == "Service Unavailable"
    assert faults.queue == []
    assert (await client.get(f"{ns.BASE2}/agents", headers=ns.V2)).status_code == 200


async def test_fail_next_402_mid_sync_has_quota_phrase(client: Any, ns: Any) -> None:
    assert (await client.get(f"{ns.BASE2}/articles", headers=ns.V2)).status_code == 200
    client.emulator.faults.fail_next(402)
    response = await client.get(f"{ns.BASE2}/articles/65f0b0000000000000000001", headers=ns.V2)
    assert response.status_code == 402
    assert "API access quota exceeded" in response.text


async def test_rate_limit_every_nth(make_client: Any, data: dict[str, Any], ns: Any) -> None:
    async with make_client(data, faults=Faults(rate_limit_every=3, retry_after_s=2)) as client:
        responses = [await client.get(f"{ns.BASE2}/agents", headers=ns.V2) for _ in range(6)]
    assert [r.status_code for r in responses] == [200, 200, 429, 200, 200, 429]
    assert responses[2].headers["retry-after"] == "2"
    assert [r.headers["x-ratelimit-remaining"] for r in responses] == ["1", "0", "0"] * 2
    assert all(r.headers["x-ratelimit-limit"] == "3" for r in responses)
    assert all(r.headers["x-ratelimit-reset"].isdigit() for r in responses)


async def test_quota_then_402_in_both_versions(make_client: Any, data: dict[str, Any],
                                               ns: Any) -> None:
    async with make_client(data, faults=Faults(quota=2)) as client:
        assert (await client.get("/api/v1/agents", headers=ns.V1)).status_code == 200
        assert (await client.get(f"{ns.BASE2}/agents", headers=ns.V2)).status_code == 200
        v1 = await client.get("/api/v1/agents", headers=ns.V1)
        v2 = await client.get(f"{ns.BASE2}/agents", headers=ns.V2)
    assert v1.status_code == v2.status_code == 402
    assert v1.json()["error"] == "API access quota exceeded"
    assert "quota" in v2.json()["details"]


async def test_no_v2(make_client: Any, data: dict[str, Any], ns: Any) -> None:
    async with make_client(data, faults=Faults(no_v2=True)) as client:
        for path in ("", "/articles", "/digest"):
            response = await client.get(ns.BASE2 + path, headers=ns.V2)
            assert response.status_code == 404
        assert (await client.get("/api/v1/articles", headers=ns.V1)).status_code == 200
        assert client.emulator.calls["GET /api/v2/workspaces/{workspaceId}"] == 1


async def test_fail_rate_is_seeded(make_client: Any, data: dict[str, Any], ns: Any) -> None:
    async def run(seed: int) -> list[int]:
        async with make_client(data, faults=Faults(fail_rate=0.5, seed=seed)) as client:
            return [(await client.get("/api/v1/agents", headers=ns.V1)).status_code
                    for _ in range(30)]

    first, again, other = await run(7), await run(7), await run(8)
    assert first == again
    assert first != other
    assert set(first) == {200, 500}


async def test_latency_uses_asyncio_sleep_and_overlaps(
        make_client: Any, data: dict[str, Any], ns: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Five concurrent requests must all be waiting at once (no timing assertions)."""
    waiting = 0
    peak = 0
    all_in = asyncio.Event()
    delays: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        nonlocal waiting, peak
        delays.append(seconds)
        waiting += 1
        peak = max(peak, waiting)
        if waiting == 5:
            all_in.set()
        await asyncio.wait_for(all_in.wait(), timeout=5)
        waiting -= 1

    monkeypatch.setattr(app_module.asyncio, "sleep", fake_sleep)
    async with make_client(data, faults=Faults(latency_ms=250)) as client:
        responses = await asyncio.gather(*(
            client.get(f"{ns.BASE2}/articles", headers=ns.V2) for _ in range(5)))
    assert [r.status_code for r in responses] == [200] * 5
    assert peak == 5
    assert delays == [0.25] * 5


async def test_faults_mutable_at_run_time(client: Any, ns: Any) -> None:
    assert (await client.get("/api/v1/agents", headers=ns.V1)).status_code == 200
    client.emulator.faults.no_v2 = True
    assert (await client.get(ns.BASE2, headers=ns.V2)).status_code == 404
    client.emulator.faults = Faults(quota=0)
    assert (await client.get("/api/v1/agents", headers=ns.V1)).status_code == 402


async def test_cors_on_every_response(client: Any, ns: Any) -> None:
    v1_ok = await client.get("/api/v1/agents", headers=ns.V1)
    v1_err = await client.get("/api/v1/agents")
    v2_err = await client.get(f"{ns.BASE2}/articles/bad", headers=ns.V2)
    for response in (v1_ok, v1_err):
        assert response.headers["access-control-allow-origin"] == "*"
        assert response.headers["access-control-allow-methods"] == "GET, OPTIONS"
        assert "x-api-key" in response.headers["access-control-allow-headers"]
    assert v2_err.headers["access-control-allow-methods"] == "GET, POST, PUT, OPTIONS"
    assert "x-ratelimit-limit" in v2_err.headers
    assert "x-ratelimit-limit" not in v1_ok.headers
    preflight = await client.options("/api/v1/articles/anything/at/all")
    assert preflight.status_code == 204 and preflight.content == b""
    assert preflight.headers["access-control-allow-methods"] == "GET, OPTIONS"


async def test_calls_counted_per_route_template(client: Any, ns: Any) -> None:
    await client.get(f"{ns.BASE2}/articles/65f0b0000000000000000001", headers=ns.V2)
    await client.get(f"{ns.BASE2}/articles/65f0b0000000000000000002", headers=ns.V2)
    await client.get(f"{ns.BASE2}/articles/65f0b0000000000000000002")  # 401 still counts
    await client.get("/api/v1/articles", headers=ns.V1)
    await client.options(f"{ns.BASE2}/analytics")
    calls = client.emulator.calls
    assert calls["GET /api/v2/workspaces/{workspaceId}/articles/{articleId}"] == 3
    assert calls["GET /api/v1/articles"] == 1
    assert calls["OPTIONS /api/v2/workspaces/{workspaceId}/analytics"] == 1
    assert client.emulator.requests == 4  # preflights are not API calls


def test_fail_next_validates_arguments() -> None:
    faults = Faults()
    with pytest.raises(ValueError):
        faults.fail_next(429, count=0)
    with pytest.raises(ValueError):
        faults.fail_next(42)
