"""The workspace in the content store: round trips, one transaction, damage, foreign stores.

`sitegen.fetch.stored` maps a `Workspace` onto the store's tables; the sync reads the
previous content from there and saves the new content in one transaction. These tests
hold the store's promises as a user meets them: a killed save leaves the previous
content, a damaged or truncated store is fetched again online and named offline, a
store of another workspace is never used, and a listing that ends early keeps what the
store had.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sitegen.config import Config
from sitegen.errors import CacheError, UnreachableError
from sitegen.fetch.records import Agent, Article, Cluster, DigestSettings, WorkspaceInfo
from sitegen.fetch.stored import (
    REST_KINDS,
    config_source,
    load_workspace,
    open_config_store,
    save_workspace,
)
from sitegen.store import STORE_FILE
from sitegen.storefile import open_store
from sitegen.workspace import Workspace
from tests.fetch.conftest import (
    FakeApi,
    dated_service,
    make_article,
    make_config,
    offline,
    resync,
    run_sync,
    stored,
)

SOURCE = "https://cas.test|ws"
LIST = "GET /api/v2/workspaces/{id}/articles"
DETAIL = "GET /api/v2/workspaces/{id}/articles/{id}"


def workspace(count: int, *, body: str = "", **fields: Any) -> Workspace:
    """A v2 workspace of *count* articles (each body padded with *body*)."""
    articles = []
    for n in range(count):
        raw = make_article(n)
        raw["content"] += body
        articles.append(Article.model_validate(raw))
    return Workspace(api_version="v2", info=WorkspaceInfo(id="ws", name="W"),
                     agents=[Agent(id="b1", name="Writer")], articles=articles,
                     clusters=[Cluster(id="c1", name="Topic")], authors=[], social_posts=[],
                     digest=DigestSettings(enabled=True), **fields)


# --- the mapping -----------------------------------------------------------------------


def test_every_workspace_field_has_its_place_in_the_store() -> None:
    """A field added to `Workspace` without a place here would be lost at every save."""
    placed = {*REST_KINDS, "articles", "api_version", "articles_exact"}
    assert placed == set(Workspace.model_fields)


@pytest.mark.parametrize("exact", [True, False])
def test_a_workspace_reads_back_exactly(tmp_path: Path, exact: bool) -> None:
    saved = workspace(5, articles_exact=exact)
    with open_store(tmp_path, SOURCE) as store:
        assert load_workspace(store) is None  # nothing saved yet
        assert save_workspace(store, saved)
    with open_store(tmp_path, SOURCE) as store:
        assert load_workspace(store) == saved


def test_none_lists_stay_none_and_empty_lists_stay_empty(tmp_path: Path) -> None:
    """v1 has no clusters, authors or social posts (None), which is not "none of them" ([])."""
    v1 = workspace(2).model_copy(update={"api_version": "v1", "clusters": None,
                                         "authors": None, "social_posts": None,
                                         "digest": None})
    with open_store(tmp_path, SOURCE) as store:
        save_workspace(store, v1)
        loaded = load_workspace(store)
    assert loaded is not None and loaded.api_version == "v1"
    assert (loaded.clusters, loaded.authors, loaded.social_posts, loaded.digest) == (
        None, None, None, None)
    with open_store(tmp_path, SOURCE) as store:
        save_workspace(store, workspace(2))
        loaded = load_workspace(store)
    assert loaded is not None and loaded.authors == [] and loaded.social_posts == []


def test_repaired_records_read_back_as_they_were_saved(tmp_path: Path) -> None:
    """Unknown, broken and non-object blocks and mistyped fields: saved again, nothing changes."""
    raw = make_article(1)
    raw.update(title=12345, tags="x, y", language=None, createdAt="garbage",
               updatedAt="2024-05-01T12:00:00+02:00",
               blocks=[{"type": "quiz", "q": "?"}, "not an object", {"type": "image"},
                       {"type": "header", "content": "H", "level": "9"}])
    odd = workspace(0).model_copy(update={"articles": [Article.model_validate(raw)]})
    with open_store(tmp_path, SOURCE) as store:
        assert save_workspace(store, odd)
        loaded = load_workspace(store)
        assert loaded == odd
        assert loaded is not None and not save_workspace(store, loaded)


def test_the_content_version_grows_only_when_the_content_changes(tmp_path: Path) -> None:
    first = workspace(3)
    with open_store(tmp_path, SOURCE) as store:
        assert save_workspace(store, first) and store.content_version() == 1
        assert not save_workspace(store, workspace(3)) and store.content_version() == 1
        renamed = first.articles[1].model_copy(update={"title": "Renamed"})
        changed = first.model_copy(update={"articles": [first.articles[0], renamed]})
        assert save_workspace(store, changed) and store.content_version() == 2
        loaded = load_workspace(store)
    assert loaded is not None and [a.title for a in loaded.articles] == ["Article 0", "Renamed"]


def test_a_sync_writes_only_the_articles_that_are_not_the_stored_records(
        tmp_path: Path) -> None:
    """The articles a sync kept from the store are its rows already: only the others are
    written (a stored row in another layout stays as it is), and the content is exact."""
    with open_store(tmp_path, SOURCE) as store:
        save_workspace(store, workspace(3))
        with store.transaction():  # (the same record in another layout, sealed: what an
            for article_id, record in list(store.article_records()):  # older sitegen wrote)
                store.db.execute("UPDATE articles SET record = ?, tag = ? WHERE id = ?", (
                    " " + record, store.seals.tag("article", article_id, b" " + record.encode()),
                    article_id))
        loaded = load_workspace(store)
        assert loaded is not None
        renamed = loaded.articles[1].model_copy(update={"title": "Renamed"})
        synced = loaded.model_copy(update={"articles": [loaded.articles[0], renamed]})
        assert save_workspace(store, synced, loaded)
        rows = dict(store.article_records())
        assert rows[loaded.articles[0].id].startswith(" ")  # kept: not written again
        assert rows[renamed.id] == renamed.model_dump_json()
        assert set(rows) == {loaded.articles[0].id, renamed.id}  # the third one gone
        assert load_workspace(store) == synced
        reloaded = load_workspace(store)
        assert reloaded is not None and not save_workspace(store, reloaded, reloaded)
        store.db.execute("DELETE FROM articles WHERE id = ?", (renamed.id,))  # (another sync)
        again = load_workspace(store)
        assert again is not None and len(again.articles) == 1
        assert save_workspace(store, synced, synced)  # a row it kept has gone: all written
        assert load_workspace(store) == synced


class Stalling:
    """A store's connection that acts after the first write inside a transaction."""

    def __init__(self, db: Any, act: Any) -> None:
        self.db = db
        self.act = act
        self.inside = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.db, name)

    def __enter__(self) -> Any:
        self.inside = True
        return self.db.__enter__()

    def __exit__(self, *exc: Any) -> Any:
        self.inside = False
        return self.db.__exit__(*exc)

    def executemany(self, sql: str, rows: Any) -> Any:
        cursor = self.db.executemany(sql, rows)
        if self.inside:
            self.act()
        return cursor


