"""What changed and why: each page a build wrote, with the recorded read that made it render
again (`build --explain`, the report's `paths` and `why`), on real builds over the emulator."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from sitegen.build import BuildOptions, run_build
from sitegen.cli import main
from sitegen.config import load_config
from sitegen.emulator.app import create_app
from sitegen.emulator.generator import generate_workspace
from sitegen.report import BuildReport
from tests.test_incremental import KEY, _later, _published, write_site


def _build(root: Path, data: dict[str, Any]) -> BuildReport:
    transport = httpx.ASGITransport(app=create_app(copy.deepcopy(data)))
    return run_build(load_config(root / "site.toml"),
                     BuildOptions(output=root / "_site", transport=transport))


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, Any],
                                                                    dict[str, Any]]:
    monkeypatch.setenv("SITEGEN_API_KEY", KEY)
    data = generate_workspace(16, seed=3)
    settings = {"title": "Why", "per_page": 4, "mark": "MARK 0", "language": "en",
                "description": "Why"}
    write_site(tmp_path, data, settings)
    return tmp_path, data, settings


def test_each_written_page_says_which_read_changed(
        site: tuple[Path, dict[str, Any], dict[str, Any]]) -> None:
    root, data, settings = site
    first = _build(root, data)
    pages = [path for path in first.written if path.endswith(".html")]
    assert pages and all(first.why[path] == "no previous build recorded" for path in pages)

    article = _published(data)[0]
    article["title"] = "A Title Nobody Had"
    article["updatedAt"] = _later()
    retitled = _build(root, data)
    assert retitled.why[f"{article['slug']}/index.html"].startswith(
        f"article:{article['id']} changed")
    written = [path for path in retitled.written if path.endswith(".html")]
    assert written  # (every page of this site shows the newest titles: `BASE`)
    assert all(f"article:{article['id']} changed" in retitled.why[path] for path in written)
    assert not set(retitled.why) & set(retitled.unchanged)

    settings["mark"] = "MARK 1"  # the site's own base.html: every page extends it
    write_site(root, data, settings)
    templated = _build(root, data)
    assert {templated.why[path] for path in templated.written if path.endswith(".html")} \
        == {"template base.html changed"}

    fresh = copy.deepcopy(article)
    fresh.update(id="9" * 24, slug="fresh-one", title="Fresh one", createdAt=_later())
    fresh["updatedAt"] = fresh["createdAt"]
    data["articles"].append(fresh)
    added = _build(root, data)
    assert added.why["fresh-one/index.html"] == "new page"
    assert "site.articles changed" in added.why["index.html"]

    (root / "_site" / "fresh-one" / "index.html").write_text("edited by hand")
    touched = _build(root, data)
    assert touched.why == {
        "fresh-one/index.html": "its output file differed from what the last build wrote"}

    settings["mark"] = "MARK 2"  # (so that --force writes pages: their bytes change)
    write_site(root, data, settings)
    forced = run_build(load_config(root / "site.toml"), BuildOptions(
        output=root / "_site", force=True,
        transport=httpx.ASGITransport(app=create_app(copy.deepcopy(data)))))
    pages = [path for path in forced.written if path.endswith(".html")]
    assert pages and {forced.why[path] for path in pages} == {"--force renders every page"}


def test_build_explain_prints_each_change_and_the_report_lists_paths(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    report = tmp_path / "report.json"
    args = ["build", "--demo", "-o", "out", "--explain", "--report", str(report)]
    assert main(args) == 0
    said = capsys.readouterr().out.splitlines()
    assert "wrote index.html: no previous build recorded" in said
    assert any(line.startswith("wrote ") and "other files (assets, images, search index"
               in line for line in said)
    document = json.loads(report.read_text())
    assert "index.html" in document["paths"]["written"]
    assert document["why"]["index.html"] == "no previous build recorded"
    assert main(args) == 0
    assert capsys.readouterr().out.splitlines() == [
        "nothing changed: every file of the output was kept as it was"]
    assert json.loads(report.read_text())["paths"] == {"written": [], "removed": []}
