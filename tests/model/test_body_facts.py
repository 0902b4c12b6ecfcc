"""Body facts kept between builds: they spare the body pass and never change the site."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "render"))

from render_factory import article, demo_workspace, hostile_workspace, make_config  # noqa: E402

import sitegen.model.body as body_module  # noqa: E402
from sitegen.bodyfacts import (  # noqa: E402
    FACTS_FILE,
    OLD_FACTS_FILE,
    StoredFacts,
    load_facts,
    save_facts,
)
from sitegen.fetch.records import Article  # noqa: E402
from sitegen.model import Site, build_site  # noqa: E402
from sitegen.workspace import Workspace  # noqa: E402


def shape(site: Site) -> list[Any]:
    """Everything the pages are made from that the body pass decides, page by page."""
    views = [(a.id, a.body_kind, [b.model_dump() for b in a.blocks], a.content,
              a.reading_minutes, a.image, a.body_hash, a.card_digest, a.digest)
             for a in site.articles]
    return [views, [(p.path, p.input_digest) for p in site.pages]]


@pytest.mark.parametrize("workspace", [demo_workspace, hostile_workspace])
def test_a_site_built_from_stored_facts_is_the_same(tmp_path: Path, workspace: Any,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    config = make_config(tmp_path)
    with caplog.at_level(logging.WARNING, logger="sitegen"):
        first = build_site(config, workspace())
    warned = sorted(r.getMessage() for r in caplog.records)
    assert first.body_facts and save_facts(
        tmp_path, StoredFacts(first.body_facts, first.related_memo), StoredFacts())
    caplog.clear()
    stored = load_facts(tmp_path)
    assert stored.related == first.related_memo is not None
    with caplog.at_level(logging.WARNING, logger="sitegen"):
        second = build_site(config, workspace(), stored.bodies, stored.related)
    assert shape(second) == shape(first)
    assert sorted(r.getMessage() for r in caplog.records) == warned  # repairs still said
    assert second.body_facts == first.body_facts


def test_stored_facts_spare_the_body_pass(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    config = make_config(tmp_path)
    facts = build_site(config, demo_workspace()).body_facts
    calls: list[str] = []
    real = body_module.article_body

    def counted(record: Any) -> Any:
        calls.append(record.id)
        return real(record)

    monkeypatch.setattr(body_module, "article_body", counted)
    build_site(config, demo_workspace(), facts)
    assert calls == []
    build_site(config, demo_workspace())
    assert len(calls) == len(facts)


@pytest.mark.parametrize("change", [
    {"updatedAt": "2030-01-01T00:00:00Z"},
    {"content": "A different body of another length."},
    {"blocks": [{"type": "text", "content": "Only this block now."}]},
])
def test_facts_of_another_version_of_the_article_are_not_used(
        tmp_path: Path, change: dict[str, Any]) -> None:
    config = make_config(tmp_path)
    old = article(1, content="Old words here.", blocks=[
        {"type": "text", "content": "one two"}, {"type": "quote", "content": "x"}])
    facts = build_site(config, Workspace.model_validate(
        {"api_version": "v2", "info": {"id": "w"}, "articles": [old]})).body_facts
    new = Workspace.model_validate(
        {"api_version": "v2", "info": {"id": "w"}, "articles": [{**old, **change}]})
    assert shape(build_site(config, new, facts)) == shape(build_site(config, new))


def test_the_file_round_trips_and_is_written_only_when_facts_changed(tmp_path: Path) -> None:
    site = build_site(make_config(tmp_path), demo_workspace())
    facts = StoredFacts(site.body_facts, site.related_memo)
    assert save_facts(tmp_path, facts, StoredFacts())
    loaded = load_facts(tmp_path)
    assert loaded == facts
    assert not save_facts(tmp_path, loaded, facts)


def _damaged(path: Path, damage: str) -> None:
    """Damage the stored facts file at *path* in one of the ways `DAMAGE` names."""
    import marshal

    data = path.read_bytes()
    head = data[:data.index(b"\n") + 1]
    code, rows, related = marshal.loads(data[len(head):])
    if damage == "not a facts file":
        path.write_bytes(b"not json {")
    elif damage == "cut short":
        path.write_bytes(data[:len(data) // 2])
    elif damage == "not marshal data":
        path.write_bytes(head + b"\xff\x00garbage")
    elif damage == "other code":
        path.write_bytes(head + marshal.dumps(("x", rows, related)))
    elif damage == "rows not a tuple":
        path.write_bytes(head + marshal.dumps((code, list(rows), related)))
    elif damage == "short row":
        path.write_bytes(head + marshal.dumps((code, (rows[0][:3], *rows[1:]), related)))
    elif damage == "wrong type":  # a kept position that is not an int
        row = rows[0][:5] + (("1",),) + rows[0][6:]
        path.write_bytes(head + marshal.dumps((code, (row, *rows[1:]), related)))
    elif damage == "bad memo":
        path.write_bytes(head + marshal.dumps((code, rows, ("k", (("x",),)))))
    else:
        raise AssertionError(damage)


DAMAGE = ["not a facts file", "cut short", "not marshal data", "other code",
          "rows not a tuple", "short row", "wrong type", "bad memo"]


@pytest.mark.parametrize("damage", DAMAGE)
def test_unusable_files_are_ignored(tmp_path: Path, damage: str) -> None:
    site = build_site(make_config(tmp_path), demo_workspace())
    facts = StoredFacts(site.body_facts, site.related_memo)
    assert facts.related is not None and any(f.kept for f in facts.bodies.values())
    save_facts(tmp_path, facts, StoredFacts())
    assert load_facts(tmp_path) == facts
    _damaged(tmp_path / FACTS_FILE, damage)
    assert load_facts(tmp_path) == StoredFacts()
    assert load_facts(tmp_path / "missing") == StoredFacts()


def test_the_json_file_of_earlier_versions_is_replaced(tmp_path: Path) -> None:
    old = tmp_path / OLD_FACTS_FILE
    old.write_text(json.dumps({"format": 2, "facts": {}}), encoding="utf-8")
    site = build_site(make_config(tmp_path), demo_workspace())
    assert load_facts(tmp_path) == StoredFacts()
    assert save_facts(tmp_path, StoredFacts(site.body_facts, site.related_memo), StoredFacts())
    assert not old.exists() and (tmp_path / FACTS_FILE).is_file()


@pytest.mark.parametrize("workspace", [demo_workspace, hostile_workspace])
def test_a_site_from_the_content_cache_reads_only_the_blocks_it_must(
        tmp_path: Path, workspace: Any) -> None:
    from sitegen.fetch.cache import ContentCache
    from sitegen.lazylist import LazyList

    config = make_config(tmp_path)
    original = workspace()
    cache = ContentCache(tmp_path / "cache", "https://cas.example.test", original.info.id)
    assert cache.save(original)
    first = build_site(config, original)
    stored = StoredFacts(first.body_facts, first.related_memo)
    loaded = cache.load()
    assert loaded is not None
    lazy = [a for a in loaded.articles if isinstance(a.blocks, LazyList)]
    assert lazy and not any(a.blocks.loaded for a in lazy)  # type: ignore[union-attr]
    # One article's blocks change (as a sync brings them): only it is read for the model.
    edited = next(a for a in lazy if a.blocks and a.updatedAt is not None
                  and a.status == "published")
    fresh = Article.model_validate({**edited.model_dump(mode="json"),
                                    "updatedAt": "2031-01-01T00:00:00Z"})
    assert not any(a.blocks.loaded for a in lazy if a is not edited)  # type: ignore[union-attr]
    articles = [fresh if a is edited else a for a in loaded.articles]
    site = build_site(config, loaded.model_copy(update={"articles": articles}),
                      stored.bodies, stored.related)
    read = [a.id for a in lazy if a.blocks.loaded]  # type: ignore[union-attr]
    assert read == [edited.id]  # its model_dump above; no other article's blocks
    eager = build_site(config, original.model_copy(update={"articles": [
        fresh if a.id == edited.id else a for a in original.articles]}))
    if workspace is demo_workspace:  # other articles' lazily picked blocks are compared too
        assert any(v.body_kind == "blocks" and v.id != edited.id for v in site.articles)
    assert shape(site) == shape(eager)
