"""A packed graph unpacks to the same graph, and a patched graph is the one a full build makes."""

from __future__ import annotations

import logging
import marshal
import random
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "render"))

from render_factory import (  # noqa: E402
    article,
    demo_workspace,
    hostile_workspace,
    make_config,
    make_workspace,
)

from sitegen.config import Config  # noqa: E402
from sitegen.fetch.records import Article  # noqa: E402
from sitegen.model import Site, build_site  # noqa: E402
from sitegen.model.body import PickedBlocks  # noqa: E402
from sitegen.model.pack import pack_site, unpack_site  # noqa: E402
from sitegen.model.patch import patch_site  # noqa: E402
from sitegen.model.views import Section  # noqa: E402
from sitegen.workspace import Workspace  # noqa: E402


def _ref(obj: object) -> object:
    if obj is None:
        return None
    if isinstance(obj, Section):
        return (type(obj).__name__, obj.id)
    return (type(obj).__name__, getattr(obj, "id", None) or getattr(obj, "kind", None))


def shape(site: Site) -> list[Any]:
    """Every value of the graph a page or the next build can see, links by id."""
    articles = [(
        a.id, a.slug, a.url, a.path, a.title, a.description, a.language,
        [(t.name, t.slug, t.url) for t in a.tags], a.keywords, a.published.isoformat(),
        a.updated.isoformat(), a.reading_minutes, a.body_kind,
        [b.model_dump() for b in a.blocks], a.content, a.body_hash, a.image,
        _ref(a.agent), _ref(a.cluster), _ref(a.author), [r.id for r in a.related],
        _ref(a.newer), _ref(a.older), a.card_digest, a.digest, site.places[a.id],
    ) for a in site.articles]
    sections = [[(type(s).__name__, s.id, s.name, s.slug, s.url, s.description,
                  getattr(s, "colour", None), getattr(s, "bio", None),
                  getattr(s, "image", None), getattr(s, "model", None),
                  [a.id for a in s.articles]) for s in group]
                for group in (site.agents, site.clusters, site.authors, site.tags,
                              site.languages)]
    pages = [(p.kind, p.path, p.url, p.template, p.title, _ref(p.obj),
              [a.id for a in p.articles], p.number, p.total, p.prev_url, p.next_url,
              p.feed_url, p.language, p.input_digest, [s.id for s in p.social_posts])
             for p in site.pages]
    social = [(s.id, s.title, s.slug, s.content, s.image, s.published)
              for s in site.social_posts]
    head = (site.title, site.description, site.base_url, site.language, site.nav_digest,
            site.feed_url)
    return [head, articles, sections, pages, social, site.repairs.in_order(site.articles)]


def round_trip(site: Site, config: Config) -> Site:
    return unpack_site(marshal.loads(marshal.dumps(pack_site(site))), config)


@pytest.mark.parametrize("workspace", [demo_workspace, hostile_workspace])
def test_a_packed_graph_unpacks_to_the_same_graph(tmp_path: Path, workspace: Any) -> None:
    config = make_config(tmp_path)
    site = build_site(config, workspace())
    assert site.repairs.in_order(site.articles) or workspace is demo_workspace
    again = round_trip(site, config)
    assert shape(again) == shape(site)
    # Blocks travel packed: unread ones are read only when something reads them.
    assert any(a.body_kind == "blocks" for a in again.articles)
    # The articles of a tag share its one (frozen) TagRef, built or unpacked.
    for graph in (site, again):
        refs = {t.slug: t for a in graph.articles for t in a.tags}
        assert all(t is refs[t.slug] for a in graph.articles for t in a.tags)
        assert sum(len(a.tags) for a in graph.articles) > len(refs) or (
            workspace is hostile_workspace)


