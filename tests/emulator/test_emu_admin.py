"""The admin routes' rules: loopback only, no web page, 422 for a bad body, 404 for an unknown
id, `updatedAt` always later, no quota spent, nothing under the API prefixes.

httpx's `ASGITransport` sets the client address the app sees (as Starlette's `TestClient`
would), so a request from another machine is made as the app sees one, without leaving
loopback.
"""

from __future__ import annotations

import copy
from typing import Any

import httpx
import pytest

from sitegen.emulator import Faults, create_app
from sitegen.emulator.admin import is_loopback
from tests.emulator.conftest import TINY, WS

ARTICLE = "65f0b0000000000000000001"


pytestmark = pytest.mark.anyio


def _client(address: str = "127.0.0.1", data: dict[str, Any] | None = None,
            **options: Any) -> httpx.AsyncClient:
    app = create_app(copy.deepcopy(data or TINY), **options)
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app, client=(address, 50123)),
                               base_url="http://127.0.0.1:8765")
    client.app = app  # type: ignore[attr-defined]
    return client


@pytest.mark.parametrize("address", ["203.0.113.7", "192.168.1.20", "10.0.0.3", "::2",
                                     "2001:db8::1", "testclient", ""])
async def test_a_client_on_another_machine_is_refused(address: str) -> None:
    client = _client(address)
    answers = [await client.patch(f"/__admin/articles/{ARTICLE}", json={"title": "Taken"}),
               await client.post("/__admin/articles", json={"title": "Planted"}),
               await client.delete(f"/__admin/articles/{ARTICLE}")]
    assert [answer.status_code for answer in answers] == [403, 403, 403]
    assert "only clients on this machine" in answers[0].json()["details"]
    state = client.app.state.emulator  # type: ignore[attr-defined]
    assert state.find("articles", ARTICLE)["title"] == "Article 1"
    assert len(state.records("articles")) == len(TINY["articles"])


