"""The content cache's index (`sitegen.fetch.cacheindex`) and the re-sync that plans from it.

The index must describe the cache exactly, be trusted only while the files are the
ones it describes, and never make a sync's answer differ from a sync from scratch;
when it misled a sync (a file damaged in place), the sync stops before saving.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from sitegen.config import Config
from sitegen.errors import CacheError
from sitegen.fetch.cache import CACHE_FILE, CHANGES_FILE, ContentCache
from sitegen.fetch.cacheindex import INDEX_FILE, listing_values, same_value
from sitegen.workspace import Workspace
from tests.fetch.conftest import BASE, WS, dated_service, from_scratch, make_article, resync, stamp

DETAIL = "GET /api/v2/workspaces/{id}/articles/{id}"


def dump(workspace: Workspace) -> dict[str, Any]:
    data = workspace.model_dump()
    data["articles"].sort(key=lambda article: article["id"])
    return data


def test_the_index_describes_the_cache(config: Config) -> None:
    fake = dated_service()
    resync(config, fake)
    fake.articles[3].update(title="Edited", updatedAt=stamp(5000))
    fake.articles.append(make_article(400, updated=stamp(5001)))
    resync(config, fake)  # planned from the index: the changes file now holds two articles
    cache = ContentCache.for_config(config)
    index = cache.load_index()
    workspace = cache.load()
    assert index is not None and workspace is not None and cache.state is not None
    assert (config.cache_path / CHANGES_FILE).exists()
    assert index.state == cache.state and set(index.state.changes) == {
        fake.articles[3]["id"], fake.articles[-1]["id"]}
    assert index.rows == {a.id: (a.id != fake.articles[-1]["id"], listing_values(a))
                          for a in workspace.articles}
    assert index.updated() == {a.id: a.updatedAt for a in workspace.articles}
    assert index.base_count == 250 and index.api_version == "v2" and index.articles_exact


def test_a_stale_index_is_not_trusted_and_is_written_again(config: Config,
                                                           base_reads: list[Path]) -> None:
    fake = dated_service()
    resync(config, fake)
    base = config.cache_path / CACHE_FILE
    os.utime(base, ns=(base.stat().st_atime_ns, base.stat().st_mtime_ns + 1_000_000))
    cache = ContentCache.for_config(config)
    assert cache.load_index() is None
    base_reads.clear()
    result = resync(config, fake)
    assert base_reads == [config.cache_path]  # read in full: nothing changed, nothing saved
    assert cache.load_index() is not None  # but indexed again for the next sync
    base_reads.clear()
    fake.articles[0].update(title="Edited", updatedAt=stamp(6000))
    assert dump(resync(config, fake).workspace) == dump(from_scratch(config, fake))
    assert base_reads.count(config.cache_path) == 1  # the read back alone
    assert result.stats.details_saved == 250


@pytest.mark.parametrize("damage", ["garbage", "cut short", "one byte flipped", "empty"])
def test_a_damaged_index_is_no_index(config: Config, damage: str) -> None:
    fake = dated_service(60)
    resync(config, fake)
    path = config.cache_path / INDEX_FILE
    data = path.read_bytes()
    damaged = {"garbage": b"\x00not an index" * 10, "cut short": data[:len(data) // 2],
               "one byte flipped": data[:-10] + bytes([data[-10] ^ 0x40]) + data[-9:],
               "empty": b""}[damage]
    path.write_bytes(damaged)
    assert ContentCache.for_config(config).load_index() is None
    fake.articles[5].update(content="New", updatedAt=stamp(7000))
    assert dump(resync(config, fake).workspace) == dump(from_scratch(config, fake))


def test_an_index_is_only_of_its_service_and_workspace(config: Config) -> None:
    resync(config, dated_service(30))
    folder = config.cache_path
    assert ContentCache(folder, BASE, WS).load_index() is not None
    assert ContentCache(folder, "https://other.test", WS).load_index() is None
    assert ContentCache(folder, BASE, "65f0c0ffee0123456789ffff").load_index() is None


def test_many_changes_rewrite_the_base(config: Config, base_reads: list[Path]) -> None:
    fake = dated_service()
    resync(config, fake)
    generation = ContentCache.for_config(config).load_index()
    for n, article in enumerate(fake.articles[:70]):  # past the changes file's 64
        article.update(content=f"Edit {n}", updatedAt=stamp(8000 + n))
    base_reads.clear()
    result = resync(config, fake)
    assert fake.calls[DETAIL] == 70 and base_reads == [config.cache_path]
    index = ContentCache.for_config(config).load_index()
    assert index is not None and generation is not None
    assert index.state.generation != generation.state.generation
    assert not (config.cache_path / CHANGES_FILE).exists() and not index.state.has_changes
    assert dump(result.workspace) == dump(from_scratch(config, fake))


def test_a_changes_file_damaged_in_place_stops_the_sync_then_it_recovers(
        config: Config) -> None:
    """Same size, mtime and inode: the index still matches, the changes file cannot be read."""
    fake = dated_service()
    resync(config, fake)
    fake.articles[1].update(content="First edit", updatedAt=stamp(9000))
    resync(config, fake)
    changes = config.cache_path / CHANGES_FILE
    before = changes.stat()
    with open(changes, "r+b") as handle:
        handle.write(b"#" * 16)
    os.utime(changes, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert ContentCache.for_config(config).load_index() is not None
    fake.articles[2].update(content="Second edit", updatedAt=stamp(9001))
    base = (config.cache_path / CACHE_FILE).read_bytes()
    with pytest.raises(CacheError, match="not what its index said .* run the command again"):
        resync(config, fake)
    assert (config.cache_path / CACHE_FILE).read_bytes() == base
    assert not (config.cache_path / INDEX_FILE).exists()
    assert dump(resync(config, fake).workspace) == dump(from_scratch(config, fake))


def test_a_workspace_read_back_from_a_vanished_cache_is_a_clear_error(config: Config) -> None:
    fake = dated_service(30)
    resync(config, fake)
    fake.articles[0].update(content="Edited", updatedAt=stamp(9500))
    result = resync(config, fake)
    assert result.api_version == "v2" and result.info.id == WS
    (config.cache_path / CACHE_FILE).unlink()
    with pytest.raises(CacheError, match="could not be read back .* --refresh"):
        result.workspace  # noqa: B018


def test_same_value_is_the_fields_equality() -> None:
    moment = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    elsewhere = moment.astimezone(timezone(timedelta(hours=2)))
    assert same_value(moment, elsewhere.isoformat())  # one instant, another offset
    assert not same_value(moment, (moment + timedelta(microseconds=1)).isoformat())
    assert not same_value(moment.replace(tzinfo=None), moment.isoformat())  # naive ≠ aware
    assert not same_value(moment, None)
    assert same_value(["a", "b"], ("a", "b")) and not same_value(["a"], ("a", "b"))
    assert same_value(None, None) and not same_value("x", None)
