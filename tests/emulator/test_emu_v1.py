"""API v1 of the emulator: record forms, pagination, filters, sorting, errors."""

from __future__ import annotations

from typing import Any

import pytest

from sitegen.emulator import forms

pytestmark = pytest.mark.anyio


async def get(client: Any, ns: Any, path: str, **params: Any) -> Any:
    response = await client.get(f"/api/v1{path}", headers=ns.V1, params=params)
    assert response.status_code == 200, response.text
    return response.json()


async def test_agent_forms_are_exact(client: Any, ns: Any) -> None:
    listed = (await get(client, ns, "/agents"))["data"][0]
    assert set(listed) == set(forms.AGENT_L)
    assert "prompt" not in listed and "tone" not in listed
    single = (await get(client, ns, f"/agents/{ns.AG1}"))["agent"]
    assert set(single) == set(forms.AGENT_S)
    assert single["prompt"] == "Write about Python packaging"
    assert "tone" not in single


async def test_article_forms_are_exact(client: Any, ns: Any) -> None:
    listed = (await get(client, ns, "/articles"))["data"]
    assert all(set(item) == set(forms.ARTICLE_L) for item in listed)
    single = (await get(client, ns, f"/articles/{listed[0]['id']}"))["article"]
    assert set(single) == set(forms.ARTICLE_S)
    assert {"content", "blocks", "meta"} <= set(single)
    assert "clusterId" not in single and "authorIdentityId" not in single
    per_agent = (await get(client, ns, f"/agents/{ns.AG1}/articles"))["articles"]
    assert all(set(item) == set(forms.ARTICLE_A) for item in per_agent)
    assert "createdBy" not in per_agent[0]


async def test_list_pagination_defaults_and_cap(client: Any, ns: Any) -> None:
    body = await get(client, ns, "/articles")
    assert body["pagination"] == {"skip": 0, "limit": 10, "totalCount": 6, "totalPages": 1,
                                  "currentPage": 1, "hasNextPage": False, "hasPrevPage": False}
    page = await get(client, ns, "/articles", skip=2, limit=2)
    assert page["pagination"] == {"skip": 2, "limit": 2, "totalCount": 6, "totalPages": 3,
                                  "currentPage": 2, "hasNextPage": True, "hasPrevPage": True}
    assert len(page["data"]) == 2
    capped = await get(client, ns, "/articles", limit=500)
    assert capped["pagination"]["limit"] == 100
    per_agent = await get(client, ns, f"/agents/{ns.AG1}/articles")
    assert per_agent["pagination"]["limit"] == 50


async def test_default_order_is_newest_first_with_id_tiebreak(client: Any, ns: Any) -> None:
    ids = [a["id"] for a in (await get(client, ns, "/articles"))["data"]]
    # articles 5 and 6 share createdAt: the tie is broken by id, in the same direction
    assert ids == [f"65f0b00000000000000000{n:02d}" for n in (6, 5, 4, 3, 2, 1)]
    ascending = await get(client, ns, "/articles", sortBy="title", sortOrder="asc")
    titles = [a["title"] for a in ascending["data"]]
    assert titles == sorted(titles)


async def test_article_filters(client: Any, ns: Any) -> None:
    async def ids(**params: Any) -> list[str]:
        body = await get(client, ns, "/articles", sortOrder="asc", **params)
        return [a["id"][-2:] for a in body["data"]]

    assert await ids(status="draft") == ["03"]
    assert await ids(agentId=ns.AG2) == ["04", "05"]
    assert await ids(slug="article-2") == ["02"]
    assert await ids(language="de") == ["02"]
    assert await ids(model="claude-3") == ["05"]
    assert await ids(tags="rust,nothing") == ["02"]
    assert await ids(tags="python") == ["01", "03", "04", "06"]  # exact, case-sensitive tags
    assert await ids(search="ZWEITER") == ["02"]
    assert await ids(search="alpha") == ["01", "02", "03", "04", "05", "06"]  # meta.keywords
    assert await ids(search="nothing-like-this") == []


async def test_agent_filters_and_search(client: Any, ns: Any) -> None:
    async def names(**params: Any) -> list[str]:
        return [a["name"] for a in (await get(client, ns, "/agents", **params))["data"]]

    assert await names(status="inactive") == ["Archivist"]
    assert await names(executionMode="scheduled") == ["Writer"]
    assert await names(model="gpt-4o") == ["Writer"]
    assert await names(search="history") == ["Archivist"]  # the prompt is searched
    assert await names(sortBy="name", sortOrder="asc") == ["Archivist", "Writer"]


@pytest.mark.parametrize("query", [
    "status=deleted", "sortOrder=up", "sortBy=nonsense", "agentId=123", "skip=-1",
    "limit=0", "limit=ten", "executionMode=manual",
])
async def test_invalid_query_is_400(client: Any, ns: Any, query: str) -> None:
    path = "/agents" if "executionMode" in query else "/articles"
    response = await client.get(f"/api/v1{path}?{query}", headers=ns.V1)
    assert response.status_code == 400
    assert set(response.json()) == {"error", "details"}


async def test_agent_articles_use_sort_and_order(client: Any, ns: Any) -> None:
    body = await get(client, ns, f"/agents/{ns.AG1}/articles", sort="title", order="asc",
                     status="published")
    assert [a["title"] for a in body["articles"]] == ["Article 1", "Same time as five",
                                                      "Zweiter Artikel"]
    assert "data" not in body
    bad = await client.get(f"/api/v1/agents/{ns.AG1}/articles?order=sideways", headers=ns.V1)
    assert bad.status_code == 400


async def test_ids_400_and_404(client: Any, ns: Any) -> None:
    bad = await client.get("/api/v1/articles/12345", headers=ns.V1)
    assert bad.status_code == 400
    assert bad.json()["error"] == "Invalid articleId"
    missing = await client.get("/api/v1/articles/" + "f" * 24, headers=ns.V1)
    assert missing.status_code == 404
    assert missing.json()["error"] == "Article not found"
    assert (await client.get("/api/v1/agents/nope", headers=ns.V1)).status_code == 400
    assert (await client.get("/api/v1/agents/" + "e" * 24, headers=ns.V1)).status_code == 404
    assert (await client.get("/api/v1/agents/" + "e" * 24 + "/articles",
                             headers=ns.V1)).status_code == 404


async def test_workspace_embeds_only_published(client: Any, ns: Any) -> None:
    body = await get(client, ns, f"/workspaces/{ns.WS}")
    assert set(body) == {"workspace", "agents"}
    assert set(body["workspace"]) == set(forms.WORKSPACE_V1)
    agents = {a["id"]: a for a in body["agents"]}
    assert set(agents[ns.AG1]) == set(forms.AGENT_W) | {"articles"}
    assert agents[ns.AG1]["tone"] == "friendly"
    embedded = [a for agent in body["agents"] for a in agent["articles"]]
    assert sorted(a["id"][-2:] for a in embedded) == ["01", "02", "05", "06"]
    assert all(set(a) == set(forms.ARTICLE_W) for a in embedded)
    assert [a["id"][-2:] for a in agents[ns.AG2]["articles"]] == ["05"]


async def test_drafts_served_by_status_filter_only(client: Any, ns: Any) -> None:
    every = await get(client, ns, "/articles")
    assert {a["status"] for a in every["data"]} == {"published", "draft", "archived"}
    archived = await get(client, ns, "/articles/65f0b0000000000000000004")
    assert archived["article"]["status"] == "archived"