@pytest.mark.parametrize("address", ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"])
async def test_loopback_clients_are_served(address: str) -> None:
    client = _client(address)
    response = await client.patch(f"/__admin/articles/{ARTICLE}", json={"title": "New"})
    assert response.status_code == 200 and response.json()["title"] == "New"
    assert is_loopback(address)


async def test_a_web_page_is_refused_and_gets_no_cors() -> None:
    client = _client()
    answer = await client.patch(f"/__admin/articles/{ARTICLE}", json={"title": "x"},
                                headers={"origin": "http://evil.test"})
    assert answer.status_code == 403 and "Origin" in answer.json()["details"]
    assert "access-control-allow-origin" not in answer.headers
    preflight = await client.options(f"/__admin/articles/{ARTICLE}", headers={
        "origin": "http://evil.test", "access-control-request-method": "PATCH"})
    assert preflight.status_code == 405
    assert "access-control-allow-origin" not in preflight.headers


@pytest.mark.parametrize(("body", "words"), [
    (b"{not json", "JSON object"), (b"[1, 2]", "JSON object"), (b"", "JSON object"),
    (b'"title"', "JSON object"), (b'{"title": 3}', "'title' must be a string"),
    (b'{"tags": "python"}', "'tags' must be a list of strings"),
    (b'{"tags": [1]}', "'tags' must be a list of strings"),
    (b'{"status": "live"}', "'status' must be one of draft, published or archived"),
    (b'{"blocks": [{"content": "no type"}]}', "'blocks' must be a list of block objects"),
    (b'{"clusterId": 5}', "'clusterId' must be a string or null"),
    (b'{"meta": []}', "'meta' must be an object"),
    (b'{"updatedAt": "2030-01-01T00:00:00.000Z"}', "'updatedAt' is set by the service"),
    (b'{"id": "65f0b0000000000000000099"}', "'id' is set by the service"),
])
async def test_a_bad_patch_body_is_a_422_in_one_sentence(body: bytes, words: str) -> None:
    client = _client()
    answer = await client.patch(f"/__admin/articles/{ARTICLE}", content=body,
                                headers={"content-type": "application/json"})
    assert answer.status_code == 422
    details = answer.json()["details"]
    assert words in details and details.count(". ") == 0 and details.endswith(".")
    state = client.app.state.emulator  # type: ignore[attr-defined]
    assert state.find("articles", ARTICLE) == TINY["articles"][0]


async def test_a_bad_post_body_is_a_422_and_an_existing_id_a_409() -> None:
    client = _client()
    for body in ({"id": "short"}, {"createdAt": "yesterday"}, {"tags": None}):
        assert (await client.post("/__admin/articles", json=body)).status_code == 422
    taken = await client.post("/__admin/articles", json={"id": ARTICLE, "title": "Again"})
    assert taken.status_code == 409 and "PATCH" in taken.json()["details"]


async def test_unknown_ids_are_404() -> None:
    client = _client()
    missing = "65f0b00000000000000000ff"
    assert (await client.patch(f"/__admin/articles/{missing}", json={})).status_code == 404
    assert (await client.delete(f"/__admin/articles/{missing}")).status_code == 404
    assert (await client.delete("/__admin/articles/not-an-id")).status_code == 404


async def test_each_change_moves_updated_at_past_every_article_even_in_data_dated_later(
) -> None:
    future = copy.deepcopy(TINY)
    future["articles"][5]["updatedAt"] = "2999-01-01T00:00:00.000Z"
    client = _client(data=future)
    first = (await client.patch(f"/__admin/articles/{ARTICLE}", json={"title": "One"})).json()
    second = (await client.patch(f"/__admin/articles/{ARTICLE}", json={"title": "Two"})).json()
    assert "2999-01-01T00:00:00.000Z" < first["updatedAt"] < second["updatedAt"]
    assert first["createdAt"] == TINY["articles"][0]["createdAt"]
    made = (await client.post("/__admin/articles", json={"title": "Made"})).json()
    assert made["updatedAt"] > second["updatedAt"]


async def test_a_post_fills_what_the_service_would() -> None:
    client = _client()
    made = await client.post("/__admin/articles", json={"title": "Article 1", "content": "Hi"})
    assert made.status_code == 201
    record = made.json()
    assert record["slug"] == "article-1-2"  # "article-1" is taken
    assert record["status"] == "draft" and record["workspaceId"] == WS
    assert len(record["id"]) == 24 and record["createdAt"] == record["updatedAt"]
    kept = (await client.post("/__admin/articles", json={"title": "X", "slug": "mine",
                                                         "status": "published"})).json()
    assert kept["slug"] == "mine" and kept["status"] == "published"
    listed = await client.get(f"/api/v2/workspaces/{WS}/articles/{record['id']}",
                              headers={"x-api-key": "k"})
    assert listed.status_code == 200 and listed.json()["article"]["content"] == "Hi"


async def test_admin_requests_spend_no_quota_and_live_outside_the_api() -> None:
    client = _client(faults=Faults(quota=0))
    changed = await client.patch(f"/__admin/articles/{ARTICLE}", json={"title": "T"})
    assert changed.status_code == 200
    assert client.app.state.emulator.requests == 0  # type: ignore[attr-defined]
    refused = await client.get(f"/api/v2/workspaces/{WS}/agents", headers={"x-api-key": "k"})
    assert refused.status_code == 402
    for prefix in ("/api/v1", f"/api/v2/workspaces/{WS}"):
        answer = await client.patch(f"{prefix}/__admin/articles/{ARTICLE}", json={"title": "T"})
        assert answer.status_code in (404, 405)


@pytest.mark.parametrize("body", [
    b'{"meta": {"score": NaN}}', b'{"meta": {"score": 1e400}}', b'{"meta": {"x": -1e400}}',
    b'{"title": "T", "rating": Infinity}', b'{"meta": {"x": [-Infinity]}}'])
async def test_a_number_json_cannot_say_back_is_a_422_and_changes_nothing(body: bytes) -> None:
    client = _client()
    headers = {"content-type": "application/json"}
    article = f"/api/v2/workspaces/{WS}/articles/{ARTICLE}"
    changed = await client.patch(f"/__admin/articles/{ARTICLE}", content=body, headers=headers)
    made = await client.post("/__admin/articles", content=body, headers=headers)
    for answer in (changed, made):
        assert answer.status_code == 422, answer.text
        details = answer.json()["details"]
        assert "cannot carry" in details and details.endswith(".") and ". " not in details
    state = client.app.state.emulator  # type: ignore[attr-defined]
    assert state.find("articles", ARTICLE) == TINY["articles"][0]
    assert len(state.records("articles")) == len(TINY["articles"])
    for _ in range(2):  # (and the article is still served, again and again)
        served = await client.get(article, headers={"x-api-key": "k"})
        assert served.status_code == 200 and served.json()["article"]["title"] == "Article 1"
    fine = await client.patch(f"/__admin/articles/{ARTICLE}", json={"meta": {"score": 1.5}})
    assert fine.status_code == 200 and fine.json()["meta"]["score"] == 1.5


async def test_a_time_with_no_millisecond_after_it_is_a_422_and_later_changes_still_work(
) -> None:
    client = _client()
    late = await client.post("/__admin/articles", json={
        "title": "Late", "updatedAt": "9999-12-31T23:59:59.999Z"})
    assert late.status_code == 422 and "'updatedAt' must be" in late.json()["details"]
    for _ in range(2):
        changed = await client.patch(f"/__admin/articles/{ARTICLE}", json={"title": "Next"})
        assert changed.status_code == 200
