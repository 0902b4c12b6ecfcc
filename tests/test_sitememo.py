"""The model memo at build level: a rebuild after an edit reads only the changes file.

Each test builds from a real content cache on disk (saved as a sync saves it), edits it
as a sync would, and compares the rebuilt output and warnings with a build from the
whole cache in another folder.
"""

from __future__ import annotations

import hashlib
import io
import logging
import marshal
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

import sitegen.model as model_package
from sitegen import sitememo
from sitegen.atomicfile import replace_atomically
from sitegen.build import run_build
from sitegen.config import Config, demo_config
from sitegen.emulator.app import create_app
from sitegen.emulator.demo import load_demo
from sitegen.fetch.cache import ContentCache
from sitegen.fetch.records import Article
from sitegen.fetch.sync import sync
from sitegen.sitememo import MEMO_FILE
from sitegen.workspace import Workspace


def contents(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def cache_of(config: Config) -> ContentCache:
    return ContentCache(config.cache_path, config.api.base_url, config.api.workspace)


@pytest.fixture(scope="module")
def fetched(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    root = tmp_path_factory.mktemp("fetched")
    config = demo_config(None, root)
    transport = httpx.ASGITransport(app=create_app(load_demo()))
    return sync(config, key="demo", transport=transport).workspace


class Spy:
    """Counts full model builds and whole-cache reads."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.built = 0
        self.base_reads = 0
        real_build = model_package.build_site
        real_read = ContentCache._read_base

        def build_site(*args: Any, **kwargs: Any) -> Any:
            self.built += 1
            return real_build(*args, **kwargs)

        def read_base(cache: ContentCache) -> Any:
            self.base_reads += 1
            return real_read(cache)

        monkeypatch.setattr(model_package, "build_site", build_site)
        monkeypatch.setattr(ContentCache, "_read_base", read_base)


def resave(config: Config,
           change: Callable[[list[Article]], list[Article]]) -> ContentCache:
    """Save the cached workspace with its articles changed, as a sync does (the changes
    file: unchanged articles stay the very objects the load made)."""
    cache = cache_of(config)
    workspace = cache.load()
    assert workspace is not None
    assert cache.save(workspace.model_copy(update={"articles": change(list(workspace.articles))}))
    return cache


def edit(config: Config, **fields: Any) -> None:
    """Change one published article in the cache as a sync does."""
    def change(articles: list[Article]) -> list[Article]:
        target = [a for a in articles if a.status == "published"][3]
        record = Article.model_validate({**target.model_dump(mode="json"), **fields})
        return [record if a is target else a for a in articles]

    assert resave(config, change).changes_path.is_file()


def full_build(tmp_path: Path, config: Config, caplog: pytest.LogCaptureFixture,
               name: str = "full") -> tuple[dict[str, str], list[str]]:
    """The output and warnings of a build from the whole cache (a copy, without a memo)."""
    folder = tmp_path / name
    folder.mkdir()
    cache = cache_of(config)
    workspace = cache.load()
    assert workspace is not None
    other = demo_config(None, folder)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="sitegen"):
        run_build(other, output=folder / "_site", workspace=workspace)
    return contents(folder / "_site"), [r.getMessage() for r in caplog.records]


def offline(config: Config, out: Path, caplog: pytest.LogCaptureFixture) -> list[str]:
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="sitegen"):
        run_build(config, output=out, offline=True)
    return [r.getMessage() for r in caplog.records]


@pytest.fixture
def site(tmp_path: Path, fetched: Workspace) -> tuple[Config, Path]:
    config = demo_config(None, tmp_path / "site")
    assert cache_of(config).save(fetched)
    out = tmp_path / "site" / "_site"
    run_build(config, output=out, offline=True)
    assert (config.cache_path / MEMO_FILE).is_file()
    return config, out


def rebuilt_after_edit(site: tuple[Config, Path], tmp_path: Path,
                       monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
                       fields: dict[str, Any]) -> Spy:
    """Edit one article, rebuild offline: the output and warnings of a build from the whole
    cache (checked here); the spy tells how the rebuild got its model."""
    config, out = site
    edit(config, **fields)
    expected, warned = full_build(tmp_path, config, caplog)
    spy = Spy(monkeypatch)
    assert offline(config, out, caplog) == warned
    assert contents(out) == expected
    return spy


EDITS = [{"content": "A new body.\n\n## With a heading\n\nAnd words.", "blocks": None},
         {"title": "A retitled article", "description": "And a new description."},
         {"updatedAt": "2031-01-01T00:00:00Z", "language": "not a language!!"}]


@pytest.mark.parametrize("fields", EDITS)
def test_an_edit_is_patched_into_the_memo_without_reading_the_cache(
        site: tuple[Config, Path], tmp_path: Path, fields: dict[str, Any],
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    spy = rebuilt_after_edit(site, tmp_path, monkeypatch, caplog, fields)
    assert (spy.built, spy.base_reads) == (0, 0)


def test_edits_since_the_memo_are_patched_again_until_many(
        site: tuple[Config, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    config, out = site
    memo = config.cache_path / MEMO_FILE
    written = memo.stat().st_mtime_ns
    spy = Spy(monkeypatch)
    for n in range(3):
        edit(config, content=f"Edit number {n}.", blocks=None)
        offline(config, out, caplog)
    assert (spy.built, spy.base_reads, memo.stat().st_mtime_ns) == (0, 3, written)
    # the reads are the edits' own loads (as syncs); the builds read nothing else
    monkeypatch.setattr(sitememo, "REWRITE_AFTER", 4)  # the demo has 22 published articles

    def bulk(articles: list[Article]) -> list[Article]:
        five = set([a.id for a in articles if a.status == "published"][:5])
        return [a.model_copy(update={"description": "Edited in bulk."}) if a.id in five else a
                for a in articles]

    resave(config, bulk)
    offline(config, out, caplog)
    assert spy.built == 0 and memo.stat().st_mtime_ns != written  # stored again
    expected, _ = full_build(tmp_path, config, caplog)
    assert contents(out) == expected


@pytest.mark.parametrize("fields", [{"tags": ["a-brand-new-tag"]}, {"status": "draft"},
                                    {"createdAt": "2019-01-01T00:00:00Z"}])
def test_an_edit_that_moves_an_article_builds_the_graph_again(
        site: tuple[Config, Path], tmp_path: Path, fields: dict[str, Any],
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    config, out = site
    spy = rebuilt_after_edit(site, tmp_path, monkeypatch, caplog, fields)
    assert (spy.built, spy.base_reads) == (1, 1)
    edit(config, content="And then a body edit.", blocks=None)  # the new memo serves next
    offline(config, out, caplog)
    assert (spy.built, spy.base_reads) == (1, 2)


MAGIC = b"sitegen site model\n"


def _parts(data: bytes) -> tuple[list[Any], int]:
    """The memo's header (as a list) and where its graph starts."""
    size = int.from_bytes(data[len(MAGIC):len(MAGIC) + 4], "big")
    start = len(MAGIC) + 4 + size
    return list(marshal.loads(data[len(MAGIC) + 4:start])), start


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "cut short":
        path.write_bytes(data[:len(data) - 100])
    elif how == "a byte flipped":  # in the graph
        header, start = _parts(data)
        at = start + header[6] // 2
        path.write_bytes(data[:at] + bytes([data[at] ^ 1]) + data[at + 1:])
    elif how == "garbage":
        path.write_bytes(b"sitegen site model\n\x00\x00\x00\x05garbage")
    elif how == "not a memo":
        path.write_bytes(b"hello")
    elif how == "a wrong shape":
        header, _ = _parts(data)
        payload = marshal.dumps(("not", "a", "site"))
        texts = marshal.dumps(())
        header[5:9] = [zlib.crc32(payload), len(payload), zlib.crc32(texts), len(texts)]
        new = marshal.dumps(tuple(header))
        path.write_bytes(MAGIC + len(new).to_bytes(4, "big") + new + payload + texts)
    else:
        raise AssertionError(how)


@pytest.mark.parametrize("how", ["cut short", "a byte flipped", "garbage", "not a memo",
                                 "a wrong shape"])
def test_a_damaged_memo_is_no_memo(site: tuple[Config, Path], tmp_path: Path, how: str,
                                   monkeypatch: pytest.MonkeyPatch,
                                   caplog: pytest.LogCaptureFixture) -> None:
    config, out = site
    edit(config, content="Edited.", blocks=None)
    _damage(config.cache_path / MEMO_FILE, how)
    expected, warned = full_build(tmp_path, config, caplog)
    spy = Spy(monkeypatch)
    assert offline(config, out, caplog) == warned
    assert spy.built == 1 and contents(out) == expected


def test_the_bodies_are_read_only_when_a_body_is_asked_for(
        site: tuple[Config, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """A rebuild after an edit takes its bodies from the body store and the edit: the memo's
    bodies part stays unread; a build that renders every body reads it, once."""
    config, out = site
    reads: list[int] = []
    real_read = sitememo.MemoBodies._read

    def counted(bodies: sitememo.MemoBodies) -> Any:
        reads.append(1) if bodies._texts is not None else None
        return real_read(bodies)

    monkeypatch.setattr(sitememo.MemoBodies, "_read", counted)
    edit(config, content="Edited.", blocks=None)
    expected, warned = full_build(tmp_path, config, caplog)
    spy = Spy(monkeypatch)
    assert offline(config, out, caplog) == warned
    assert (spy.built, reads) == (0, [])
    assert contents(out) == expected
    (config.cache_path / "bodies.sqlite").unlink()  # every body is rendered again
    edit(config, content="Edited again.", blocks=None)
    expected, warned = full_build(tmp_path, config, caplog, name="again")
    built = spy.built  # the reference build's
    assert offline(config, out, caplog) == warned
    assert (spy.built - built, reads) == (0, [1])
    assert contents(out) == expected


def test_the_bodies_come_from_the_memo_the_graph_came_from(
        site: tuple[Config, Path], fetched: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the header and the graph are read at the resume; the bodies are read later
    from the same file, even once another build has replaced the memo."""
    config, _ = site
    path = config.cache_path / MEMO_FILE
    header, _ = _parts(path.read_bytes())
    read: list[int] = []

    class Counted(io.FileIO):
        def read(self, size: int = -1) -> bytes:
            data = super().read(size)
            read.append(len(data))
            return data

    monkeypatch.setattr(sitememo, "open", lambda name, mode, buffering: Counted(name),
                        raising=False)
    resumed = sitememo.resume_site(config)
    assert resumed is not None
    assert sum(read) == path.stat().st_size - header[8]  # all but the bodies
    stored = {a.id: a.content for a in fetched.articles}
    markdown = [a for a in resumed.site.articles if a.body_kind == "markdown"]
    assert markdown
    replace_atomically(path, b"another build's memo")
    assert all(view.content == stored[view.id] for view in markdown)
    assert path.read_bytes() == b"another build's memo"  # untouched
    assert sitememo.resume_site(config) is None  # and no memo now


def test_damaged_bodies_fail_the_build_clearly_and_the_next_builds_in_full(
        site: tuple[Config, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    from sitegen.errors import CacheError

    config, out = site
    before = contents(out)
    path = config.cache_path / MEMO_FILE
    data = path.read_bytes()
    path.write_bytes(data[:-50] + bytes([data[-50] ^ 1]) + data[-49:])  # in the bodies
    (config.cache_path / "bodies.sqlite").unlink()  # so a body is asked for
    edit(config, content="Edited.", blocks=None)
    with pytest.raises(CacheError, match="site-model.bin is damaged.*build again"):
        offline(config, out, caplog)
    assert contents(out) == before and not path.exists()
    expected, warned = full_build(tmp_path, config, caplog)
    spy = Spy(monkeypatch)
    assert offline(config, out, caplog) == warned
    assert spy.built == 1 and contents(out) == expected


def test_a_rewritten_base_or_another_config_is_not_the_memo_s(
        site: tuple[Config, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    config, out = site
    cache = cache_of(config)
    workspace = cache.load()
    assert workspace is not None
    fresh = ContentCache(config.cache_path, config.api.base_url, config.api.workspace)
    assert fresh.save(workspace)  # not loaded first: the base is rewritten (same content)
    spy = Spy(monkeypatch)
    offline(config, out, caplog)
    assert spy.built == 1
    other = config.model_copy(update={"site": config.site.model_copy(update={"per_page": 3})})
    edit(config, content="Edited.", blocks=None)
    run_build(other, output=tmp_path / "other", offline=True)
    assert spy.built == 2


def test_a_synced_build_patches_the_memo_too(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    data = load_demo()
    config = demo_config(None, tmp_path)
    out = tmp_path / "_site"
    run_build(config, output=out, demo=True,
              transport=httpx.ASGITransport(app=create_app(data)))
    spy = Spy(monkeypatch)
    edited = dict(data)
    target = next(a for a in data["articles"] if a.get("status") == "published")
    edited["articles"] = [{**a, "content": "Edited online.", "blocks": [],
                           "updatedAt": "2031-01-01T00:00:00.000Z"} if a is target else a
                          for a in data["articles"]]
    report = run_build(config, output=out, demo=True,
                       transport=httpx.ASGITransport(app=create_app(edited)))
    assert spy.built == 0 and report.written
    again = tmp_path / "again"
    (again / "_site").parent.mkdir()
    run_build(demo_config(None, again), output=again / "_site", demo=True,
              transport=httpx.ASGITransport(app=create_app(edited)))
    assert contents(out) == contents(again / "_site")


def test_a_deleted_article_or_a_lost_changes_file_builds_the_graph_again(
        site: tuple[Config, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    config, out = site
    gone: list[Article] = []

    def delete(articles: list[Article]) -> list[Article]:
        gone.append(next(a for a in articles if a.status == "published"))
        return [a for a in articles if a is not gone[0]]

    cache = resave(config, delete)
    expected, warned = full_build(tmp_path, config, caplog)
    spy = Spy(monkeypatch)
    assert offline(config, out, caplog) == warned
    assert spy.built == 1 and contents(out) == expected
    assert not (out / f"{gone[0].slug}/index.html").exists()
    cache.changes_path.unlink()  # the content is the base's again: the article is back
    offline(config, out, caplog)
    assert spy.built == 2
    assert (out / f"{gone[0].slug}/index.html").is_file()


def test_an_edited_draft_is_patched_and_changes_no_page(
        site: tuple[Config, Path], monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    config, out = site
    draft_id = "65f0c0ffeee00000000000ff"
    resave(config, lambda articles: [*articles, articles[0].model_copy(update={
        "id": draft_id, "status": "draft", "slug": "a-draft", "content": "Not yet."})])
    before = contents(out)
    spy = Spy(monkeypatch)
    run_build(config, output=out, offline=True)  # a new draft: nothing to show
    assert spy.built == 0 and contents(out) == before
    resave(config, lambda articles: [
        a.model_copy(update={"content": "Still not yet."}) if a.id == draft_id else a
        for a in articles])
    spy = Spy(monkeypatch)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="sitegen"):
        report = run_build(config, output=out, offline=True)
    assert spy.built == 0 and report.written == [] and contents(out) == before
