"""ContentCache: round trip, atomic writes, and discarding corrupt, foreign or old caches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sitegen.fetch.cache import CACHE_FORMAT, CHANGES_FILE, MIN_CHANGES, ContentCache
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
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == [
        ".gitignore", "content-changes.json", "content-index.bin", "content.json"]
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


# --- the changes file ---------------------------------------------------------------


def _by_id(ws: Workspace) -> list[dict[str, object]]:
    return sorted((a.model_dump() for a in ws.articles), key=lambda a: str(a["id"]))


def _edited(article: Article, text: str) -> Article:
    return Article.model_validate({**article.model_dump(), "content": text})


def test_a_few_changed_articles_go_to_the_changes_file_only(tmp_path: Path) -> None:
    ContentCache(tmp_path, BASE, WS).save(workspace(200))
    base_bytes = (tmp_path / "content.json").read_bytes()
    cache = ContentCache(tmp_path, BASE, WS)
    loaded = cache.load()
    assert loaded is not None
    articles = [_edited(a, "edited") if n == 7 else a for n, a in enumerate(loaded.articles)]
    del articles[3]
    articles.append(Article.model_validate(make_article(500)))
    after = loaded.model_copy(update={"articles": articles, "clusters": None})
    assert cache.save(after)
    assert (tmp_path / "content.json").read_bytes() == base_bytes
    changes = json.loads((tmp_path / CHANGES_FILE).read_text())
    assert sorted(a["id"] for a in changes["workspace"]["articles"]) == sorted(
        [loaded.articles[7].id, make_article(500)["id"]])
    assert changes["removed"] == [loaded.articles[3].id]
    again = ContentCache(tmp_path, BASE, WS).load()
    assert again is not None and _by_id(again) == _by_id(after) and again.clusters is None
    assert again.model_dump(exclude={"articles"}) == after.model_dump(exclude={"articles"})


def test_many_changes_rewrite_the_base_and_remove_the_changes_file(tmp_path: Path) -> None:
    ContentCache(tmp_path, BASE, WS).save(workspace(200))
    first = json.loads((tmp_path / "content.json").read_text())["generation"]
    cache = ContentCache(tmp_path, BASE, WS)
    loaded = cache.load()
    assert loaded is not None
    cache.save(loaded.model_copy(update={"articles": [
        _edited(a, "a") if n < 2 else a for n, a in enumerate(loaded.articles)]}))
    assert (tmp_path / CHANGES_FILE).exists()
    cache = ContentCache(tmp_path, BASE, WS)
    loaded = cache.load()
    assert loaded is not None
    edited = [_edited(a, "b") if n < MIN_CHANGES + 1 else a
              for n, a in enumerate(loaded.articles)]
    cache.save(loaded.model_copy(update={"articles": edited}))
    assert not (tmp_path / CHANGES_FILE).exists()
    assert json.loads((tmp_path / "content.json").read_text())["generation"] != first
    again = ContentCache(tmp_path, BASE, WS).load()
    assert again is not None and [a.content for a in again.articles].count("b") == MIN_CHANGES + 1


def test_a_changes_file_of_another_base_is_ignored_silently(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    ContentCache(tmp_path, BASE, WS).save(workspace(100))
    cache = ContentCache(tmp_path, BASE, WS)
    loaded = cache.load()
    assert loaded is not None
    cache.save(loaded.model_copy(update={"articles": [
        _edited(a, "old edit") if n == 0 else a for n, a in enumerate(loaded.articles)]}))
    stale = (tmp_path / CHANGES_FILE).read_bytes()
    ContentCache(tmp_path, BASE, WS).save(workspace(100))  # a new base (as --refresh does)
    assert not (tmp_path / CHANGES_FILE).exists()
    (tmp_path / CHANGES_FILE).write_bytes(stale)  # as if a crash had left it
    again = ContentCache(tmp_path, BASE, WS).load()
    assert again is not None and "old edit" not in {a.content for a in again.articles}
    assert caplog.text == ""


@pytest.mark.parametrize("damage", [b"{\"format\": 1, \"wor", b"[]"])
def test_a_damaged_changes_file_is_a_warning_and_the_base_is_used(
        tmp_path: Path, damage: bytes, caplog: pytest.LogCaptureFixture) -> None:
    ContentCache(tmp_path, BASE, WS).save(workspace(10))
    (tmp_path / CHANGES_FILE).write_bytes(damage)
    loaded = ContentCache(tmp_path, BASE, WS).load()
    assert loaded is not None and len(loaded.articles) == 10
    assert "ignored the content cache's changes file" in caplog.text


def test_random_histories_load_what_was_saved(tmp_path: Path) -> None:
    """Edits, deletions and additions, saved by a cache that loaded: a fresh load agrees."""
    import random

    rng = random.Random(7)
    ContentCache(tmp_path, BASE, WS).save(workspace(120))
    next_number, kinds = 1000, set()
    for step in range(60):
        cache = ContentCache(tmp_path, BASE, WS)
        current = cache.load()
        assert current is not None
        articles = list(current.articles)
        for _ in range(rng.choice([0, 1, 2, 5, 30])):
            what = rng.random()
            if what < 0.5 and articles:
                n = rng.randrange(len(articles))
                articles[n] = _edited(articles[n], f"step {step} edit {n}")
            elif what < 0.75 and articles:
                del articles[rng.randrange(len(articles))]
            else:
                articles.append(Article.model_validate(make_article(next_number)))
                next_number += 1
        rng.shuffle(articles)
        saved = current.model_copy(update={"articles": articles})
        assert cache.save(saved)
        kinds.add((tmp_path / CHANGES_FILE).exists())
        fresh = ContentCache(tmp_path, BASE, WS).load()
        assert fresh is not None and _by_id(fresh) == _by_id(saved)
    assert kinds == {True, False}  # both kinds of save happened


def test_cached_blocks_are_made_objects_only_when_read(tmp_path: Path) -> None:
    from sitegen.lazylist import LazyList

    cache = ContentCache(tmp_path / ".sitegen", BASE, WS)
    original = workspace(5)
    assert cache.save(original)
    before = cache.path.read_bytes()
    loaded = cache.load()
    assert loaded is not None
    blocks = [a.blocks for a in loaded.articles]
    assert all(isinstance(b, LazyList) and not b.loaded and len(b) == 1 for b in blocks)
    assert blocks[0][0].model_dump() == original.articles[0].blocks[0].model_dump()  # type: ignore[index]
    assert blocks[0].loaded and not blocks[1].loaded  # type: ignore[union-attr]
    # Rewritten whole, read or not, the base holds the very same articles.
    fresh = ContentCache(tmp_path / ".sitegen", BASE, WS)
    assert fresh.save(loaded)
    after = json.loads(cache.path.read_bytes())
    assert after["workspace"] == json.loads(before)["workspace"]
    again = cache.load()
    assert again is not None and again.model_dump() == original.model_dump()


def test_a_damaged_cached_block_is_one_clear_error_when_read(tmp_path: Path) -> None:
    from sitegen.errors import CacheError

    cache = ContentCache(tmp_path / ".sitegen", BASE, WS)
    assert cache.save(workspace(2))
    data = json.loads(cache.path.read_text())
    data["workspace"]["articles"][1]["blocks"] = [{"type": "header", "content": ["not text"]}]
    cache.path.write_text(json.dumps(data))
    loaded = cache.load()
    assert loaded is not None and loaded.articles[0].blocks  # the other article reads fine
    with pytest.raises(CacheError, match=r"sitegen build --refresh"):
        list(loaded.articles[1].blocks or [])


def test_blocks_are_stored_packed_and_an_unread_resave_does_not_unpack_them(
        tmp_path: Path) -> None:
    from sitegen.fetch.cache import PackedBlocks

    cache = ContentCache(tmp_path / ".sitegen", BASE, WS)
    original = workspace(3)
    assert cache.save(original)
    raw = json.loads(cache.path.read_text())["workspace"]["articles"]
    for stored, article in zip(raw, original.articles, strict=True):
        count, text = stored["blocks"]
        assert count == len(article.blocks or [])
        assert json.loads(text) == [b.model_dump(mode="json") for b in article.blocks or []]
    loaded = cache.load()
    assert loaded is not None
    assert all(type(a.blocks) is PackedBlocks and not a.blocks.loaded
               for a in loaded.articles)
    assert ContentCache(tmp_path / ".sitegen", BASE, WS).save(loaded)
    assert all(not a.blocks.loaded for a in loaded.articles)  # type: ignore[union-attr]
    assert json.loads(cache.path.read_text())["workspace"]["articles"] == raw
    again = cache.load()
    assert again is not None and again.model_dump() == original.model_dump()


def _earlier_form_cache(tmp_path: Path) -> tuple[ContentCache, Workspace]:
    """A cache whose base holds its articles' blocks as plain values (the earlier form)."""
    cache = ContentCache(tmp_path / ".sitegen", BASE, WS)
    original = workspace(2)
    assert cache.save(original)
    data = json.loads(cache.path.read_text())
    for stored, article in zip(data["workspace"]["articles"], original.articles, strict=True):
        stored["blocks"] = [b.model_dump(mode="json") for b in article.blocks or []]
    cache.path.write_text(json.dumps(data))
    return cache, original