def test_a_graph_from_a_cache_of_either_block_form_round_trips(tmp_path: Path) -> None:
    """Unread blocks travel as the cache holds them (packed text, or earlier plain values)."""
    import json

    from sitegen.fetch.cache import ContentCache

    config = make_config(tmp_path)
    for form in ("packed", "plain"):
        cache = ContentCache(tmp_path / form, "https://cas.example.test", "w")
        original = demo_workspace().model_copy(update={"info": demo_workspace().info.model_copy(
            update={"id": "w"})})
        assert cache.save(original)
        if form == "plain":
            data = json.loads(cache.path.read_text())
            for stored, article in zip(data["workspace"]["articles"], original.articles,
                                       strict=True):
                stored["blocks"] = (None if article.blocks is None else
                                    [b.model_dump(mode="json") for b in article.blocks])
            cache.path.write_text(json.dumps(data))
        facts = build_site(config, original).body_facts
        loaded = cache.load()
        assert loaded is not None
        site = build_site(config, loaded, facts)
        unread = [a.blocks for a in site.articles
                  if isinstance(a.blocks, PickedBlocks) and a.blocks.unread() is not None]
        assert unread, form
        again = round_trip(site, config)
        assert all(b.unread() is not None for b in unread), form  # packed without reading
        assert shape(again) == shape(build_site(config, original)), form


def _records(workspace: Workspace) -> dict[str, dict[str, Any]]:
    return {a.id: a.model_dump(mode="json") for a in workspace.articles}


def _full_and_patched(config: Config, before: Workspace, after: Workspace,
                      caplog: pytest.LogCaptureFixture) -> tuple[Site, Site, list[str] | None,
                                                                 list[str]]:
    with caplog.at_level(logging.WARNING, logger="sitegen"):
        site = round_trip(build_site(config, before), config)
        caplog.clear()
        full = build_site(config, after)
        logged = [r.getMessage() for r in caplog.records]
    old = _records(before)
    changed = [a for a in after.articles if old.get(a.id) != a.model_dump(mode="json")]
    return full, site, patch_site(site, config, changed), logged


def _edited(workspace: Workspace, pick: int, **fields: Any) -> Workspace:
    published = [a for a in workspace.articles if a.status == "published"]
    target = published[pick % len(published)]
    record = Article.model_validate({**target.model_dump(mode="json"), **fields})
    return workspace.model_copy(update={"articles": [
        record if a is target else a for a in workspace.articles]})


IN_PLACE = [
    ("a new markdown body", {"content": "Rewritten.\n\n## Another heading\n\nWords " * 40,
                             "blocks": None}),
    ("new blocks", {"blocks": [{"type": "header", "content": "Now", "level": 2},
                               {"type": "text", "content": "New words " * 300},
                               {"type": "image", "url": "https://img.example.test/n.png"}]}),
    ("a new title", {"title": "A completely new title"}),
    ("a new description", {"description": "Another description."}),
    ("a new update time", {"updatedAt": "2031-05-05T05:05:05Z"}),
    ("new keywords", {"meta": {"keywords": "one, two, three"}}),
    ("an empty title", {"title": ""}),
    ("an unsafe image", {"blocks": [{"type": "image", "url": "javascript:alert(1)"},
                                    {"type": "text", "content": "x"}]}),
]


@pytest.mark.parametrize("workspace", [demo_workspace, hostile_workspace])
@pytest.mark.parametrize(("what", "fields"), IN_PLACE, ids=[w for w, _ in IN_PLACE])
@pytest.mark.parametrize("pick", [0, 3, -1])
def test_an_edit_that_moves_nothing_is_patched_as_a_full_build_makes_it(
        tmp_path: Path, workspace: Any, what: str, fields: dict[str, Any], pick: int,
        caplog: pytest.LogCaptureFixture) -> None:
    config = make_config(tmp_path)
    before = workspace()
    after = _edited(before, pick, **fields)
    full, patched, repairs, logged = _full_and_patched(config, before, after, caplog)
    assert repairs is not None, what
    assert repairs == logged
    assert shape(patched) == shape(full)


