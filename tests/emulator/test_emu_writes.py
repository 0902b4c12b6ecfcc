"""Digest settings (GET / PUT) and analytics events (POST) of the emulated v2."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.anyio

GOOD_DIGEST = {"enabled": True, "frequency": "daily", "subject": "Daily notes",
               "senderName": "Acme", "replyTo": "editor@example.com"}
EVENT = {"visitorId": "v-123456", "articleId": "65f0b0000000000000000001",
         "page": {"type": "article", "path": "/article-1/", "host": "notes.acme.test",
                  "siteSlug": "acme", "articleSlug": "article-1"},
         "utm": {"utm_source": "news"}, "client": {"screen": "1280x720", "language": "en"},
         "landingUrl": "https://notes.acme.test/article-1/?utm_source=news"}


async def test_get_digest(client: Any, ns: Any, data: dict[str, Any]) -> None:
    response = await client.get(f"{ns.BASE2}/digest", headers=ns.V2)
    assert response.status_code == 200
    assert response.json() == {"digest": data["digest"]}


async def test_put_digest_stores_and_advances_updated_at(client: Any, ns: Any) -> None:
    before = (await client.get(f"{ns.BASE2}/digest", headers=ns.V2)).json()["digest"]
    response = await client.put(f"{ns.BASE2}/digest", headers=ns.V2, json=GOOD_DIGEST)
    assert response.status_code == 200
    digest = response.json()["digest"]
    assert {k: digest[k] for k in GOOD_DIGEST} == GOOD_DIGEST
    assert digest["updatedAt"] > before["updatedAt"]
    assert digest["createdAt"] == before["createdAt"]
    assert digest["updatedAt"].endswith("Z") and len(digest["updatedAt"]) == 24
    again = (await client.get(f"{ns.BASE2}/digest", headers=ns.V2)).json()["digest"]
    assert again == digest == client.emulator.digest
    second = (await client.put(f"{ns.BASE2}/digest", headers=ns.V2, json=GOOD_DIGEST)).json()
    assert second["digest"]["updatedAt"] > digest["updatedAt"]


@pytest.mark.parametrize("change", [
    {"frequency": "hourly"}, {"subject": ""}, {"subject": "x" * 181},
    {"senderName": "y" * 121}, {"previewText": "p" * 281}, {"replyTo": "not-an-email"},
    {"enabled": None}, {"unexpected": 1},
])
async def test_put_digest_bounds(client: Any, ns: Any, change: dict[str, Any]) -> None:
    body = {**GOOD_DIGEST, **change}
    response = await client.put(f"{ns.BASE2}/digest", headers=ns.V2, json=body)
    assert response.status_code == 400
    assert response.json()["error"] == "Invalid request body"
    assert client.emulator.digest["frequency"] == "weekly"  # unchanged


async def test_put_digest_missing_required(client: Any, ns: Any) -> None:
    body = {k: v for k, v in GOOD_DIGEST.items() if k != "senderName"}
    response = await client.put(f"{ns.BASE2}/digest", headers=ns.V2, json=body)
    assert response.status_code == 400
    assert "senderName" in response.json()["details"]


async def test_put_digest_invalid_json_and_content_type(client: Any, ns: Any) -> None:
    headers = {**ns.V2, "content-type": "application/json"}
    broken = await client.put(f"{ns.BASE2}/digest", headers=headers, content=b"{nope")
    assert broken.status_code == 400
    assert broken.json()["error"] == "Invalid JSON body"
    not_object = await client.put(f"{ns.BASE2}/digest", headers=headers, content=b"[1]")
    assert not_object.json()["error"] == "Invalid request body"
    text = await client.put(f"{ns.BASE2}/digest", headers={**ns.V2, "content-type": "text/plain"},
                            content=b'{"enabled": true}')
    assert text.status_code == 400
    assert "Content-Type" in text.json()["details"]


async def test_analytics_accepts_and_records(client: Any, ns: Any) -> None:
    response = await client.post(f"{ns.BASE2}/analytics", headers=ns.V2, json=EVENT)
    assert response.status_code == 201
    assert response.json() == {"analytics": {"inserted": True}}
    minimal = {"visitorId": "abcdef"}
    assert (await client.post(f"{ns.BASE2}/analytics", headers=ns.V2,
                              json=minimal)).status_code == 201
    assert client.emulator.analytics_events == [EVENT, minimal]


@pytest.mark.parametrize("change", [
    {"visitorId": "short"}, {"visitorId": "v" * 129}, {"articleId": "123"},
    {"agentId": "zz"}, {"page": {"type": "homepage"}}, {"page": {"colour": "red"}},
    {"landingUrl": "u" * 2001}, {"visitorId": None},
])
async def test_analytics_bounds(client: Any, ns: Any, change: dict[str, Any]) -> None:
    response = await client.post(f"{ns.BASE2}/analytics", headers=ns.V2,
                                 json={**EVENT, **change})
    assert response.status_code == 400
    assert response.json()["error"] == "Invalid request body"
    assert client.emulator.analytics_events == []


async def test_analytics_needs_json(client: Any, ns: Any) -> None:
    plain = await client.post(f"{ns.BASE2}/analytics",
                              headers={**ns.V2, "content-type": "text/plain"}, content=b"{}")
    assert plain.status_code == 400
    broken = await client.post(f"{ns.BASE2}/analytics",
                               headers={**ns.V2, "content-type": "application/json"},
                               content=b'{"visitorId": ')
    assert broken.json()["error"] == "Invalid JSON body"


async def test_analytics_preflight_allows_beacon_headers(client: Any, ns: Any) -> None:
    response = await client.options(f"{ns.BASE2}/analytics", headers={
        "Origin": "https://notes.acme.test", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "x-api-key, content-type"})
    assert response.status_code == 204
    allowed = {h.strip().lower()
               for h in response.headers["access-control-allow-headers"].split(",")}
    assert {"x-api-key", "content-type"} <= allowed
    assert "POST" in response.headers["access-control-allow-methods"]
    assert response.headers["access-control-allow-origin"] == "*"
    assert client.emulator.analytics_events == []


async def test_digest_missing_then_created(make_client: Any, data: dict[str, Any],
                                           ns: Any) -> None:
    del data["digest"]
    async with make_client(data) as client:
        assert (await client.get(f"{ns.BASE2}/digest", headers=ns.V2)).status_code == 404
        created = await client.put(f"{ns.BASE2}/digest", headers=ns.V2, json=GOOD_DIGEST)
        assert created.status_code == 200
        digest = created.json()["digest"]
        assert digest["workspaceId"] == ns.WS and digest["createdAt"] == digest["updatedAt"]


def test_later_than_is_strictly_later_within_the_same_millisecond(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from datetime import UTC, datetime

    from sitegen.emulator import state

    moments = iter([datetime(2026, 1, 1, 12, 0, 0, 123_100, tzinfo=UTC),
                    datetime(2026, 1, 1, 12, 0, 0, 123_900, tzinfo=UTC)])

    class Clock(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> datetime:  # type: ignore[override]
            return next(moments)

    monkeypatch.setattr(state, "datetime", Clock)
    first = state.later_than(None)
    second = state.later_than(first)
    assert first == "2026-01-01T12:00:00.123Z"
    assert second == "2026-01-01T12:00:00.124Z"


@pytest.mark.parametrize("number", [b"NaN", b"1e400", b"-Infinity"])
async def test_a_number_json_cannot_say_back_is_a_400(client: Any, ns: Any,
                                                      number: bytes) -> None:
    headers = {**ns.V2, "content-type": "application/json"}
    before = await client.get(f"{ns.BASE2}/digest", headers=ns.V2)
    body = b'{"enabled": true, "frequency": "daily", "subject": "S", "senderName": "A", ' \
           b'"replyTo": "e@example.com", "extra": ' + number + b"}"
    answer = await client.put(f"{ns.BASE2}/digest", headers=headers, content=body)
    assert answer.status_code == 400 and answer.json()["error"] == "Invalid JSON body"
    assert "cannot carry" in answer.json()["details"]
    after = await client.get(f"{ns.BASE2}/digest", headers=ns.V2)
    assert after.status_code == 200 and after.json() == before.json()
    event = await client.post(f"{ns.BASE2}/analytics", headers=headers,
                              content=b'{"visitorId": "v-123456", "x": ' + number + b"}")
    assert event.status_code == 400
