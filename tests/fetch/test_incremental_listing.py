"""The incremental v2 article listing: read only what changed since the last sync, or all.

After a sync whose listing was exact, the next one reads the published articles newest
update first and stops at the last sync's newest `updatedAt`; the listing's totalCount
must then match, or the whole listing is walked. Every test compares what the
incremental sync left in the store with what a sync into an empty store leaves there
(`from_scratch`): the incremental answer must never differ from it.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from sitegen.config import Config
from sitegen.errors import UnreachableError
from sitegen.fetch.stored import open_config_store
from sitegen.fetch.sync import SyncResult, plan_sync
from tests.fetch.conftest import (
    KEY,
    FakeApi,
    dated_service,
    from_scratch,
    make_article,
    resync,
    stamp,
    stored,
)

LIST = "GET /api/v2/workspaces/{id}/articles"
DETAIL = "GET /api/v2/workspaces/{id}/articles/{id}"


def same_as_from_scratch(config: Config, fake: FakeApi, result: SyncResult) -> bool:
    """True when the store holds what a sync from an empty store makes of *fake* now,
    and the sync returned that very workspace."""
    held = stored(config)
    return held == result.workspace == from_scratch(config, fake)


@pytest.fixture
def synced(config: Config) -> FakeApi:
    fake = dated_service()
    first = resync(config, fake)
    assert first.workspace.articles_exact
    assert fake.calls[LIST] == 3  # 250 articles: the whole listing, 3 pages of 100
    return fake


def test_no_change_reads_one_page_of_the_listing(config: Config, synced: FakeApi) -> None:
    with open_config_store(config) as store:
        version = store.content_version()
    result = resync(config, synced)
    assert synced.calls[LIST] == 1 and synced.calls[DETAIL] == 0
    assert result.stats.details_saved == 250 and result.ledger.detail_saved == 250
    assert not result.changed  # nothing new: the stored content is as it was
    with open_config_store(config) as store:
        assert store.content_version() == version
    assert same_as_from_scratch(config, synced, result) and result.workspace.articles_exact


def test_an_edited_article_costs_one_page_and_one_detail(config: Config,
                                                         synced: FakeApi) -> None:
    synced.articles[9].update(title="Renamed", content="New body", updatedAt=stamp(5000))
    result = resync(config, synced)
    assert synced.calls[LIST] == 1 and synced.calls[DETAIL] == 1 and result.changed
    edited = next(a for a in result.workspace.articles if a.id == synced.articles[9]["id"])
    assert edited.title == "Renamed" and edited.content == "New body"
    assert same_as_from_scratch(config, synced, result)


def test_a_listing_field_changed_without_a_new_update_time_is_taken(
        config: Config, synced: FakeApi) -> None:
    """The listing shows a title the store does not have, with the stored `updatedAt`: the
    title is taken over the stored body."""
    synced.articles[-1]["title"] = "Quietly renamed"
    result = resync(config, synced)
    assert synced.calls[DETAIL] == 0
    renamed = next(a for a in result.workspace.articles if a.id == synced.articles[-1]["id"])
    assert renamed.title == "Quietly renamed" and renamed.content
    assert same_as_from_scratch(config, synced, result)


def test_a_newly_published_article_is_added(config: Config, synced: FakeApi) -> None:
    synced.articles.append(make_article(300, cluster=0, author=0, updated=stamp(6000)))
    result = resync(config, synced)
    assert synced.calls[LIST] == 1 and synced.calls[DETAIL] == 1
    assert synced.articles[-1]["id"] in {a.id for a in result.workspace.articles}
    assert same_as_from_scratch(config, synced, result)


@pytest.mark.parametrize("change", ["unpublished, dated", "unpublished, undated", "deleted"])
def test_an_article_gone_from_the_listing_makes_the_whole_walk(
        config: Config, synced: FakeApi, change: str) -> None:
    gone = synced.articles[100]
    if change == "deleted":
        synced.articles.remove(gone)
    else:
        gone["status"] = "draft"
        if change == "unpublished, dated":
            gone["updatedAt"] = stamp(7000)
    result = resync(config, synced)
    assert synced.calls[LIST] == 1 + 3  # the count falls short: then the whole listing
    assert gone["id"] not in {a.id for a in result.workspace.articles}
    assert result.stats.removed == 1
    assert same_as_from_scratch(config, synced, result)


def test_one_gone_and_one_new_do_not_cancel_out(config: Config, synced: FakeApi) -> None:
    synced.articles.remove(synced.articles[3])
    synced.articles.append(make_article(301, updated=stamp(8000)))
    result = resync(config, synced)
    assert synced.calls[LIST] == 1 + 3
    assert same_as_from_scratch(config, synced, result)


def test_an_inexact_store_is_followed_by_a_whole_walk(config: Config) -> None:
    fake = dated_service()
    fake.articles[7].update(title="", content="", blocks=[])  # listed, but unusable: skipped
    assert not resync(config, fake).workspace.articles_exact
    resync(config, fake)
    assert fake.calls[LIST] == 3
    fake.articles[7].update(title="Back", updatedAt=stamp(9000))
    assert resync(config, fake).workspace.articles_exact  # whole walk again; exact from now on
    resync(config, fake)
    assert fake.calls[LIST] == 1


def test_an_article_that_becomes_unusable_is_dropped(config: Config,
                                                     synced: FakeApi) -> None:
    synced.articles[20].update(title="", content="", blocks=[], updatedAt=stamp(9100))
    result = resync(config, synced)
    assert result.stats.removed == 1 and result.stats.skipped == 1
    assert synced.articles[20]["id"] not in {a.id for a in result.workspace.articles}
    assert not result.workspace.articles_exact
    assert same_as_from_scratch(config, synced, result)


def test_a_listing_without_total_count_is_walked_whole(config: Config,
                                                       synced: FakeApi) -> None:
    def no_total(page: list[Any], payload: dict[str, Any]) -> dict[str, Any]:
        payload["pagination"].pop("totalCount")
        return payload

    synced.page_hook = no_total
    result = resync(config, synced)
    assert synced.calls[LIST] == 1 + 3
    assert same_as_from_scratch(config, synced, result)


def test_the_dry_run_plans_with_the_incremental_listing(config: Config,
                                                        synced: FakeApi) -> None:
    synced.articles[0]["updatedAt"] = stamp(9200)
    synced.calls.clear()
    with open_config_store(config) as store:
        plan = plan_sync(config, store, key=KEY, transport=synced.transport())
    assert synced.calls[LIST] == 1 and synced.calls[DETAIL] == 0
    assert plan.details_needed == 1 and plan.details_saved == 249


def test_random_histories_match_a_sync_from_scratch(config: Config) -> None:
    """Edits, publications, unpublications and deletions, a few at a time, over 40 syncs."""
    rng = random.Random(20261122)
    fake = dated_service(230)
    resync(config, fake)
    clock, number = 10_000, 1_000
    for _ in range(40):
        for _ in range(rng.randint(0, 3)):
            clock += rng.randint(0, 2)  # equal update times happen too
            action = rng.choice(["edit", "edit", "publish", "unpublish", "delete", "revive"])
            pick = rng.choice(fake.articles)
            if action == "edit":
                pick.update(content=f"edit {clock}", updatedAt=stamp(clock))
            elif action == "publish":
                number += 1
                fake.articles.append(make_article(number, updated=stamp(clock)))
            elif action == "unpublish":
                pick.update(status="draft", updatedAt=stamp(clock))
            elif action == "delete" and len(fake.articles) > 1:
                fake.articles.remove(pick)
            elif action == "revive":
                pick.update(status="published", updatedAt=stamp(clock))
        result = resync(config, fake)
        assert same_as_from_scratch(config, fake, result)


def test_a_service_repeating_its_first_page_fails_the_sync_and_keeps_the_cache(
        config: Config, synced: FakeApi, monkeypatch: pytest.MonkeyPatch) -> None:
    """A listing that ignores `skip` is a failed request, not a shorter workspace."""
    real = FakeApi._page

    def first_page_only(self: FakeApi, key: str, items: list[Any],
                        query: dict[str, Any]) -> Any:
        return real(self, key, items, {**query, "skip": 0})

    for article in synced.articles:
        article["updatedAt"] = stamp(20_000)  # all newer than the store: every page is read
    cache = config.cache_path
    before = {p: p.read_bytes() for p in sorted(cache.rglob("*")) if p.is_file()}
    monkeypatch.setattr(FakeApi, "_page", first_page_only)
    with pytest.raises(UnreachableError) as caught:
        resync(config, synced)
    assert caught.value.exit_code == 5
    assert "repeats records already read" in str(caught.value)
    # retried within the budget, not walked to the 1,000-page cap
    assert synced.calls[LIST] < 40
    assert {p: p.read_bytes() for p in sorted(cache.rglob("*")) if p.is_file()} == before


def test_a_service_serving_smaller_pages_is_read_past_its_first_page(config: Config) -> None:
    """A page as long as the limit the service names is not the last one, even under 100."""
    fake = dated_service()
    fake.max_limit = 50
    resync(config, fake)
    for article in fake.articles[:70]:
        article.update(content="edited", updatedAt=stamp(9000))
    result = resync(config, fake)
    assert fake.calls[DETAIL] == 70
    assert same_as_from_scratch(config, fake, result)
