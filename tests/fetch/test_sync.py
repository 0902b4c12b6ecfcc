"""sync(): v2 walk, incremental bodies, v1 fallback, tolerance, faults and the store contract."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from sitegen.config import Config
from sitegen.errors import AuthError, CacheError, QuotaError, UnreachableError
from sitegen.fetch.records import UnknownBlock
from sitegen.fetch.stored import open_config_store, peek_config_store
from sitegen.fetch.sync import SyncResult, plan_sync, sync
from sitegen.store import STORE_FILE
from tests.fetch.conftest import (
    KEY,
    FakeApi,
    make_article,
    make_config,
    offline,
    oid,
    run_sync,
    stored,
)

DETAIL = "/articles/{id}"


def content_version(config: Config) -> int:
    with open_config_store(config) as store:
        return store.content_version()


def details(fake: FakeApi) -> int:
    return fake.count("GET /api/v2/workspaces/{id}/articles/{id}") + fake.count(
        "GET /api/v1/articles/{id}")


def test_cold_sync_reads_every_published_article_with_its_body(config: Config,
                                                                fake: FakeApi) -> None:
    result = run_sync(config, fake)
    ws = result.workspace
    assert ws.api_version == "v2" and ws.info.name == "Test Works"
    assert {a.id for a in ws.articles} == fake.published_ids()
    assert all(a.content and a.blocks and a.meta for a in ws.articles)
    assert details(fake) == len(fake.published_ids()) == result.stats.details_made
    assert result.stats.articles == 10 and result.stats.clusters == 2
    assert result.stats.authors == 2 and result.stats.social_posts == 1
    assert ws.digest is not None and ws.digest.frequency == "weekly"
    assert result.ledger.version == "v2" and result.ledger.total == fake.total
    assert not result.from_cache and result.changed
    assert stored(config) == ws


def test_membership_comes_from_cluster_and_author_listings(config: Config,
                                                           fake: FakeApi) -> None:
    ws = run_sync(config, fake).workspace
    expected = {a["id"]: (a["clusterId"], a["authorIdentityId"]) for a in fake.articles}
    for article in ws.articles:
        assert (article.clusterId, article.authorIdentityId) == expected[article.id]
    assert fake.count("/clusters/{id}/articles") == 2
    assert fake.count("/author-identities/{id}/articles") == 2


def test_membership_listings_are_skipped_when_the_records_carry_it(config: Config,
                                                                   fake: FakeApi) -> None:
    fake.hide_membership = False
    ws = run_sync(config, fake).workspace
    assert fake.count("/clusters/{id}/articles") == 0
    assert {a.clusterId for a in ws.articles} == {oid("c", 0), oid("c", 1)}


def test_no_change_resync_makes_zero_detail_requests(config: Config, fake: FakeApi) -> None:
    first = run_sync(config, fake)
    fake.calls.clear()
    second = run_sync(config, fake)
    assert details(fake) == 0
    assert second.stats.details_saved == 10 and second.ledger.detail_saved == 10
    assert second.workspace == first.workspace and not second.changed


def test_one_changed_article_makes_exactly_one_detail_request(config: Config,
                                                              fake: FakeApi) -> None:
    run_sync(config, fake)
    fake.calls.clear()
    fake.articles[0].update(title="Renamed", content="New body",
                            updatedAt="2024-06-01T00:00:00.000Z")
    result = run_sync(config, fake)
    assert details(fake) == 1
    changed = next(a for a in result.workspace.articles if a.id == fake.articles[0]["id"])
    assert changed.title == "Renamed" and changed.content == "New body"


def test_an_unchanged_store_is_not_changed_and_a_changed_one_is(config: Config,
                                                                  fake: FakeApi) -> None:
    run_sync(config, fake)
    version = content_version(config)
    assert not run_sync(config, fake).changed and content_version(config) == version
    fake.articles[0].update(title="Renamed", updatedAt="2024-06-01T00:00:00.000Z")
    assert run_sync(config, fake).changed and content_version(config) == version + 1
    workspace = stored(config)
    assert workspace is not None and "Renamed" in {a.title for a in workspace.articles}
    assert not run_sync(config, fake, refresh=True).changed  # the same records again


def test_deleted_and_unpublished_articles_disappear(config: Config, fake: FakeApi) -> None:
    run_sync(config, fake)
    gone, unpublished = fake.articles[0]["id"], fake.articles[1]["id"]
    del fake.articles[0]
    fake.articles[0]["status"] = "draft"
    result = run_sync(config, fake)
    ids = {a.id for a in result.workspace.articles}
    assert gone not in ids and unpublished not in ids
    assert result.stats.removed == 2


def test_bodies_in_list_items_need_no_detail_request(config: Config, fake: FakeApi) -> None:
    fake.bodies_in_lists = True
    result = run_sync(config, fake)
    assert details(fake) == 0 and all(a.content for a in result.workspace.articles)


def test_refresh_ignores_the_store(config: Config, fake: FakeApi) -> None:
    run_sync(config, fake)
    fake.calls.clear()
    run_sync(config, fake, refresh=True)
    assert details(fake) == 10


def test_offline_reads_the_store_without_any_request(config: Config, fake: FakeApi) -> None:
    first = run_sync(config, fake)
    fake.calls.clear()
    with open_config_store(config) as store:
        result = sync(config, store, key=None, transport=fake.transport(), offline=True)
    assert fake.total == 0 and result.from_cache and result.ledger.total == 0
    assert result.workspace == first.workspace and not result.changed
    assert result.stats.articles == 10 and result.ledger.version == "v2"


def test_offline_with_an_empty_store_is_a_cache_error(config: Config, fake: FakeApi) -> None:
    with open_config_store(config) as store, pytest.raises(CacheError,
                                                           match="without --offline") as caught:
        sync(config, store, key=None, transport=fake.transport(), offline=True)
    assert caught.value.exit_code == 1 and fake.total == 0


def test_offline_and_refresh_together_are_a_usage_error(config: Config, fake: FakeApi) -> None:
    with pytest.raises(Exception, match="contradict") as caught:
        run_sync(config, fake, offline=True, refresh=True)
    assert getattr(caught.value, "exit_code", None) == 2 and fake.total == 0


def test_bad_records_are_skipped_one_by_one(config: Config, fake: FakeApi,
                                           caplog: pytest.LogCaptureFixture) -> None:
    good = make_article(50)
    nothing = {"id": oid("a", 51), "status": "published", "updatedAt": "2024-01-01T00:00:00Z"}
    fake.articles += [good, {**nothing}]
    fake.raw_article_items = [
        {"title": "no id"}, "not an object", {"id": {"$oid": "x"}, "title": "bad id"},
        {k: v for k, v in good.items() if k not in ("content", "blocks", "meta")}, nothing,
    ]
    result = run_sync(config, fake)
    assert [a.id for a in result.workspace.articles] == [good["id"]]
    text = caplog.text
    assert "article #1" in text and "article #2" in text and "article #3" in text
    assert f"skipped article {nothing['id']}: it has neither a title nor a body" in text
    assert result.stats.skipped == 1


def test_unknown_enums_block_types_and_mistyped_fields_are_tolerated(config: Config,
                                                                     fake: FakeApi) -> None:
    odd = make_article(60)
    odd.update(title=12345, tags="x, y", language=None,
               blocks=[{"type": "quiz", "q": "?"}, {"type": "header", "content": "H",
                                                    "level": "9"}, {"type": "image"}])
    odd.pop("description")
    fake.articles.append(odd)
    result = run_sync(config, fake)
    article = next(a for a in result.workspace.articles if a.id == odd["id"])
    assert article.title == "12345" and article.tags == ["x", "y"]
    assert isinstance(article.blocks, list)
    assert isinstance(article.blocks[0], UnknownBlock) and article.blocks[1].level == 6  # type: ignore[union-attr]
    assert isinstance(article.blocks[2], UnknownBlock)
    assert {a.status for a in result.workspace.agents} == {"active", "sleepy"}
    # the store gives back the repaired records exactly, and saving them again changes nothing
    assert offline(config).workspace == result.workspace
    assert not run_sync(config, fake).changed


def test_digest_failure_is_a_warning_and_keeps_the_last_known(
        config: Config, fake: FakeApi, caplog: pytest.LogCaptureFixture) -> None:
    run_sync(config, fake)
    fake.digest_status = 403
    result = run_sync(config, fake)
    assert "could not read the digest settings" in caplog.text
    assert result.workspace.digest is not None and result.workspace.digest.subject == "News"


def test_v2_absent_falls_back_to_v1_with_the_same_articles(
        tmp_path: Path, fake: FakeApi, caplog: pytest.LogCaptureFixture) -> None:
    by_v2 = run_sync(make_config(tmp_path / "a"), fake).workspace
    fake.v2 = False
    fake.calls.clear()
    result = run_sync(make_config(tmp_path / "b"), fake)
    ws = result.workspace
    assert ws.api_version == "v1" and result.ledger.version == "v1"
    assert {a.id for a in ws.articles} == {a.id for a in by_v2.articles}
    assert ws.clusters is None and ws.authors is None and ws.social_posts is None
    assert caplog.text.count("has no clusters, author identities or social posts") == 1
    assert fake.count("GET /api/v2/workspaces/{id}") == 1
    assert {a.id: a.content for a in ws.articles} == {a.id: a.content for a in by_v2.articles}


def test_forced_v2_that_is_absent_is_unreachable(tmp_path: Path, fake: FakeApi) -> None:
    fake.v2 = False
    with pytest.raises(UnreachableError, match="no v2 API") as caught:
        run_sync(make_config(tmp_path, version="v2"), fake)
    assert caught.value.exit_code == 5
    assert fake.count("/api/v1") == 0


def test_forced_v1_never_asks_v2(tmp_path: Path, fake: FakeApi) -> None:
    result = run_sync(make_config(tmp_path, version="v1"), fake)
    assert result.workspace.api_version == "v1" and fake.count("/api/v2") == 0


def test_auto_does_not_fall_back_on_other_failures(config: Config, fake: FakeApi) -> None:
    fake.fail(f"/workspaces/{config.api.workspace}", 500, count=99)
    with pytest.raises(UnreachableError):
        run_sync(config, fake)
    assert fake.count("/api/v1") == 0


def test_402_mid_sync_leaves_the_store_untouched(config: Config, fake: FakeApi) -> None:
    run_sync(config, fake)
    before, version = stored(config), content_version(config)
    fake.articles[0]["updatedAt"] = "2025-01-01T00:00:00.000Z"
    fake.articles[1]["updatedAt"] = "2025-01-01T00:00:00.000Z"
    fake.fail(fake.articles[1]["id"], 402, body=b'{"error": "API access quota exceeded"}')
    with pytest.raises(QuotaError, match="quota") as caught:
        run_sync(config, fake)
    assert caught.value.exit_code == 4
    assert stored(config) == before and content_version(config) == version


def test_a_failed_cold_sync_saves_nothing(config: Config, fake: FakeApi) -> None:
    fake.fail("/clusters/", 500, count=99)
    with pytest.raises(UnreachableError):
        run_sync(config, fake)
    assert stored(config) is None


@pytest.mark.parametrize("status", [401, 403])
def test_refused_key_is_an_auth_error(config: Config, fake: FakeApi, status: int) -> None:
    fake.fail("/articles", status, count=99)
    with pytest.raises(AuthError) as caught:
        run_sync(config, fake)
    assert caught.value.exit_code == 3 and KEY not in str(caught.value)


@pytest.mark.parametrize("fault", ["html", "malformed", "reset", "timeout", "429"])
def test_transient_faults_mid_sync_are_survived(config: Config, fake: FakeApi,
                                                fault: str) -> None:
    target = fake.articles[3]["id"]
    if fault == "html":
        fake.fail(target, 200, body=b"<html>maintenance</html>", content_type="text/html")
    elif fault == "malformed":
        fake.fail("/articles", 200, body=b'{"articles": [{"id": ', count=2)
    elif fault == "reset":
        fake.raise_on("/clusters", httpx.ReadError("Connection reset by peer"), count=2)
    elif fault == "timeout":
        fake.raise_on(target, httpx.ReadTimeout("timed out"))
    else:
        fake.fail("/api/v2", 429, count=4, headers={"Retry-After": "0"})
    result = run_sync(config, fake)
    assert {a.id for a in result.workspace.articles} == fake.published_ids()
    assert result.ledger.retries >= 1


def test_endless_has_next_page_is_bounded(config: Config, fake: FakeApi) -> None:
    fake.articles = [make_article(n) for n in range(1, 251)]

    def endless(page: list[Any], payload: dict[str, Any]) -> dict[str, Any]:
        payload["pagination"]["hasNextPage"] = True
        payload["pagination"].pop("totalPages")
        return payload

    fake.page_hook = endless
    result = run_sync(config, fake)
    assert len(result.workspace.articles) == 250
    assert fake.calls["GET /api/v2/workspaces/{id}/articles"] == 3  # the short page ends it


def test_sync_is_safe_from_a_thread(config: Config, fake: FakeApi) -> None:
    """(The store is opened in that thread: an sqlite3 connection stays in its own.)"""
    results: list[SyncResult] = []
    worker = threading.Thread(target=lambda: results.append(run_sync(config, fake)))
    worker.start()
    worker.join(30)
    assert results and len(results[0].workspace.articles) == 10


def test_dry_run_spends_only_list_calls(config: Config, fake: FakeApi) -> None:
    run_sync(config, fake)
    fake.articles[0]["updatedAt"] = "2025-01-01T00:00:00.000Z"
    fake.calls.clear()
    before = (config.cache_path / STORE_FILE).read_bytes()
    store = peek_config_store(config)
    assert store is not None
    with store:
        plan = plan_sync(config, store, key=KEY, transport=fake.transport())
    assert details(fake) == 0 and plan.cached
    assert plan.details_needed == 1 and plan.details_saved == 9
    assert plan.list_calls == fake.total and plan.total == fake.total + 1
    assert (config.cache_path / STORE_FILE).read_bytes() == before
    fake.calls.clear()
    run_sync(config, fake)
    assert fake.total == plan.total


def test_dry_run_without_a_store_plans_a_cold_sync_and_creates_none(
        config: Config, fake: FakeApi) -> None:
    assert peek_config_store(config) is None
    plan = plan_sync(config, None, key=KEY, transport=fake.transport())
    assert plan.details_needed == 10 and plan.details_saved == 0 and not plan.cached
    assert not config.cache_path.exists()


def test_missing_key_is_a_config_error_before_any_request(
        config: Config, fake: FakeApi, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SITEGEN_API_KEY", raising=False)
    with open_config_store(config) as store, pytest.raises(
            Exception, match="SITEGEN_API_KEY") as caught:
        sync(config, store, key=None, transport=fake.transport())
    assert getattr(caught.value, "exit_code", None) == 2 and fake.total == 0


def test_no_key_in_logs_or_errors_of_failing_syncs(
        config: Config, fake: FakeApi, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    texts: list[str] = []
    for status in (400, 401, 402, 403, 500):
        fake.faults.clear()
        fake.fail("/agents", status, count=99,
                  body=f'{{"error": "x", "details": "{KEY}"}}'.encode())
        with pytest.raises(Exception) as caught:
            run_sync(config, fake)
        texts.append(str(caught.value))
    assert all(KEY not in text for text in [*texts, caplog.text])


def test_a_sync_runs_on_the_standard_event_loop() -> None:
    """uvloop is no dependency (no target needed it): a sync runs on asyncio's own loop even
    where uvloop happens to be installed."""
    import asyncio

    from sitegen.fetch.sync import run_async

    async def loop_module() -> str:
        return type(asyncio.get_running_loop()).__module__

    assert run_async(loop_module()).startswith("asyncio.")
