"""The search stage of a build: Pagefind's bundle in the atomic commit, run only when pages
changed, a failure that keeps the previous output, and `[search] enabled = false`.

The demo workspace is built (its content given, nothing fetched) with the real Pagefind
binary; a spy on `sitegen.emit.pagefind.run_pagefind` counts the runs (one per shard), and
`PAGEFIND_BINARY_PATH` (which Pagefind's `get_executable` honours) points at a script that
fails, or at nothing, for the failures.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from sitegen.build import BuildOptions, run_build
from sitegen.config import Config, demo_config, parse_config
from sitegen.emit import pagefind, search
from sitegen.errors import ConfigError, SearchError
from sitegen.outputnames import MANIFEST_NAME
from sitegen.report import BuildReport
from sitegen.workspace import Workspace
from tests.content import synced


@pytest.fixture(scope="module")
def demo_workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return synced(demo_config(None, tmp_path_factory.mktemp("fetch")))


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The sites Pagefind ran over in this test (the real runner, counted)."""
    seen: list[Path] = []
    real = pagefind.run_pagefind

    def spy(site: Path, output: Path, exclude: str = "") -> None:
        seen.append(site)
        real(site, output, exclude)

    monkeypatch.setattr(pagefind, "run_pagefind", spy)
    return seen


