"""An edit at `sitegen emulate`'s admin routes shows in the next incremental build, exactly.

The emulator runs as users run it (`sitegen emulate --data FILE`, a real HTTP server); the
site is built with `sitegen build` against it. A PATCH changes exactly its article's page and
costs one article detail request; a POST adds a page, a DELETE removes one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from sitegen.cli import main
from sitegen.emulator.generator import generate_workspace
from tests.emulator.running import DETAIL, KEY, Emulate, page_bytes, read_json, write_site

pytestmark = pytest.mark.timeout(600)


@pytest.fixture
def data() -> dict[str, Any]:
    return generate_workspace(30, seed=11)


@pytest.fixture
def emulator(tmp_path: Path, data: dict[str, Any]) -> Any:
    path = tmp_path / "workspace.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with Emulate("--data", str(path), cwd=tmp_path) as running:
        yield running


class Site:
    def __init__(self, folder: Path, url: str, workspace_id: str) -> None:
        self.config = write_site(folder, url, workspace_id)
        self.output = folder / "_site"
        self.report = folder / "report.json"

    def build(self, *flags: str) -> dict[str, Any]:
        status = main(["build", "-q", "-c", str(self.config), "-o", str(self.output),
                       "--report", str(self.report), *flags])
        report: dict[str, Any] = read_json(self.report)
        assert status == 0, report.get("error")
        return report


@pytest.fixture
def site(tmp_path: Path, emulator: Emulate, data: dict[str, Any],
         monkeypatch: pytest.MonkeyPatch) -> Site:
    monkeypatch.setenv("SITEGEN_API_KEY", KEY)
    return Site(tmp_path / "site", emulator.url, data["workspace"]["id"])


def _published(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for a in data["articles"] if a["status"] == "published"]


def _details(report: dict[str, Any]) -> int:
    return int(report["api"]["calls"].get(DETAIL, 0))


def test_a_patch_changes_exactly_its_article_page_with_one_detail_request(
        emulator: Emulate, site: Site, data: dict[str, Any], tmp_path: Path) -> None:
    first = site.build()
    assert _details(first) == len(_published(data))
    before = page_bytes(site.output)
    target = [a for a in _published(data) if not a["blocks"]][3]  # (blocks would be shown)
    page = f"{target['slug']}/index.html"
    assert page in before

    response = httpx.patch(f"{emulator.url}/__admin/articles/{target['id']}", timeout=30,
                           json={"content": "Rewritten at the emulator's admin route."})
    assert response.status_code == 200
    assert response.json()["updatedAt"] > target["updatedAt"]

    second = site.build()
    assert _details(second) == 1
    after = page_bytes(site.output)
    assert "Rewritten at the emulator" in after[page].decode()
    others = [f"{a['slug']}/index.html" for a in _published(data) if a is not target]
    assert [p for p in others if after[p] != before[p]] == []

    fresh = Site(tmp_path / "fresh", emulator.url, data["workspace"]["id"])
    fresh.build()  # the incremental output equals a fresh build of the same content
    assert page_bytes(fresh.output) == after


def test_a_post_adds_a_page_and_a_delete_removes_one(
        emulator: Emulate, site: Site, data: dict[str, Any]) -> None:
    site.build()
    response = httpx.post(f"{emulator.url}/__admin/articles", timeout=30, json={
        "title": "Made at the Admin Route", "content": "A new article, published.",
        "status": "published", "agentId": data["agents"][0]["id"], "language": "en"})
    assert response.status_code == 201
    created = response.json()
    assert created["slug"] == "made-at-the-admin-route" and len(created["id"]) == 24

    added = site.build()
    assert _details(added) == 1
    assert (site.output / "made-at-the-admin-route" / "index.html").is_file()

    gone = _published(data)[0]
    assert (site.output / gone["slug"] / "index.html").is_file()
    deleted = httpx.delete(f"{emulator.url}/__admin/articles/{gone['id']}", timeout=30)
    assert deleted.status_code == 204
    removed = site.build()
    assert _details(removed) == 0
    assert not (site.output / gone["slug"]).exists()
    assert (site.output / "made-at-the-admin-route" / "index.html").is_file()
