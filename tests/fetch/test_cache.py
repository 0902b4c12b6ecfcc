"""ContentCache: round trip, atomic writes, and discarding corrupt, foreign or old caches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sitegen.fetch.cache import CACHE_FORMAT, ContentCache
from sitegen.fetch.records import Article, HeaderBlock, UnknownBlock, WorkspaceInfo
from sitegen.workspace import Workspace
from tests.fetch.conftest import BASE, WS, make_article


def workspace(count: int = 3) -> Workspace:
    return Workspace(api_version="v2", info=WorkspaceInfo(id=WS, name="W"),
                     articles=[Article.model_validate(make_article(n)) for n in range(count)],
                     clusters=[], authors=None)


def test_round_trip_keeps_everything(tmp_path: Path) -> None:
    cache = ContentCache(tmp_path / ".sitegen", BASE, WS)
    original = workspace()
    assert cache.save(original)
    loaded = cache.load()
    assert loaded is not None and loaded.model_dump() == original.model_dump()
    assert loaded.clusters == [] and loaded.authors is None
    stamp = json.loads(cache.path.read_text())
    assert stamp["format"] == CACHE_FORMAT and stamp["api_url"] == BASE
    assert stamp["workspace_id"] == WS and stamp["api_version"] == "v2" and stamp["sitegen"]


def test_save_leaves_no_temporary_file_and_ignores_itself(tmp_path: Path) -> None:
    cache = ContentCache(tmp_path / "c", BASE, WS)
    cache.save(workspace())
    cache.save(workspace(5))
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == [".gitignore", "content.json"]
    assert len(cache.load().articles) == 5  # type: ignore[union-attr]


@pytest.mark.parametrize(("content", "reason"), [
    (b"{\"format\": 1, \"works", "not valid JSON"),
    (b"[]", "does not match"),
    (json.dumps({"format": 0, "workspace": {}}).encode(), "another cache format"),
])
def test_corrupt_or_old_caches_are_discarded_with_a_warning(
        tmp_path: Path, content: bytes, reason: str, caplog: pytest.LogCaptureFixture) -> None:
    cache = ContentCache(tmp_path, BASE, WS)
    cache.path.write_bytes(content)
    assert cache.load() is None
    assert reason in caplog.text and "discarded the content cache" in caplog.text


def test_a_future_format_is_discarded(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cache = ContentCache(tmp_path, BASE, WS)
    cache.save(workspace())
    data = json.loads(cache.path.read_text())
    data["format"] = CACHE_FORMAT + 1
    cache.path.write_text(json.dumps(data))
    assert cache.load() is None and "format" in caplog.text


@pytest.mark.parametrize(("url", "ws"), [
    ("https://other.test", WS), (BASE, "65f0c0ffee0123456789ffff")])
def test_foreign_caches_are_discarded(tmp_path: Path, url: str, ws: str,
                                      caplog: pytest.LogCaptureFixture) -> None:
    ContentCache(tmp_path, BASE, WS).save(workspace())
    assert ContentCache(tmp_path, url, ws).load() is None
    assert "another workspace or service" in caplog.text


def test_missing_cache_is_silent(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    assert ContentCache(tmp_path / "none", BASE, WS).load() is None
    assert caplog.text == ""


def test_unwritable_folder_is_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert not ContentCache(blocker, BASE, WS).save(workspace())
    assert "could not write the content cache" in caplog.text


def test_loaded_records_are_record_instances_and_unknown_blocks_survive(tmp_path: Path) -> None:
    raw = make_article(9)
    raw["blocks"] = [{"type": "image"}, {"type": "poll", "q": 1}, {"type": "header",
                                                                   "content": "H", "level": 3}]
    original = Workspace(api_version="v1", info=WorkspaceInfo(id=WS),
                         articles=[Article.model_validate(raw)])
    cache = ContentCache(tmp_path, BASE, WS)
    cache.save(original)
    loaded = cache.load()
    assert loaded is not None and loaded.model_dump() == original.model_dump()
    article = loaded.articles[0]
    assert isinstance(article, Article) and article.blocks is not None
    assert [type(b).__mro__[0 if type(b) is UnknownBlock else 1] for b in article.blocks] == [
        UnknownBlock, UnknownBlock, HeaderBlock]
    assert article.blocks[2].level == 3  # type: ignore[union-attr]


@pytest.mark.parametrize("corrupt", [False, True])
def test_loading_leaves_the_garbage_collector_as_it_found_it(tmp_path: Path,
                                                              corrupt: bool) -> None:
    import gc

    cache = ContentCache(tmp_path, BASE, WS)
    cache.save(workspace())
    if corrupt:
        cache.path.write_bytes(b"[]")
    assert gc.isenabled()
    assert (cache.load() is None) == corrupt
    assert gc.isenabled()
    gc.disable()
    try:
        cache.load()
        assert not gc.isenabled()
    finally:
        gc.enable()
