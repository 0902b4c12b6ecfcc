"""Authentication of the emulator: each version's header form, a fixed key, workspace scope."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("headers", "status"), [
    ({"x-api-key": "Bearer k1"}, 200),
    ({"x-api-key": "bearer k1"}, 200),
    ({}, 401),
    ({"x-api-key": "k1"}, 401),                    # v2 form refused by v1
    ({"x-api-key": "Bearer "}, 401),
    ({"authorization": "Bearer k1"}, 401),         # v1 only reads x-api-key
])
async def test_v1_header_form(client: Any, headers: dict[str, str], status: int) -> None:
    response = await client.get("/api/v1/agents", headers=headers)
    assert response.status_code == status
    if status == 401:
        assert set(response.json()) == {"error", "details"}


@pytest.mark.parametrize(("headers", "status"), [
    ({"x-api-key": "k1"}, 200),
    ({"authorization": "Bearer k1"}, 200),
    ({}, 401),
    ({"x-api-key": ""}, 401),
    ({"x-api-key": "Bearer k1"}, 401),             # v1 form refused by v2
    ({"authorization": "Basic azE6"}, 401),
])
async def test_v2_header_forms(client: Any, ns: Any, headers: dict[str, str],
                                status: int) -> None:
    response = await client.get(ns.BASE2, headers=headers)
    assert response.status_code == status


async def test_fixed_key_accepts_only_that_key(data: dict[str, Any], make_client: Any,
                                                ns: Any) -> None:
    async with make_client(data, key="s3cret-key") as client:
        assert (await client.get("/api/v1/agents",
                                 headers={"x-api-key": "Bearer s3cret-key"})).status_code == 200
        assert (await client.get(ns.BASE2, headers={"x-api-key": "s3cret-key"})).status_code == 200
        wrong = await client.get(ns.BASE2, headers={"x-api-key": "other"})
        assert wrong.status_code == 401
        wrong_v1 = await client.get("/api/v1/articles", headers={"x-api-key": "Bearer other"})
        assert wrong_v1.status_code == 401


async def test_key_never_echoed(data: dict[str, Any], make_client: Any, ns: Any) -> None:
    async with make_client(data, key="s3cret-key") as client:
        response = await client.get(ns.BASE2, headers={"x-api-key": "wrong-s3cret"})
        assert "s3cret" not in response.text


async def test_v2_other_workspace_is_403(client: Any, ns: Any) -> None:
    response = await client.get(f"/api/v2/workspaces/{ns.OTHER_WS}/articles", headers=ns.V2)
    assert response.status_code == 403
    assert response.json()["error"] == "Forbidden"


async def test_v2_malformed_workspace_is_400(client: Any, ns: Any) -> None:
    response = await client.get("/api/v2/workspaces/not-an-id/articles", headers=ns.V2)
    assert response.status_code == 400
    assert response.json()["error"] == "Invalid workspaceId"


async def test_v2_auth_checked_before_workspace(client: Any, ns: Any) -> None:
    response = await client.get(f"/api/v2/workspaces/{ns.OTHER_WS}", headers={})
    assert response.status_code == 401


async def test_v1_workspace_mismatch_is_401(client: Any, ns: Any) -> None:
    assert (await client.get(f"/api/v1/workspaces/{ns.WS}", headers=ns.V1)).status_code == 200
    response = await client.get(f"/api/v1/workspaces/{ns.OTHER_WS}", headers=ns.V1)
    assert response.status_code == 401
    bad = await client.get("/api/v1/workspaces/xyz", headers=ns.V1)
    assert bad.status_code == 400
    assert bad.json()["error"] == "Invalid workspaceId"
