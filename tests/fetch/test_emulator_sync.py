"""Integration: sync() against the emulator in-process (the same path as `--demo`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from sitegen.config import Config, parse_config
from sitegen.emulator.app import create_app
from sitegen.emulator.demo import load_demo
from sitegen.emulator.generator import generate_workspace
from sitegen.emulator.state import EmulatorState
from sitegen.errors import AuthError, QuotaError, UnreachableError
from sitegen.fetch.stored import load_workspace, open_config_store
from sitegen.fetch.sync import SyncResult, sync
from sitegen.fetch_cli import fetch_command

KEY = "emu-SECRET-key-0987-do-not-print"
DETAIL = "GET /api/v2/workspaces/{workspaceId}/articles/{articleId}"
V1_DETAIL = "GET /api/v1/articles/{articleId}"


def config_for(root: Path, data: dict[str, Any], **api: Any) -> Config:
    return parse_config({
        "site": {"title": "T", "url": "https://site.test/"},
        "api": {"url": "http://emulator.test", "workspace": data["workspace"]["id"],
                "retry_budget": 5.0, **api}}, root)


class Emu:
    def __init__(self, data: dict[str, Any], **options: Any) -> None:
        self.data = data
        self.app: Starlette = create_app(data, **options)

    @property
    def state(self) -> EmulatorState:
        return self.app.state.emulator  # type: ignore[no-any-return]

    def sync(self, config: Config, **options: Any) -> SyncResult:
        with open_config_store(config) as store:
            return sync(config, store, key=KEY, transport=httpx.ASGITransport(app=self.app),
                        **options)

    def published(self) -> set[str]:
        return {a["id"] for a in self.state.records("articles") if a.get("status") == "published"}


@pytest.fixture
def emu() -> Emu:
    return Emu(load_demo())


@pytest.fixture
def cfg(tmp_path: Path, emu: Emu) -> Config:
    return config_for(tmp_path, emu.data)


def test_cold_then_unchanged_then_one_change_then_deletion(emu: Emu, cfg: Config) -> None:
    cold = emu.sync(cfg)
    assert {a.id for a in cold.workspace.articles} == emu.published()
    assert emu.state.calls[DETAIL] == len(emu.published())
    assert all(a.content or a.blocks for a in cold.workspace.articles)

    emu.state.calls.clear()
    warm = emu.sync(cfg)
    assert emu.state.calls[DETAIL] == 0 and warm.stats.details_saved == len(emu.published())
    assert warm.workspace == cold.workspace and cold.changed and not warm.changed

    target = sorted(emu.published())[0]
    emu.state.update_article(target, title="A new title", content="Fresh words.")
    emu.state.calls.clear()
    changed = emu.sync(cfg)
    assert emu.state.calls[DETAIL] == 1
    article = next(a for a in changed.workspace.articles if a.id == target)
    assert article.title == "A new title" and article.content == "Fresh words."

    emu.state.delete_article(target)
    other = sorted(emu.published())[0]
    emu.state.update_article(other, status="draft")
    after = emu.sync(cfg)
    assert {a.id for a in after.workspace.articles} == emu.published()
    assert target not in {a.id for a in after.workspace.articles}


def test_membership_and_collections_match_the_data(emu: Emu, cfg: Config) -> None:
    ws = emu.sync(cfg).workspace
    stored = {a["id"]: a for a in emu.state.records("articles")}
    for article in ws.articles:
        assert article.clusterId == stored[article.id].get("clusterId")
        assert article.authorIdentityId == stored[article.id].get("authorIdentityId")
    assert len(ws.clusters or []) == len(emu.data["clusters"])
    assert len(ws.authors or []) == len(emu.data["authorIdentities"])
    assert len(ws.social_posts or []) == len(emu.data["socialPosts"])
    assert ws.digest is not None


def test_v2_absent_falls_back_to_v1_with_the_same_articles(tmp_path: Path, emu: Emu) -> None:
    by_v2 = emu.sync(config_for(tmp_path / "a", emu.data)).workspace
    emu.state.faults.no_v2 = True
    emu.state.calls.clear()
    result = emu.sync(config_for(tmp_path / "b", emu.data))
    by_v1 = result.workspace
    assert by_v1.api_version == "v1" and by_v1.clusters is None
    assert {a.id for a in by_v1.articles} == {a.id for a in by_v2.articles}
    v2_bodies = {a.id: (a.title, a.slug, a.content) for a in by_v2.articles}
    assert {a.id: (a.title, a.slug, a.content) for a in by_v1.articles} == v2_bodies
    assert emu.state.calls[V1_DETAIL] == len(by_v1.articles)
    emu.state.calls.clear()
    emu.sync(config_for(tmp_path / "b", emu.data))
    assert emu.state.calls[V1_DETAIL] == 0


def test_forced_v2_absent_is_exit_5(tmp_path: Path, emu: Emu) -> None:
    emu.state.faults.no_v2 = True
    with pytest.raises(UnreachableError) as caught:
        emu.sync(config_for(tmp_path, emu.data, version="v2"))
    assert caught.value.exit_code == 5


@pytest.mark.parametrize(("status", "body", "ctype", "where"), [
    (200, b'{"articles": [{"id": ', "application/json", "/articles"),
    (200, b"<!doctype html><title>Login</title>", "text/html", "/articles/"),
    (200, b"", "application/json", "/clusters"),
    (429, None, None, "/api/v2"),
    (503, None, None, "/agents"),
])
def test_transient_faults_are_survived(emu: Emu, cfg: Config, status: int, body: bytes | None,
                                       ctype: str | None, where: str) -> None:
    emu.state.faults.fail_next(status, count=3, path_contains=where, body=body,
                               content_type=ctype)
    result = emu.sync(cfg)
    assert {a.id for a in result.workspace.articles} == emu.published()
    assert result.ledger.retries == 3


def test_a_burst_of_429_lowers_concurrency_but_completes(emu: Emu, cfg: Config) -> None:
    emu.state.faults.rate_limit_every = 4
    emu.state.faults.retry_after_s = 0
    result = emu.sync(cfg)
    assert {a.id for a in result.workspace.articles} == emu.published()
    assert result.ledger.retries >= 5


def test_402_mid_sync_is_exit_4_and_keeps_the_store(emu: Emu, cfg: Config) -> None:
    before = emu.sync(cfg).workspace
    for article_id in sorted(emu.published())[:3]:
        emu.state.update_article(article_id, title="changed")
    emu.state.faults.quota = emu.state.requests + 8  # the structure passes, a detail fails
    with pytest.raises(QuotaError, match="quota") as caught:
        emu.sync(cfg)
    assert caught.value.exit_code == 4
    with open_config_store(cfg) as store:
        assert load_workspace(store) == before and store.content_version() == 1


def test_wrong_key_is_401_and_other_workspace_is_403(tmp_path: Path) -> None:
    data = load_demo()
    strict = Emu(data, key="the-right-key")
    with pytest.raises(AuthError) as caught:
        strict.sync(config_for(tmp_path, data))
    assert caught.value.exit_code == 3 and KEY not in str(caught.value)
    other = {**data, "workspace": {**data["workspace"], "id": "65f0c0ffee0123456789ffff"}}
    with pytest.raises(AuthError, match="403"):
        Emu(data).sync(config_for(tmp_path, other))


def test_mistyped_fields_unknown_blocks_and_a_record_without_id(
        emu: Emu, cfg: Config, caplog: pytest.LogCaptureFixture) -> None:
    first, second, third = sorted(emu.published())[:3]
    emu.state.update_article(first, title=404, tags="x,y", blocks=[{"type": "poll"}],
                             language=["en"])
    emu.state.update_article(second, id=None)
    emu.state.update_article(third, title=None, content=None, blocks=None, description=None)
    result = emu.sync(cfg)
    ids = {a.id for a in result.workspace.articles}
    assert first in ids and second not in ids and third not in ids
    assert len(ids) == len(emu.published()) - 2
    article = next(a for a in result.workspace.articles if a.id == first)
    assert article.title == "404" and article.tags == ["x", "y"]
    assert "skipped article #" in caplog.text
    assert f"repaired article {first}: ignored its invalid language" in caplog.text
    assert article.content  # the detail record was repaired the same way
    assert f"skipped article {third}: it has neither a title nor a body" in caplog.text


def test_generated_workspace_paginates_completely(tmp_path: Path) -> None:
    data = generate_workspace(450, seed=3)
    emu = Emu(data)
    result = emu.sync(config_for(tmp_path, data))
    assert {a.id for a in result.workspace.articles} == emu.published()
    pages = emu.state.calls["GET /api/v2/workspaces/{workspaceId}/articles"]
    assert pages == -(-len(emu.published()) // 100)


def test_fetch_command_demo_and_dry_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    options = argparse.Namespace(config="site.toml", demo=True, refresh=False, dry_run=True)
    assert fetch_command(options) == 0
    plan_text = capsys.readouterr().out
    assert "detail request" in plan_text and "wrote nothing" in plan_text
    assert not (tmp_path / ".sitegen").exists()

    options.dry_run = False
    assert fetch_command(options) == 0
    out = capsys.readouterr().out
    assert "published articles" in out and "through API v2" in out
    assert "0 saved by the cache" in out
    assert (tmp_path / ".sitegen" / "demo" / "store.sqlite").is_file()
    count = int(out.split(" published articles")[0].rsplit(" ", 1)[-1])
    assert count > 5

    assert fetch_command(options) == 0
    assert f"0 detail requests made, {count} saved by the cache" in capsys.readouterr().out
    options.dry_run = True
    assert fetch_command(options) == 0
    assert f"0 detail requests ({count} unchanged" in capsys.readouterr().out
