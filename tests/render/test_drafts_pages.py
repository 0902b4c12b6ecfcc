"""The drafts' pages as the build lays them out: `/drafts/` only in a drafts preview's build
(saying so plainly when there is no draft), a draft's page beside a published one of the same
slug without taking its URL, and no `/drafts/` in any other build.
"""

from __future__ import annotations

from pathlib import Path

from sitegen.build import BuildOptions, run_build
from sitegen.config import demo_config
from sitegen.fetch.records import Article
from tests.content import synced


def test_a_drafts_build_with_no_draft_says_so_and_other_builds_have_no_drafts_page(
        tmp_path: Path) -> None:
    config = demo_config(None, tmp_path)
    workspace = synced(config)
    plain = tmp_path / "plain"
    run_build(config, BuildOptions(output=plain, demo=True, workspace=workspace))
    assert not (plain / "drafts").exists()
    empty = tmp_path / "empty"
    run_build(config, BuildOptions(output=empty, demo=True, workspace=workspace, drafts=[]))
    page = (empty / "drafts" / "index.html").read_text(encoding="utf-8")
    assert "This workspace has no drafts." in page and "0 drafts" in page
    assert '<meta name="robots" content="noindex,nofollow">' in page
    assert "/drafts/" not in (empty / "sitemap.xml").read_text(encoding="utf-8")


def test_a_draft_with_a_published_slug_keeps_its_own_url(tmp_path: Path) -> None:
    config = demo_config(None, tmp_path)
    workspace = synced(config)
    published = next(a for a in workspace.articles if a.slug == "kimchi-slowly")
    draft = Article.model_validate({
        "id": "65f0c0ffeee00000000000ff", "title": "Kimchi, Quickly", "slug": "kimchi-slowly",
        "status": "draft", "content": "A second take, not ready yet.",
        "agentId": published.agentId, "createdAt": "2026-09-01T10:00:00Z",
        "updatedAt": "2026-09-02T10:00:00Z"})
    output = tmp_path / "out"
    run_build(config, BuildOptions(output=output, demo=True, workspace=workspace,
                                   drafts=[draft]))
    assert "Kimchi, Quickly" in (output / "drafts" / "kimchi-slowly" / "index.html").read_text(
        encoding="utf-8")
    shown = (output / "kimchi-slowly" / "index.html").read_text(encoding="utf-8")
    assert published.title is not None and published.title in shown
    assert "Kimchi, Quickly" not in shown
    assert "Kimchi, Quickly" not in (output / "index.html").read_text(encoding="utf-8")