def test_a_cache_of_the_earlier_block_form_is_read_and_saved_packed(tmp_path: Path) -> None:
    cache, original = _earlier_form_cache(tmp_path)
    loaded = cache.load()
    assert loaded is not None and loaded.model_dump() == original.model_dump()
    assert ContentCache(tmp_path / ".sitegen", BASE, WS).save(loaded)  # the base rewritten
    stored = json.loads(cache.path.read_text())["workspace"]["articles"][0]["blocks"]
    assert isinstance(stored[0], int) and isinstance(stored[1], str)


def test_unread_blocks_of_the_earlier_form_are_packed_without_reading_them(
        tmp_path: Path) -> None:
    from sitegen.fetch.cache import LazyBlocks, pack_blocks

    cache, original = _earlier_form_cache(tmp_path)
    loaded = cache.load()
    assert loaded is not None
    lazy = [a.blocks for a in loaded.articles if isinstance(a.blocks, LazyBlocks)]
    assert lazy and not any(b.loaded for b in lazy)
    packed = [pack_blocks(b) for b in lazy]
    assert not any(b.loaded for b in lazy)  # packed from the values as read
    assert [json.loads(text) for _, text in packed] == [  # type: ignore[misc]
        [b.model_dump(mode="json") for b in blocks] for blocks in lazy]


