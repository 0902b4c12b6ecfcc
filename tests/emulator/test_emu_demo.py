"""The bundled demo workspace: found through importlib.resources, in the emulator's format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sitegen.emulator import demo
from sitegen.emulator.query import is_object_id
from sitegen.errors import SitegenError


def test_load_demo_reads_the_packaged_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                           data: dict[str, Any]) -> None:
    import json

    fake = tmp_path / "demo-workspace.json"
    fake.write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(demo, "demo_resource", lambda: fake)
    assert demo.load_demo() == data


@pytest.mark.parametrize(("content", "expected"), [
    (None, "missing"), ("{", "not valid JSON"), ("[]", "no 'workspace'"),
])
def test_broken_demo_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                      content: str | None, expected: str) -> None:
    fake = tmp_path / "demo-workspace.json"
    if content is not None:
        fake.write_text(content, encoding="utf-8")
    monkeypatch.setattr(demo, "demo_resource", lambda: fake)
    with pytest.raises(SitegenError, match=expected):
        demo.load_demo()


def test_resource_points_into_the_package() -> None:
    resource = demo.demo_resource()
    assert resource.name == "demo-workspace.json"
    assert Path(str(resource)).parent.name == "data"


@pytest.mark.skipif(not demo.demo_resource().is_file(),
                    reason="the demo workspace JSON has not been built yet")
def test_bundled_demo_has_the_documented_shape() -> None:
    workspace = demo.load_demo()
    assert is_object_id(workspace["workspace"]["id"])
    for key in ("agents", "clusters", "authorIdentities", "articles", "socialPosts"):
        assert isinstance(workspace[key], list) and workspace[key], key
    statuses = {a.get("status") for a in workspace["articles"]}
    assert "published" in statuses