def test_an_error_inside_the_save_keeps_the_previous_content(tmp_path: Path) -> None:
    before = workspace(4)
    with open_store(tmp_path, SOURCE) as store:
        save_workspace(store, before)

        def fail() -> None:
            raise RuntimeError("injected")

        real = store.db
        store.db = Stalling(real, fail)  # type: ignore[assignment]
        with pytest.raises(RuntimeError, match="injected"):
            save_workspace(store, workspace(9, body=" changed"))
        store.db = real
        assert load_workspace(store) == before and store.content_version() == 1


_CHILD = """
import sys, time
from pathlib import Path
from tests.fetch.test_stored import SOURCE, Stalling, workspace
from sitegen.fetch.stored import save_workspace
from sitegen.storefile import open_store

store = open_store(Path(sys.argv[1]), SOURCE)
def stall():
    print("inside the transaction", flush=True)
    time.sleep(120)
store.db = Stalling(store.db, stall)
save_workspace(store, workspace(3000, body=" padding" * 400))
print("saved", flush=True)
"""


def test_a_save_killed_midway_leaves_the_previous_content(tmp_path: Path) -> None:
    """SIGKILL inside the save's transaction (after megabytes of rows were written)."""
    before = workspace(4)
    with open_store(tmp_path, SOURCE) as store:
        save_workspace(store, before)
    root = Path(__file__).resolve().parents[2]
    with subprocess.Popen([sys.executable, "-c", _CHILD, str(tmp_path)], cwd=root,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as child:
        assert child.stdout is not None
        line = child.stdout.readline()
        os.kill(child.pid, signal.SIGKILL)
        _, errors = child.communicate(timeout=30)
    assert line == "inside the transaction\n", errors
    assert child.returncode == -signal.SIGKILL
    assert (tmp_path / f"{STORE_FILE}-journal").exists()  # killed with a hot journal
    with open_store(tmp_path, SOURCE) as store:
        assert not store.recreated  # rolled back, not started afresh
        assert load_workspace(store) == before and store.content_version() == 1


# --- the sync over a damaged, truncated or foreign store -------------------------------


def corrupt_one_article(config: Config) -> None:
    with open_config_store(config) as store, store.db:
        store.db.execute("UPDATE articles SET record = '{\"id\": ' WHERE id = "
                         "(SELECT min(id) FROM articles)")


def test_a_damaged_row_is_left_out_offline_and_fetched_again_online(
        config: Config, fake: FakeApi) -> None:
    """A record that does not verify is a cache miss (#48): offline the build goes without
    it, online that one article is fetched again; never a failed build."""
    first = run_sync(config, fake).workspace
    corrupt_one_article(config)
    without = offline(config).workspace
    assert len(without.articles) == len(first.articles) - 1
    assert [a.id for a in without.articles] == [a.id for a in first.articles][1:]
    result = resync(config, fake)
    assert result.stats.details_made == 1 and result.workspace == first  # that one again
    assert offline(config).workspace == first  # and the store is whole again


def truncate(config: Config, keep: int | str) -> Path:
    """Cut *config*'s store file short (to *keep* bytes, or half its size)."""
    path = config.cache_path / STORE_FILE
    size = path.stat().st_size
    assert size > 8192  # several pages: cutting it in half loses some
    with path.open("r+b") as file:
        file.truncate(size // 2 if keep == "half" else int(keep))
    return path


@pytest.mark.parametrize("keep", [0, 100, "half"])
def test_a_truncated_store_is_named_in_one_line_offline(config: Config, fake: FakeApi,
                                                        keep: int | str) -> None:
    run_sync(config, fake)
    path = truncate(config, keep)
    with pytest.raises(CacheError) as caught:
        offline(config)
    message = str(caught.value)
    assert "--refresh" in message and "\n" not in message and str(path) in message
    assert caught.value.exit_code == 1


@pytest.mark.parametrize("keep", [0, 100, "half"])
def test_a_truncated_store_is_fetched_again_online(config: Config, fake: FakeApi,
                                                  keep: int | str) -> None:
    first = run_sync(config, fake).workspace
    truncate(config, keep)
    result = resync(config, fake)
    assert result.stats.details_made == 10 and result.workspace == first
    assert offline(config).workspace == first


def test_a_store_of_another_workspace_is_never_used_and_waits_beside_until_built_again(
        tmp_path: Path, fake: FakeApi) -> None:
    """A typo in [api], or a turn against the emulator, must cost neither the workspace's
    whole content again (its quota) nor what only the store keeps (redirect history,
    deploy state): the other source's store is set aside and comes back."""
    ours = make_config(tmp_path)
    other = make_config(tmp_path, url="https://elsewhere.test")  # same .sitegen folder
    assert ours.cache_path == other.cache_path
    first = run_sync(ours, fake).workspace
    result = resync(other, fake)
    assert result.stats.details_made == 10 and result.stats.details_saved == 0  # not ours
    assert sorted(p.name for p in ours.cache_path.glob("*.sqlite")) == [
        f"store-{hashlib.sha256(config_source(ours).encode()).hexdigest()[:16]}.sqlite",
        STORE_FILE]
    assert offline(ours).workspace == first  # back, without a request
    assert resync(ours, fake).stats.details_made == 0  # and up to date: nothing fetched
    assert offline(other).workspace == result.workspace  # the other one waited in turn
    folder = tmp_path / "typo"  # a store that never got content (a first sync that failed)
    open_store(folder, "https://cas.example.test|a").close()  # is not kept beside
    with open_store(folder, "https://cas.example.test|b") as fresh:
        assert fresh.recreated and not fresh.discarded  # (nothing was lost: no "damaged")
    assert [p.name for p in folder.iterdir()] == [STORE_FILE]


# --- a listing that ends early -----------------------------------------------------------


def end_early(fake: FakeApi, how: str) -> None:
    """Make the whole article listing end after its first page (of 100).

    "short of its total": the first page says it is the last one (`hasNextPage: false`)
    while its `totalCount` still says 250; "repeating its first page": every page is the
    first one again.
    """
    def hook(page: list[Any], payload: dict[str, Any]) -> dict[str, Any]:
        if how == "short of its total" and "articles" in payload:
            payload["pagination"].update(hasNextPage=False, totalPages=1)
        return payload

    real = fake._page

    def page(key: str, items: list[Any], query: dict[str, Any]) -> Any:
        if how == "repeating its first page" and key == "articles":
            query = {**query, "skip": 0}
        return real(key, items, query)

    fake.page_hook = hook
    fake._page = page  # type: ignore[method-assign]


def test_refresh_with_a_listing_that_ends_early_keeps_what_it_could_not_list(
        config: Config, caplog: pytest.LogCaptureFixture) -> None:
    fake = dated_service()
    before = resync(config, fake).workspace
    fake.articles[5].update(title="Renamed", updatedAt="2025-01-01T00:00:00.000Z")
    end_early(fake, "short of its total")
    result = resync(config, fake, refresh=True)
    assert fake.calls[DETAIL] == 100  # --refresh: every listed article's body again
    assert {a.id for a in result.workspace.articles} == {a.id for a in before.articles}
    assert result.stats.removed == 0 and not result.workspace.articles_exact
    assert stored(config) == result.workspace
    titles = {a.id: a.title for a in result.workspace.articles}
    assert titles[fake.articles[5]["id"]] == "Renamed"  # listed: fresh
    assert "ended after 100 of the 250 articles it announced" in caplog.text


def test_refresh_with_a_listing_that_repeats_its_first_page_fails_and_keeps_the_store(
        config: Config) -> None:
    fake = dated_service()
    before = resync(config, fake).workspace
    end_early(fake, "repeating its first page")
    with pytest.raises(UnreachableError) as caught:
        resync(config, fake, refresh=True)
    assert caught.value.exit_code == 5
    assert stored(config) == before


def test_a_whole_listing_short_of_its_total_takes_nothing_for_deleted(config: Config) -> None:
    """Without --refresh too: the walk ended early, so the rest is not known to be gone."""
    fake = dated_service()
    fake.articles[7].update(title="", content="", blocks=[])  # unusable: the store is inexact
    resync(config, fake)
    end_early(fake, "short of its total")
    result = resync(config, fake)
    assert fake.calls[LIST] <= 3  # the first page says it is the last: the walk ends there
    assert len(result.workspace.articles) == 249 and result.stats.removed == 0