@pytest.mark.parametrize("packed", [[1, "[{\"type\": \"text\""], [2, "[{\"type\": \"text\"}]"],
                                    [1, "{\"type\": \"text\"}"], [1, "[5]"]])
def test_damaged_packed_blocks_are_one_clear_error_when_read(tmp_path: Path,
                                                             packed: list[object]) -> None:
    from sitegen.errors import CacheError

    cache = ContentCache(tmp_path / ".sitegen", BASE, WS)
    assert cache.save(workspace(2))
    data = json.loads(cache.path.read_text())
    data["workspace"]["articles"][1]["blocks"] = packed
    cache.path.write_text(json.dumps(data))
    loaded = cache.load()
    assert loaded is not None and loaded.articles[0].blocks  # the other article reads fine
    with pytest.raises(CacheError, match=r"sitegen build --refresh"):
        list(loaded.articles[1].blocks or [])


@pytest.mark.parametrize("blocks", [[10**12, "[]"], [-1, "[]"], [1, 2], ["x", "[]"], [{}, 3]])
def test_impossible_blocks_discard_the_cache_at_load(tmp_path: Path, blocks: list[object],
                                                     caplog: pytest.LogCaptureFixture) -> None:
    cache = ContentCache(tmp_path / ".sitegen", BASE, WS)
    assert cache.save(workspace(2))
    data = json.loads(cache.path.read_text())
    data["workspace"]["articles"][1]["blocks"] = blocks
    cache.path.write_text(json.dumps(data))
    assert cache.load() is None
    assert "discarded the content cache" in caplog.text


def test_packed_blocks_carry_any_text(tmp_path: Path) -> None:
    text = "Grüße, 東京 \U0001f600 and a lone \ud800 surrogate \" \\ </script>"
    article = Article.model_validate({**make_article(0), "blocks": [
        {"type": "text", "content": text}]})
    original = Workspace(api_version="v2", info=WorkspaceInfo(id=WS, name="W"),
                         articles=[article], clusters=[], authors=None)
    cache = ContentCache(tmp_path / ".sitegen", BASE, WS)
    assert cache.save(original)
    cache.path.read_bytes().decode("ascii")  # the packed text is escaped JSON
    loaded = cache.load()
    assert loaded is not None
    assert loaded.articles[0].blocks[0].content == text  # type: ignore[index,union-attr]
