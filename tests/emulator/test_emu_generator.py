"""The workspace generator: deterministic, realistic proportions, valid for the emulator."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sitegen.blocktypes import block_types
from sitegen.emulator import create_app
from sitegen.emulator.generator import generate_workspace
from sitegen.fetch.records import Article, parse_block

OID = re.compile(r"^[0-9a-f]{24}$")
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


@pytest.fixture(scope="module")
def big() -> dict[str, Any]:
    return generate_workspace(1200, seed=5)


def test_same_seed_same_bytes_other_seed_differs() -> None:
    first = json.dumps(generate_workspace(80, seed=3))
    assert first == json.dumps(generate_workspace(80, seed=3))
    assert first != json.dumps(generate_workspace(80, seed=4))


def test_sizes_follow_the_article_count(big: dict[str, Any]) -> None:
    assert len(big["articles"]) == 1200
    assert len(big["agents"]) == 3  # max(3, 1200 // 400)
    assert len(big["clusters"]) == 12
    assert len(big["authorIdentities"]) == 3
    assert 3 <= len(big["socialPosts"]) <= 50
    huge = generate_workspace(4000, seed=1)
    assert (len(huge["agents"]), len(huge["clusters"]), len(huge["authorIdentities"])) == (
        10, 40, 8)
    small = generate_workspace(0)
    assert small["articles"] == [] and len(small["agents"]) == 3


def test_distributions(big: dict[str, Any]) -> None:
    articles = big["articles"]
    statuses = Counter(a["status"] for a in articles)
    assert 0.80 < statuses["published"] / len(articles) < 0.90
    assert statuses["draft"] > 0 and statuses["archived"] > 0
    assert 2 <= len({a["language"] for a in articles}) <= 3
    assert all(0 <= len(a["tags"]) <= 5 for a in articles)
    assert 40 <= len({t for a in articles for t in a["tags"]}) <= 70
    assert any(a["blocks"] for a in articles) and any(not a["blocks"] for a in articles)
    assert any(a["clusterId"] is None for a in articles)
    assert any(a["authorIdentityId"] is None for a in articles)
    kinds = {b["type"] for a in articles for b in a["blocks"]}
    assert kinds == {block.name for block in block_types()}  # (every registered type)
    bodies = "\n".join(a["content"] for a in articles)
    for feature in ("\n## ", "\n- ", "](https://", "\n```", "\n|---|"):
        assert feature in bodies, feature


def test_ids_timestamps_and_references(big: dict[str, Any]) -> None:
    ids = [r["id"] for key in ("agents", "clusters", "authorIdentities", "articles",
                               "socialPosts") for r in big[key]]
    assert len(ids) == len(set(ids))
    assert all(OID.match(i) for i in ids)
    agents = {a["id"] for a in big["agents"]}
    clusters = {c["id"] for c in big["clusters"]}
    for article in big["articles"]:
        assert STAMP.match(article["createdAt"]) and STAMP.match(article["updatedAt"])
        assert article["updatedAt"] >= article["createdAt"]
        assert article["agentId"] in agents
        assert article["clusterId"] is None or article["clusterId"] in clusters
        assert article["workspaceId"] == big["workspace"]["id"]
    assert len({a["slug"] for a in big["articles"]}) == len(big["articles"])


def test_records_parse_and_blocks_are_valid(big: dict[str, Any]) -> None:
    for raw in big["articles"][:200]:
        article = Article.model_validate(raw)
        assert article.title and article.slug
        assert all(type(parse_block(b)).__name__ != "UnknownBlock" for b in raw["blocks"])


@pytest.mark.anyio
async def test_emulator_serves_generated_workspace(big: dict[str, Any]) -> None:
    import httpx

    app = create_app(big)
    workspace = big["workspace"]["id"]
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://e") as client:
        response = await client.get(f"/api/v2/workspaces/{workspace}/articles?limit=100",
                                    headers={"x-api-key": "k"})
    assert response.json()["pagination"]["totalCount"] == 1200


def test_cli_writes_the_same_workspace(tmp_path: Path) -> None:
    out = tmp_path / "ws.json"
    result = subprocess.run([sys.executable, "-m", "sitegen.emulator.generator",
                             "--articles", "25", "--seed", "9", "-o", str(out)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert json.loads(out.read_text(encoding="utf-8")) == generate_workspace(25, seed=9)