@pytest.fixture
def small_shards(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shards of at most 2 pages, so the demo's articles fill several of each language."""
    monkeypatch.setattr(search, "PAGES_PER_SHARD", 2)


def config(root: Path, url: str = "https://notes.acme.test/", **section: Any) -> Config:
    data: dict[str, Any] = {
        "site": {"title": "The Demo Workshop", "url": url, "description": "Notes"},
        "api": {"url": "https://cas.example.test", "workspace": "65f0c0ffee0123456789abcd"},
        "analytics": {"enabled": False}}
    if section:
        data["search"] = section
    return parse_config(data, root)


def build(cfg: Config, out: Path, workspace: Workspace) -> BuildReport:
    return run_build(cfg, BuildOptions(output=out, workspace=workspace, demo=True))


def files(root: Path) -> dict[str, tuple[str, int]]:
    """Every file under *root* but the manifest: (sha256, mtime_ns)."""
    return {path.relative_to(root).as_posix(): (hashlib.sha256(path.read_bytes()).hexdigest(),
                                                path.stat().st_mtime_ns)
            for path in sorted(root.rglob("*"))
            if path.is_file() and path.name != MANIFEST_NAME}


def retitled(workspace: Workspace, title: str) -> Workspace:
    first = workspace.articles[0]
    articles = [first.model_copy(update={"title": title}), *workspace.articles[1:]]
    return workspace.model_copy(update={"articles": articles})


def _shards(out: Path) -> dict[str, Any]:
    return dict(json.loads((out / "pagefind" / "shards.json").read_text())["languages"])


def test_the_index_lands_in_the_commit_in_shards_and_is_kept_when_no_page_changed(
        tmp_path: Path, demo_workspace: Workspace, runs: list[Path]) -> None:
    out = tmp_path / "_site"
    first = build(config(tmp_path), out, demo_workspace)
    languages = _shards(out)
    shards = [shard for entry in languages.values() for shard in entry["shards"]]
    assert len(runs) == len(shards) and first.search["reindexed"] == sorted(shards)
    bundle = {p for p in files(out) if p.startswith("pagefind/")}
    assert {"pagefind/pagefind-ui.js", "pagefind/pagefind-ui.css", "pagefind/shards.json"} \
        <= bundle
    assert bundle <= set(first.written)
    # Only the pages with data-pagefind-body (the articles) went to Pagefind, each shard
    # one language: the one its name and shards.json give.
    published = [a for a in demo_workspace.articles if a.status == "published"]
    assert set(languages) == {a.language or "en" for a in published}
    total = 0
    for language, entry in languages.items():
        for shard in entry["shards"]:
            assert shard.startswith(language + "-")
            assert any(p.startswith(f"pagefind/{shard}/fragment/") for p in bundle)
            index = json.loads((out / "pagefind" / shard / "pagefind-entry.json").read_text())
            assert list(index["languages"]) == [language]
            total += index["languages"][language]["page_count"]
    assert total == len(published) == first.search["pages"]
    assert not runs[0].exists()  # the temporary folders are gone

    before = files(out)
    again = build(config(tmp_path), out, demo_workspace)
    assert len(runs) == len(shards) and again.search["reindexed"] == []
    assert not again.written and files(out) == before  # the bundles were kept, untouched


def test_a_one_article_change_indexes_its_shard_only_and_the_report_names_it(
        tmp_path: Path, demo_workspace: Workspace, runs: list[Path], small_shards: None
        ) -> None:
    out = tmp_path / "_site"
    build(config(tmp_path), out, demo_workspace)
    shards = [s for entry in _shards(out).values() for s in entry["shards"]]
    assert len(shards) >= 4 and len(runs) == len(shards)
    before = files(out)
    article = next(a for a in demo_workspace.articles if a.slug and a.status == "published")
    first = article.blocks[0]
    edited = article.model_copy(update={"blocks": [
        first.model_copy(update={"content": first.content + " Zanzibar quokkas."}),
        *article.blocks[1:]]})
    changed = build(config(tmp_path), out, demo_workspace.model_copy(update={"articles": [
        edited if a.id == article.id else a for a in demo_workspace.articles]}))
    path = f"{article.slug}/index.html"
    language = article.language or "en"
    owner = search.shard_of(path, language,
                            search.shard_count(_shards(out)[language]["pages"]))
    assert changed.search["reindexed"] == [owner] and len(runs) == len(shards) + 1
    assert changed.to_json()["search"]["reindexed"] == [owner]
    after = files(out)
    for shard in shards:  # every other shard's files are the previous build's, untouched
        mine = {p: v for p, v in before.items() if p.startswith(f"pagefind/{shard}/")}
        if shard != owner:
            assert mine and all(after.get(p) == v for p, v in mine.items()), shard
    assert any(p.startswith(f"pagefind/{owner}/fragment/") for p in changed.written)


def test_the_same_pages_give_the_same_bundle_bytes(
        tmp_path: Path, demo_workspace: Workspace, runs: list[Path]) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    build(config(tmp_path / "a"), one, demo_workspace)
    build(config(tmp_path / "b"), two, demo_workspace)
    assert len(runs) == 2 * len([s for e in _shards(one).values() for s in e["shards"]])
    assert {p: d for p, (d, _) in files(one).items()} == \
        {p: d for p, (d, _) in files(two).items()}


def test_an_empty_output_with_the_store_kept_takes_the_stored_bundle(
        tmp_path: Path, demo_workspace: Workspace, runs: list[Path]) -> None:
    """As in CI: the content store restored, the output empty. The bundle comes from the
    store (no Pagefind run), byte for byte; `--force` and a damaged stored bundle make it
    again."""
    import shutil

    from sitegen.fetch.stored import open_config_store

    cfg, out = config(tmp_path), tmp_path / "_site"
    build(cfg, out, demo_workspace)
    made = {p: d for p, (d, _) in files(out).items() if p.startswith("pagefind/")}
    shards = len(runs)
    assert shards >= 2 and made
    shutil.rmtree(out)
    warm = build(cfg, out, demo_workspace)
    assert len(runs) == shards and warm.search["reindexed"] == []
    assert {p: d for p, (d, _) in files(out).items() if p.startswith("pagefind/")} == made

    shutil.rmtree(out)
    run_build(cfg, BuildOptions(output=out, workspace=demo_workspace, demo=True, force=True))
    assert len(runs) == 2 * shards
    with open_config_store(cfg) as store:
        key = sorted(store.derived(search.KIND, _stored_keys(store)))[0]
        keys = _stored_keys(store)
        store.save_derived(search.KIND, {key: b"not a bundle"}, keys)
    shutil.rmtree(out)
    damaged = build(cfg, out, demo_workspace)
    assert len(runs) == 2 * shards + 1 and len(damaged.search["reindexed"]) == 1
    assert {p: d for p, (d, _) in files(out).items() if p.startswith("pagefind/")} == made


def test_stored_bundles_are_read_one_at_a_time(
        tmp_path: Path, demo_workspace: Workspace, runs: list[Path], small_shards: None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty output with the store kept holds one shard's bundle in memory at a time
    (at 16,000 articles they are ~30 MB together): each is asked of the store alone."""
    import shutil

    from sitegen.store import Store

    cfg, out = config(tmp_path), tmp_path / "_site"
    build(cfg, out, demo_workspace)
    shards = len(runs)
    shutil.rmtree(out)
    asked: list[int] = []
    real = Store.derived

    def spy(self: Store, kind: str, keys: Any = None) -> dict[str, bytes]:
        keys = list(keys) if keys is not None else None
        if kind == search.KIND:
            asked.append(len(keys) if keys is not None else -1)
        return real(self, kind, keys)

    monkeypatch.setattr(Store, "derived", spy)
    warm = build(cfg, out, demo_workspace)
    assert warm.search["reindexed"] == [] and len(runs) == shards > 2
    assert asked == [1] * shards


def _stored_keys(store: Any) -> list[str]:
    return [str(k) for (k,) in store.db.execute(
        "SELECT key FROM derived WHERE kind = ?", (search.KIND,))]


def _failing_binary(folder: Path) -> Path:
    script = folder / "pagefind-broken"
    script.write_text("#!/bin/sh\necho 'Error: the disk is on fire' >&2\nexit 1\n")
    script.chmod(0o755)
    return script


@pytest.mark.parametrize("binary", ["fails", "missing"])
def test_a_pagefind_failure_is_an_error_that_keeps_the_previous_output(
        tmp_path: Path, demo_workspace: Workspace, monkeypatch: pytest.MonkeyPatch,
        binary: str) -> None:
    out = tmp_path / "_site"
    build(config(tmp_path), out, demo_workspace)
    before = files(out)
    path = _failing_binary(tmp_path) if binary == "fails" else tmp_path / "no-such-pagefind"
    monkeypatch.setenv("PAGEFIND_BINARY_PATH", str(path))
    with pytest.raises(SearchError) as caught:
        build(config(tmp_path), out, retitled(demo_workspace, "A New Title"))
    message = str(caught.value)
    assert caught.value.exit_code == 1 and "\n" not in message
    assert ("the disk is on fire" in message and "exit status 1" in message
            if binary == "fails" else "not found" in message)
    assert "[search] enabled = false" in message
    assert files(out) == before
    assert not list(tmp_path.glob("._site.sitegen-staging*"))  # no staging left beside it


def test_search_off_has_no_link_page_or_bundle_and_turning_it_off_removes_them(
        tmp_path: Path, demo_workspace: Workspace, runs: list[Path]) -> None:
    out = tmp_path / "_site"
    build(config(tmp_path), out, demo_workspace)
    assert (out / "pagefind").is_dir() and (out / "search" / "index.html").is_file()
    shards = len(runs)
    report = build(config(tmp_path, enabled=False), out, demo_workspace)
    assert len(runs) == shards
    assert not (out / "pagefind").exists() and not (out / "search").exists()
    assert not list(out.glob("lang/*/search"))
    assert any(p.startswith("pagefind/") for p in report.removed)
    for page in out.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "search-link" not in text and "/pagefind/" not in text, page
    assert not list((out / "static").glob("search.*.js"))
    assert "wasm-unsafe-eval" not in (out / "_headers").read_text()


def test_pages_link_their_language_s_search_page_under_a_sub_path(
        tmp_path: Path, demo_workspace: Workspace) -> None:
    out = tmp_path / "_site"
    report = build(config(tmp_path, url="https://user.example.test/blog/"), out,
                   demo_workspace)
    assert not [m for m in report.warning_messages if "search" in m or "pagefind" in m]
    home = (out / "index.html").read_text(encoding="utf-8")
    assert 'class="search-link" href="/blog/search/"' in home
    page = (out / "search" / "index.html").read_text(encoding="utf-8")
    assert 'data-bundle="/blog/pagefind/"' in page and 'data-base="/blog/"' in page
    assert re.search(r'<script src="/blog/static/search\.[0-9a-f]+\.js" defer>', page)
    assert 'action="/blog/search/"' in page
    assert '<meta name="robots" content="noindex,follow">' in page
    assert "/search/" not in (out / "sitemap.xml").read_text()
    french = next(a for a in demo_workspace.articles
                  if a.language == "fr" and a.status == "published")
    french_page = out / str(french.slug) / "index.html"
    link = re.search(r'class="search-link" href="([^"]+)"', french_page.read_text())
    assert link is not None and link.group(1).endswith("/search/")
    target = link.group(1).removeprefix("/blog/")
    assert target.startswith("lang/") and (out / target / "index.html").is_file()
    assert '<html lang="fr"' in (out / target / "index.html").read_text()
    headers = (out / "_headers").read_text()
    assert "script-src 'self' 'wasm-unsafe-eval'" in headers
    for folder in ("fragment", "index"):
        assert f"/blog/pagefind/:shard/{folder}/*\n  Cache-Control: public, max-age=31536000, " \
            "immutable" in headers


def test_search_enabled_must_be_a_boolean(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="search"):
        config(tmp_path, enabled="yes")
    with pytest.raises(ConfigError, match="search"):
        config(tmp_path, enabled=True, engine="lunr")
    assert config(tmp_path).search.enabled is True


@pytest.mark.parametrize("marked", [True, False])
def test_only_marked_pages_are_indexed_and_all_when_none_is(tmp_path: Path,
                                                          marked: bool) -> None:
    from sitegen.emit.writer import OutputWriter

    body = '<main data-pagefind-body><h1>{0}</h1><p>{0} words</p></main>' if marked else \
        "<main><h1>{0}</h1><p>{0} words</p></main>"
    with OutputWriter(tmp_path / "out") as writer:
        writer.write("a/index.html", f'<html lang="en"><body>{body.format("Alpha")}'
                                     "</body></html>".encode())
        writer.write("b/index.html", b'<html lang="de"><body><h1>Listing</h1></body></html>')
        given = search.index_site(writer, ["a/index.html", "b/index.html", "missing.html"])
        writer.commit()
    assert given.pages == (1 if marked else 2)
    languages = _shards(tmp_path / "out")
    assert {code: entry["shards"] for code, entry in languages.items()} == \
        ({"en": ["en-0"]} if marked else {"en": ["en-0"], "de": ["de-0"]})
    for code in languages:
        entry = json.loads((tmp_path / "out" / "pagefind" / f"{code}-0" /
                            "pagefind-entry.json").read_text())
        assert {c: lang["page_count"] for c, lang in entry["languages"].items()} == {code: 1}


def test_shards_by_language_and_path_hash() -> None:
    assert [search.shard_count(n) for n in (1, 400, 401, 800, 801, 1601, 3201, 10**6)] == \
        [1, 1, 2, 2, 4, 8, 8, 8]
    assert search.shard_of("a/index.html", "en", 8) == search.shard_of("a/index.html", "en", 8)
    spread = {search.shard_of(f"p{n}/index.html", "en", 8) for n in range(200)}
    assert spread == {f"en-{k}" for k in range(8)}
    assert search.page_facts(b'<!doctype html><html class="x" lang="fr-CA"><body '
                             b"data-pagefind-body>") == ("fr-ca", True)
    assert search.page_facts(b"<html><body>") == ("unknown", False)
    assert search.page_facts(b'<html lang="../../x">') == ("x", False)


def test_pagefind_s_scratch_goes_on_tmpfs_only_with_room(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    """A container's /dev/shm is often 64 MB: too small for a large site's shards."""
    monkeypatch.setattr(pagefind, "TMPFS", str(tmp_path))
    monkeypatch.setattr(pagefind, "TMPFS_FREE", 1)
    with pagefind.scratch() as roomy:
        assert roomy.parent == tmp_path
    monkeypatch.setattr(pagefind, "TMPFS_FREE", 1 << 62)  # more than any disk has
    with pagefind.scratch() as cramped:
        assert cramped.parent != tmp_path and cramped.is_dir()
    assert not roomy.exists() and not cramped.exists()
