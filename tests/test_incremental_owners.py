"""Incremental builds stay exact when article records do not say their cluster and author.

Against the emulator serving article records without `clusterId` and `authorIdentityId`
(`Faults(no_owner_fields=True)`), an article moved to another cluster and author identity at the
service, and a new article, each give the same output, file for file, as a fresh build.
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest

from sitegen.build import BuildOptions, run_build
from sitegen.config import load_config
from sitegen.emulator.app import create_app
from sitegen.emulator.faults import Faults
from sitegen.emulator.generator import generate_workspace
from sitegen.outputnames import MANIFEST_NAME
from tests.test_incremental import KEY, _later, _published, write_site

SITE = {"title": "Owners", "per_page": 4, "mark": "MARK 0", "language": "en",
        "description": "Owners"}


def build(root: Path, data: dict[str, Any]) -> dict[str, bytes]:
    config = load_config(root / "site.toml")
    app = create_app(copy.deepcopy(data), faults=Faults(no_owner_fields=True))
    out = root / "_site"
    run_build(config, BuildOptions(output=out, transport=httpx.ASGITransport(app=app)))
    return {path.relative_to(out).as_posix(): path.read_bytes()
            for path in sorted(out.rglob("*")) if path.is_file() and path.name != MANIFEST_NAME}


def fresh(tmp_path: Path, data: dict[str, Any]) -> dict[str, bytes]:
    root = tmp_path / "fresh"
    write_site(root, data, SITE)
    try:
        return build(root, data)
    finally:
        shutil.rmtree(root)


@pytest.fixture
def built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, Any]]:
    monkeypatch.setenv("SITEGEN_API_KEY", KEY)
    data = generate_workspace(40, seed=11)
    root = tmp_path / "incremental"
    write_site(root, data, SITE)
    build(root, data)
    return root, data


def _owned(data: dict[str, Any]) -> dict[str, Any]:
    return next(a for a in _published(data) if a.get("clusterId") and a.get("authorIdentityId"))


def test_an_article_moved_to_another_cluster_and_author(tmp_path: Path,
                                                         built: tuple[Path, dict[str, Any]]
                                                         ) -> None:
    root, data = built
    article = _owned(data)
    article["clusterId"] = next(c["id"] for c in data["clusters"]
                                if c["id"] != article["clusterId"])
    article["authorIdentityId"] = next(a["id"] for a in data["authorIdentities"]
                                       if a["id"] != article["authorIdentityId"])
    article["updatedAt"] = _later()
    got = build(root, data)
    expected = fresh(tmp_path, data)
    assert got.keys() == expected.keys()
    assert [path for path in expected if got[path] != expected[path]] == []


def test_a_new_article(tmp_path: Path, built: tuple[Path, dict[str, Any]]) -> None:
    root, data = built
    made = copy.deepcopy(_owned(data))
    made.update(id="fd" * 12, slug="a-new-one", title="A new one at the service")
    made["createdAt"] = made["updatedAt"] = _later()
    data["articles"].append(made)
    got = build(root, data)
    expected = fresh(tmp_path, data)
    assert got.keys() == expected.keys()
    assert [path for path in expected if got[path] != expected[path]] == []
    assert any(b"A new one at the service" in body for body in got.values())
