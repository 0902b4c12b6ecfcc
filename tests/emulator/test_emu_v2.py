"""API v2 of the emulator: every read endpoint, list shapes, bounds, filters, errors."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.anyio


async def get(client: Any, ns: Any, path: str, **params: Any) -> Any:
    response = await client.get(f"{ns.BASE2}{path}", headers=ns.V2, params=params)
    assert response.status_code == 200, response.text
    return response.json()


async def test_workspace_is_id_and_name(client: Any, ns: Any) -> None:
    assert await get(client, ns, "") == {"workspace": {"id": ns.WS, "name": "Acme Notes"}}


@pytest.mark.parametrize(("path", "key", "count"), [
    ("/agents", "agents", 2),
    ("/articles", "articles", 6),
    ("/clusters", "clusters", 2),
    ("/author-identities", "authorIdentities", 2),
    ("/social-posts", "socialPosts", 2),
])
async def test_list_shapes(client: Any, ns: Any, path: str, key: str, count: int) -> None:
    body = await get(client, ns, path)
    assert set(body) == {key, "pagination"}
    assert len(body[key]) == count
    assert body["pagination"]["limit"] == 20
    assert body["pagination"]["totalCount"] == count


@pytest.mark.parametrize(("path", "key"), [
    ("/agents/{AG1}", "agent"),
    ("/articles/65f0b0000000000000000001", "article"),
    ("/clusters/{CL1}", "cluster"),
    ("/author-identities/{AU1}", "authorIdentity"),
    ("/social-posts/launch", "socialPost"),
])
async def test_single_shapes(client: Any, ns: Any, path: str, key: str) -> None:
    body = await get(client, ns, path.format(**vars(ns)))
    assert list(body) == [key]
    assert body[key]["workspaceId"] == ns.WS


async def test_article_list_items_omit_body_detail_has_everything(
        client: Any, ns: Any, data: dict[str, Any]) -> None:
    items = (await get(client, ns, "/articles"))["articles"]
    for item in items:
        assert not {"content", "blocks", "meta"} & set(item)
        assert {"clusterId", "authorIdentityId", "tags", "slug"} <= set(item)
    detail = (await get(client, ns, "/articles/65f0b0000000000000000001"))["article"]
    assert detail == data["articles"][0]


@pytest.mark.parametrize("path", ["/agents/{AG1}/articles", "/clusters/{CL1}/articles",
                                  "/author-identities/{AU1}/articles"])
async def test_scoped_article_lists(client: Any, ns: Any, path: str) -> None:
    body = await get(client, ns, path.format(**vars(ns)), sortOrder="asc")
    assert set(body) == {"articles", "pagination"}
    assert all("content" not in a for a in body["articles"])
    field, value = {"agents": ("agentId", ns.AG1), "clusters": ("clusterId", ns.CL1),
                    "author-identities": ("authorIdentityId", ns.AU1)}[path.split("/")[1]]
    assert body["articles"] and all(a[field] == value for a in body["articles"])


async def test_path_agent_scopes_even_with_query_agent(client: Any, ns: Any) -> None:
    body = await get(client, ns, f"/agents/{ns.AG2}/articles", agentId=ns.AG1)
    assert sorted(a["id"][-2:] for a in body["articles"]) == ["04", "05"]


async def test_article_filters(client: Any, ns: Any) -> None:
    async def ids(**params: Any) -> list[str]:
        body = await get(client, ns, "/articles", **{"sortOrder": "asc", **params})
        return [a["id"][-2:] for a in body["articles"]]

    assert await ids(clusterId="null") == ["03", "05"]
    assert await ids(clusterId=ns.CL1) == ["01", "02", "04", "06"]
    assert await ids(status="archived") == ["04"]
    assert await ids(tags="rust, Python") == ["02"]
    assert await ids(search="same TIME") == ["06"]
    assert await ids(agentId=ns.AG2, status="published") == ["05"]
    assert await ids(sortBy="updatedAt", sortOrder="desc") == ["06", "05", "04", "03", "02",
                                                               "01"]


async def test_cluster_author_social_filters(client: Any, ns: Any) -> None:
    async def names(path: str, key: str, field: str, **params: Any) -> list[str]:
        return [r[field] for r in (await get(client, ns, path, **params))[key]]

    assert await names("/clusters", "clusters", "name", hasArticles="true") == ["Packaging"]
    assert await names("/clusters", "clusters", "name", hasArticles="false") == ["Empty"]
    assert await names("/clusters", "clusters", "name", contentCycleId=ns.CYCLE) == [
        "Packaging"]
    assert await names("/clusters", "clusters", "name", color="#00ff00") == ["Empty"]
    assert await names("/clusters", "clusters", "name") == ["Empty", "Packaging"]  # updatedAt
    assert await names("/author-identities", "authorIdentities", "name",
                       hasImage="true") == ["Ada"]
    assert await names("/author-identities", "authorIdentities", "name",
                       hasImage="false") == ["Bob"]
    assert await names("/author-identities", "authorIdentities", "name", search="WRITER") == [
        "Bob"]
    assert await names("/social-posts", "socialPosts", "slug",
                       selectedImageSlot="landscape") == ["tips"]
    assert await names("/social-posts", "socialPosts", "slug") == ["launch", "tips"]
    assert await names("/social-posts", "socialPosts", "slug", sortBy="title",
                       sortOrder="asc") == ["launch", "tips"]


@pytest.mark.parametrize("query", [
    "/articles?limit=101", "/articles?limit=0", "/articles?skip=-1", "/articles?limit=x",
    "/articles?status=gone", "/articles?sortBy=slug", "/articles?clusterId=abc",
    "/agents?sortBy=prompt", "/agents?status=on", "/clusters?hasArticles=yes",
    "/clusters?contentCycleId=1", "/author-identities?hasImage=1",
    "/social-posts?selectedImageSlot=round", "/social-posts?sortOrder=random",
])
async def test_invalid_queries_are_400(client: Any, ns: Any, query: str) -> None:
    response = await client.get(ns.BASE2 + query, headers=ns.V2)
    assert response.status_code == 400, query
    body = response.json()
    assert set(body) == {"error", "details"} and body["details"]


async def test_pagination_walk(client: Any, ns: Any) -> None:
    seen: list[str] = []
    skip = 0
    while True:
        body = await get(client, ns, "/articles", skip=skip, limit=4)
        seen += [a["id"] for a in body["articles"]]
        if not body["pagination"]["hasNextPage"]:
            break
        skip += 4
    assert len(seen) == len(set(seen)) == 6
    assert body["pagination"]["totalPages"] == 2 and body["pagination"]["currentPage"] == 2


@pytest.mark.parametrize(("path", "status", "error"), [
    ("/articles/zzz", 400, "Invalid articleId"),
    ("/articles/" + "0" * 24, 404, "Article not found"),
    ("/agents/1", 400, "Invalid agentId"),
    ("/agents/" + "0" * 24, 404, "Agent not found"),
    ("/agents/" + "0" * 24 + "/articles", 404, "Agent not found"),
    ("/clusters/nope/articles", 400, "Invalid clusterId"),
    ("/clusters/" + "0" * 24, 404, "Cluster not found"),
    ("/author-identities/x", 400, "Invalid authorIdentityId"),
    ("/author-identities/" + "0" * 24 + "/articles", 404, "Author identity not found"),
    ("/social-posts/missing", 404, "Social post not found"),
    ("/social-posts/%20", 400, "Invalid postSlug"),
])
async def test_id_errors(client: Any, ns: Any, path: str, status: int, error: str) -> None:
    response = await client.get(ns.BASE2 + path, headers=ns.V2)
    assert response.status_code == status
    assert response.json()["error"] == error


async def test_unknown_route_and_method(client: Any, ns: Any) -> None:
    missing = await client.get(ns.BASE2 + "/widgets", headers=ns.V2)
    assert missing.status_code == 404
    assert set(missing.json()) == {"error", "details"}
    wrong = await client.post(ns.BASE2 + "/articles", headers=ns.V2, json={})
    assert wrong.status_code == 405
    assert missing.headers["access-control-allow-origin"] == "*"
