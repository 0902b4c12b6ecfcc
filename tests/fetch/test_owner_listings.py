"""Owners (cluster, author identity) of articles whose records do not carry them.

The emulator serves article records without `clusterId` and `authorIdentityId`
(`Faults(no_owner_fields=True)`, `sitegen emulate --no-owner-fields`), so the sync learns them
from the per-owner listings. After the first sync, an unchanged article keeps its stored owners
(no owner listing asked), a changed one is looked up in its stored owners' listings (one page
each), and only a new or moved article makes the sync ask every owner, one page each. Every test
counts calls in the emulator's own request log and compares the store with a sync from scratch.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from sitegen.config import Config
from sitegen.emulator.faults import Faults
from sitegen.emulator.generator import generate_workspace
from sitegen.fetch.stored import load_workspace, open_config_store
from sitegen.workspace import Workspace
from tests.fetch.test_emulator_sync import KEY, Emu, config_for

CLUSTER_PAGES = "GET /api/v2/workspaces/{workspaceId}/clusters/{clusterId}/articles"
AUTHOR_PAGES = ("GET /api/v2/workspaces/{workspaceId}/author-identities/{authorIdentityId}"
                "/articles")
DETAIL = "GET /api/v2/workspaces/{workspaceId}/articles/{articleId}"


def owner_calls(emu: Emu) -> tuple[int, int]:
    return emu.state.calls[CLUSTER_PAGES], emu.state.calls[AUTHOR_PAGES]


def stored(config: Config) -> Workspace:
    with open_config_store(config) as store:
        workspace = load_workspace(store)
    assert workspace is not None
    return workspace


def owners_of(workspace: Workspace) -> dict[str, tuple[str | None, str | None]]:
    return {a.id: (a.clusterId, a.authorIdentityId) for a in workspace.articles}


def as_served(emu: Emu) -> dict[str, tuple[str | None, str | None]]:
    """Each published article's owners as the emulator's data holds them."""
    return {a["id"]: (a.get("clusterId"), a.get("authorIdentityId"))
            for a in emu.state.records("articles") if a.get("status") == "published"}


def from_scratch(tmp_path: Path, emu: Emu) -> Workspace:
    """What a sync into an empty store makes of the emulator now."""
    config = config_for(tmp_path / "scratch", emu.data)
    emu.sync(config)
    return stored(config)


@pytest.fixture
def emu() -> Emu:
    # 1,200 articles: 12 clusters, 3 author identities of about 250 published articles each
    return Emu(generate_workspace(1200, seed=3), faults=Faults(no_owner_fields=True))


@pytest.fixture
def synced(tmp_path: Path, emu: Emu) -> Config:
    config = config_for(tmp_path / "site", emu.data)
    emu.sync(config)
    assert owners_of(stored(config)) == as_served(emu)  # learnt from the listings alone
    emu.state.calls.clear()
    return config


def _article(emu: Emu, *, cluster: bool, author: bool) -> dict[str, Any]:
    return next(a for a in emu.state.records("articles") if a.get("status") == "published"
                and bool(a.get("clusterId")) == cluster
                and bool(a.get("authorIdentityId")) == author)


def test_the_emulator_can_leave_the_owners_out() -> None:
    emu = Emu(generate_workspace(30, seed=3), faults=Faults(no_owner_fields=True))
    served = _article(emu, cluster=True, author=True)
    base = f"/api/v2/workspaces/{emu.data['workspace']['id']}/articles"

    async def ask() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=emu.app),
                                     base_url="http://emulator.test",
                                     headers={"Authorization": f"Bearer {KEY}"}) as client:
            listed = (await client.get(base, params={"limit": 100})).json()["articles"]
            single = (await client.get(f"{base}/{served['id']}")).json()["article"]
        return listed, single

    listed, single = asyncio.run(ask())
    assert listed and all("clusterId" not in a and "authorIdentityId" not in a for a in listed)
    assert "clusterId" not in single and "authorIdentityId" not in single
    assert single["title"] == served["title"]


def test_a_sync_that_finds_nothing_new_asks_no_owner(tmp_path: Path, emu: Emu,
                                                     synced: Config) -> None:
    result = emu.sync(synced)
    assert owner_calls(emu) == (0, 0) and not result.changed
    assert owners_of(stored(synced)) == as_served(emu)


def test_a_changed_article_costs_one_page_of_each_stored_owner(tmp_path: Path, emu: Emu,
                                                               synced: Config) -> None:
    article = _article(emu, cluster=True, author=True)
    emu.state.update_article(article["id"], title="Changed at the service")
    result = emu.sync(synced)
    assert owner_calls(emu) == (1, 1) and emu.state.calls[DETAIL] == 1
    assert result.ledger.total == 7 + 1 + 2  # the listings, one detail, one page per owner
    assert owners_of(stored(synced)) == as_served(emu)
    assert stored(synced) == from_scratch(tmp_path, emu)


def test_an_article_moved_to_another_cluster_and_author_is_found(tmp_path: Path, emu: Emu,
                                                                 synced: Config) -> None:
    article = _article(emu, cluster=True, author=True)
    clusters = [c["id"] for c in emu.data["clusters"] if c["id"] != article["clusterId"]]
    authors = [a["id"] for a in emu.data["authorIdentities"]
               if a["id"] != article["authorIdentityId"]]
    emu.state.update_article(article["id"], clusterId=clusters[0], authorIdentityId=authors[0])
    emu.sync(synced)
    # its old owners' first pages, then one page of every other owner
    assert owner_calls(emu) == (len(emu.data["clusters"]), len(emu.data["authorIdentities"]))
    assert owners_of(stored(synced))[article["id"]] == (clusters[0], authors[0])
    assert stored(synced) == from_scratch(tmp_path, emu)


def test_an_article_taken_out_of_its_cluster_has_none(tmp_path: Path, emu: Emu,
                                                      synced: Config) -> None:
    article = _article(emu, cluster=True, author=True)
    emu.state.update_article(article["id"], clusterId=None)
    emu.sync(synced)
    assert owners_of(stored(synced))[article["id"]] == (None, article["authorIdentityId"])
    assert stored(synced) == from_scratch(tmp_path, emu)


def test_a_new_article_costs_at_most_one_page_per_owner(tmp_path: Path, emu: Emu,
                                                        synced: Config) -> None:
    model = _article(emu, cluster=True, author=True)
    new = {**model, "id": "fe" * 12, "slug": "brand-new", "title": "Brand new",
           "createdAt": emu.state.clock(), "updatedAt": emu.state.clock()}
    emu.state.add_article(new)
    emu.sync(synced)
    assert owner_calls(emu) == (len(emu.data["clusters"]), len(emu.data["authorIdentities"]))
    assert owners_of(stored(synced))["fe" * 12] == (model["clusterId"],
                                                    model["authorIdentityId"])
    assert stored(synced) == from_scratch(tmp_path, emu)


def test_records_that_carry_their_owners_cost_no_owner_listing(tmp_path: Path) -> None:
    emu = Emu(generate_workspace(300, seed=3))
    config = config_for(tmp_path / "site", emu.data)
    emu.sync(config)
    emu.state.update_article(_article(emu, cluster=True, author=True)["id"], title="Again")
    emu.sync(config)
    assert owner_calls(emu) == (0, 0)
    assert owners_of(stored(config)) == as_served(emu)


def _many_clusters(emu: Emu, count: int) -> None:
    """Give the emulated workspace *count* more clusters (dated before any sync)."""
    first = emu.data["clusters"][0]
    extra = [{**first, "id": f"{0xC1 << 88 | n:024x}", "name": f"Extra {n}",
              "createdAt": f"2023-01-01T00:{n // 60:02d}:{n % 60:02d}.000Z",
              "updatedAt": f"2023-02-01T00:{n // 60:02d}:{n % 60:02d}.000Z"}
             for n in range(count)]
    emu.data["clusters"] = emu.data["clusters"] + extra
    emu.state.replace(emu.data)


CLUSTERS = "GET /api/v2/workspaces/{workspaceId}/clusters"


@pytest.fixture
def crowded(tmp_path: Path) -> tuple[Emu, Config]:
    """160 clusters (two pages of the cluster listing), synced once."""
    emu = Emu(generate_workspace(300, seed=3), faults=Faults(no_owner_fields=True))
    _many_clusters(emu, 160 - len(emu.data["clusters"]))
    config = config_for(tmp_path / "site", emu.data)
    emu.sync(config)
    assert emu.state.calls[CLUSTERS] == 2
    emu.state.calls.clear()
    return emu, config


def test_a_long_cluster_listing_costs_one_page_when_nothing_changed(
        tmp_path: Path, crowded: tuple[Emu, Config]) -> None:
    emu, config = crowded
    result = emu.sync(config)
    assert emu.state.calls[CLUSTERS] == 1 and not result.changed
    assert result.ledger.total == 7
    assert stored(config) == from_scratch(tmp_path, emu)


def test_a_renamed_cluster_is_read_from_the_first_page(tmp_path: Path,
                                                       crowded: tuple[Emu, Config]) -> None:
    emu, config = crowded
    cluster = emu.state.records("clusters")[5]
    cluster.update(name="Renamed at the service", updatedAt=emu.state.clock())
    emu.state.version += 1
    emu.sync(config)
    assert emu.state.calls[CLUSTERS] == 1
    held = stored(config)
    assert any(c.name == "Renamed at the service" for c in held.clusters or [])
    assert held == from_scratch(tmp_path, emu)


def test_a_deleted_and_an_added_cluster_make_the_whole_walk(tmp_path: Path,
                                                            crowded: tuple[Emu, Config]) -> None:
    emu, config = crowded
    clusters = emu.state.records("clusters")
    gone = next(c for c in clusters if not any(a.get("clusterId") == c["id"]
                                               for a in emu.state.records("articles")))
    clusters.remove(gone)
    clusters.append({**gone, "id": "c2" * 12, "name": "Brand new cluster",
                     "createdAt": emu.state.clock(), "updatedAt": emu.state.clock()})
    emu.state.version += 1
    emu.sync(config)
    assert emu.state.calls[CLUSTERS] == 1 + 2  # the count does not add up: the whole walk
    held = stored(config)
    assert {c.id for c in held.clusters or []} == {c["id"] for c in clusters}
    assert held == from_scratch(tmp_path, emu)
