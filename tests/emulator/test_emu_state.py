"""Mutation helpers: the service changing between two syncs, seen through both APIs."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from sitegen.emulator import create_app

pytestmark = pytest.mark.anyio

A1 = "65f0b0000000000000000001"


async def test_update_article_bumps_updated_at(client: Any, ns: Any) -> None:
    before = (await client.get(f"{ns.BASE2}/articles/{A1}", headers=ns.V2)).json()["article"]
    client.emulator.update_article(A1, title="Renamed", status="draft")
    after = (await client.get(f"{ns.BASE2}/articles/{A1}", headers=ns.V2)).json()["article"]
    assert after["title"] == "Renamed" and after["status"] == "draft"
    assert after["updatedAt"] > before["updatedAt"]
    published = (await client.get("/api/v1/articles?status=published",
                                  headers=ns.V1)).json()["data"]
    assert A1 not in {a["id"] for a in published}


async def test_update_article_keeps_explicit_updated_at(client: Any, ns: Any) -> None:
    client.emulator.update_article(A1, updatedAt="2030-01-01T00:00:00.000Z")
    article = (await client.get(f"/api/v1/articles/{A1}", headers=ns.V1)).json()["article"]
    assert article["updatedAt"] == "2030-01-01T00:00:00.000Z"


async def test_updated_at_moves_past_future_stamps(client: Any, ns: Any) -> None:
    client.emulator.update_article(A1, updatedAt="2999-12-31T23:59:59.999Z")
    client.emulator.update_article(A1, title="Later")
    article = client.emulator.find("articles", A1)
    assert article["updatedAt"] == "3000-01-01T00:00:00.000Z"


async def test_delete_and_add_article(client: Any, ns: Any) -> None:
    client.emulator.delete_article(A1)
    assert (await client.get(f"{ns.BASE2}/articles/{A1}", headers=ns.V2)).status_code == 404
    record = copy.deepcopy(client.emulator.find("articles", "65f0b0000000000000000002"))
    record.update(id="65f0b00000000000000000ff", slug="brand-new")
    del record["workspaceId"]
    client.emulator.add_article(record)
    listed = (await client.get(f"{ns.BASE2}/articles?slug=brand-new", headers=ns.V2)).json()
    assert [a["id"] for a in listed["articles"]] == ["65f0b00000000000000000ff"]
    assert listed["articles"][0]["workspaceId"] == ns.WS
    with pytest.raises(ValueError):
        client.emulator.add_article(record)
    with pytest.raises(KeyError):
        client.emulator.delete_article(A1)
    with pytest.raises(KeyError):
        client.emulator.update_article("0" * 24, title="x")


def test_app_copies_its_data(data: dict[str, Any]) -> None:
    app = create_app(data)
    app.state.emulator.update_article(A1, title="Changed")
    assert data["articles"][0]["title"] == "Article 1"


def test_rejects_data_without_workspace() -> None:
    with pytest.raises(ValueError):
        create_app({"articles": []})


async def test_tolerates_defective_records(make_client: Any, data: dict[str, Any],
                                           ns: Any) -> None:
    """Records the client must repair are served as stored: no crash on odd types."""
    data["articles"].append({"id": "65f0b00000000000000000ee", "title": 42, "tags": "a, b",
                             "createdAt": None, "status": "published"})
    data["articles"].append({"title": "No id at all", "status": "published"})
    data["articles"].append("not a record")
    async with make_client(data) as client:
        for sort in ("title", "createdAt", "status"):
            response = await client.get(f"{ns.BASE2}/articles?sortBy={sort}&tags=a",
                                        headers=ns.V2)
            assert response.status_code == 200
            assert [a.get("title") for a in response.json()["articles"]] == [42]
        everything = await client.get("/api/v1/articles?limit=100", headers=ns.V1)
        assert everything.json()["pagination"]["totalCount"] == 8
        assert "No id at all" in everything.text


def test_find_follows_records_moved_replaced_or_duplicated() -> None:
    from sitegen.emulator.state import EmulatorState

    ids = [f"65f0b00000000000000000{n:02x}" for n in range(6)]
    articles = [{"id": i, "n": n} for n, i in enumerate(ids)] + [{"id": ids[4], "n": 40}]
    state = EmulatorState({"workspace": {"id": "65f0a0000000000000000001"},
                           "articles": articles})
    assert state.find("articles", ids[4]) == {"id": ids[4], "n": 4}  # the first of two
    assert state.find("articles", ids[3]) == {"id": ids[3], "n": 3}
    state.delete_article(ids[0])  # every later record moves one place up
    assert state.find("articles", ids[3]) == {"id": ids[3], "n": 3}
    assert state.find("articles", ids[0]) is None
    state.records("articles")[1] = {"id": "65f0b00000000000000000ff", "n": 255}
    assert state.find("articles", ids[2]) is None
    assert state.find("articles", "65f0b00000000000000000ff") == {
        "id": "65f0b00000000000000000ff", "n": 255}
    state.add_article({"id": ids[0], "n": 0})
    assert state.find("articles", ids[0]) == {"id": ids[0], "n": 0,
                                              "workspaceId": "65f0a0000000000000000001"}


async def test_cached_listings_follow_every_mutation(client: Any, ns: Any) -> None:
    url = f"{ns.BASE2}/articles?status=published&sortBy=createdAt&sortOrder=asc&limit=100"

    async def listed() -> list[str]:
        answer = (await client.get(url, headers=ns.V2)).json()
        return [a["id"] for a in answer["articles"]]

    before = await listed()
    assert A1 in before and await listed() == before  # the second page comes from the cache
    client.emulator.update_article(A1, status="draft")
    assert A1 not in await listed()
    client.emulator.update_article(A1, status="published")
    assert await listed() == before
    client.emulator.delete_article(A1)
    assert A1 not in await listed()
    record = copy.deepcopy(client.emulator.find("articles", before[-1]))
    record.update(id="65f0b00000000000000000fe", createdAt="2999-01-01T00:00:00.000Z")
    client.emulator.add_article(record)
    assert (await listed())[-1] == "65f0b00000000000000000fe"