MOVES = [
    ("new tags", {"tags": ["brand-new-tag"]}),
    ("a new creation date", {"createdAt": "2020-01-01T00:00:00Z"}),
    ("a new slug", {"slug": "a-new-slug"}),
    ("unpublished", {"status": "draft"}),
    ("another language", {"language": "de"}),
    ("another cluster", {"clusterId": "65f0c0ffee0123456789ffff"}),
    ("another agent", {"agentId": "65f0c0ffee0123456789fffe"}),
    ("emptied", {"title": "", "content": "", "blocks": None}),
]


@pytest.mark.parametrize(("what", "fields"), MOVES, ids=[w for w, _ in MOVES])
def test_an_edit_that_moves_something_is_refused_and_nothing_is_touched(
        tmp_path: Path, what: str, fields: dict[str, Any],
        caplog: pytest.LogCaptureFixture) -> None:
    config = make_config(tmp_path)
    before = demo_workspace()
    after = _edited(before, 2, **fields)
    assert _records(after) != _records(before)
    site = round_trip(build_site(config, before), config)
    untouched = shape(site)
    old = _records(before)
    changed = [a for a in after.articles if old[a.id] != a.model_dump(mode="json")]
    assert len(changed) == 1
    assert patch_site(site, config, changed) is None, what
    assert shape(site) == untouched


def test_new_published_articles_are_refused_and_drafts_change_nothing(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    before = make_workspace([article(1), article(2), article(3, status="draft")])
    site = round_trip(build_site(config, before), config)
    untouched = shape(site)
    draft = Article.model_validate(article(3, status="draft", content="Edited draft."))
    assert patch_site(site, config, [draft]) == []
    assert shape(site) == untouched
    new = Article.model_validate(article(4))
    assert patch_site(site, config, [new]) is None
    published = Article.model_validate(article(3))
    assert patch_site(site, config, [published]) is None
    assert shape(site) == untouched


def test_a_title_that_names_the_slug_moves_the_article(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    before = make_workspace([article(1, slug=None), article(2)])
    site = round_trip(build_site(config, before), config)
    retitled = Article.model_validate(article(1, slug=None, title="Another Title"))
    assert patch_site(site, config, [retitled]) is None
    same_slug = Article.model_validate(article(1, slug=None, title="Article  1",
                                                content="new"))
    assert patch_site(site, config, [same_slug]) is not None


def test_random_edits_patch_exactly_as_a_full_build(tmp_path: Path,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    """Random edits of every field the model reads: a patch, when made, is a full build."""
    rng = random.Random(20261122)
    config = make_config(tmp_path)
    values: dict[str, list[Any]] = {
        "title": ["New title", "", "  spaced   title ", None],
        "content": ["short", "## h\n\n" + "word " * 500, "", None],
        "description": ["d", "", None],
        "updatedAt": ["2032-01-01T00:00:00Z", "2019-01-01T00:00:00Z"],
        "createdAt": ["2018-06-01T00:00:00Z"],
        "slug": ["fresh-slug", "", "Bad Slug!", "page"],
        "status": ["draft", "published"],
        "tags": [[], ["x"], ["news"]],
        "language": ["en", "fr", "not a language!!"],
        "blocks": [None, [], [{"type": "text", "content": "b " * 50}],
                   [{"type": "mystery"}, {"type": "code", "content": "x=1", "language": "py"}]],
    }
    outcomes = {True: 0, False: 0}
    for workspace in (demo_workspace(), hostile_workspace()):
        for _ in range(60):
            fields = {k: rng.choice(v) for k, v in rng.sample(sorted(values.items()),
                                                              rng.randrange(1, 3))}
            after = _edited(workspace, rng.randrange(50), **fields)
            full, patched, repairs, logged = _full_and_patched(config, workspace, after,
                                                               caplog)
            outcomes[repairs is not None] += 1
            if repairs is not None:
                assert repairs == logged, fields
                assert shape(patched) == shape(full), fields
    assert outcomes[True] > 20 and outcomes[False] > 20, outcomes
