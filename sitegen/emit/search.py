"""The search index in shards: Pagefind over the pages that changed, merged in one search UI.

Role: the stage of `sitegen.build` after every page and site file is named to the writer
and before the link check and the commit (`[search] enabled`). Pagefind has no incremental
mode, but its search UI merges several bundles (`mergeIndex`), so the indexed pages (those
whose HTML carries `data-pagefind-body`: the built-in themes' article pages; every HTML page
when none does; code listings, `<pre>`, left out: `EXCLUDED`) are split into shards: by
the page's `<html lang>` (each shard holds one language; the search page loads each
language's shards as one Pagefind instance, its own first), then by a stable hash of the page's path
into 1, 2, 4 or 8 shards as the language has pages (`PAGES_PER_SHARD` each). A shard is
`pagefind/<lang>-<n>/`, a whole Pagefind bundle; Pagefind's UI files sit once at
`pagefind/`, beside `shards.json`, which tells the theme's `search.js` which shards each
language has.

Each shard is keyed by its indexed pages (path and sha256), the Pagefind binary and the code
fingerprint (`sitegen.codeprint`, which has Pagefind's version). A
shard whose key is the previous build's, its files intact in the output, is kept as it is;
else its bundle comes from the content store (`kind = search`, one per shard; a CI run
with an empty output) or Pagefind indexes it again: over a folder of links to the pages
where the writer holds them, on tmpfs (`sitegen.emit.pagefind`). So a one-article change
re-indexes one shard, and the report names it. What each page is (language, marked) is
remembered with its sha256 (`kind = searchstate`), so an unchanged page is not read again.
`pagefind-entry.json` is rewritten with sorted keys (Pagefind lists languages in no fixed
order), so the same pages give byte-identical files. `--force` indexes every shard again.

This module must never write the output itself (the writer does), never read content from
anywhere but the writer and the store, and never leave its temporary folders behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sitegen import fileset
from sitegen.codeprint import code_fingerprint
from sitegen.emit import pagefind
from sitegen.emit.pagefind import UI_FILES, find_binary, link_pages, read_bundle
from sitegen.errors import SearchError

if TYPE_CHECKING:
    from sitegen.emit.writer import OutputWriter
    from sitegen.model.views import Site
    from sitegen.store import Store

#: The output folder of the bundles.
BUNDLE = "pagefind"
#: What marks a page as indexed (the attribute Pagefind looks for).
MARKER = b"data-pagefind-body"
#: What is never indexed: code listings (their text is no prose to find, and an excerpt of
#: it reads as noise: `…jar.""" return round(…`).
EXCLUDED = "pre"
ENTRY = "pagefind-entry.json"
#: The list of shards by language, which the search page reads.
SHARDS_FILE = "shards.json"
#: The store's kinds (a shard's bundle; what the last build indexed), and the state's format.
KIND, STATE, FORMAT = "search", "searchstate", "2"
#: Pages a shard holds at most before its language is split in twice as many (up to MAX).
PAGES_PER_SHARD, MAX_SHARDS = 400, 8
_LANG = re.compile(rb"<html\b[^>]*?\blang=\"([^\"]*)\"", re.IGNORECASE)
_SAFE = re.compile(r"[^a-z0-9-]+")


@dataclass
class SearchResult:
    """What the search stage did: pages indexed, every shard, and those indexed again."""

    pages: int = 0
    shards: list[str] = field(default_factory=list)
    indexed: list[str] = field(default_factory=list)

    def to_report(self) -> dict[str, Any]:
        return {"pages": self.pages, "shards": len(self.shards), "reindexed": self.indexed}


def page_facts(data: bytes) -> tuple[str, bool]:
    """A page's language (its `<html lang>`, lower case; "unknown" without one) and
    whether it carries the marker."""
    found = _LANG.search(data, 0, 4096)
    language = _SAFE.sub("-", found.group(1).decode("ascii", "replace").lower()).strip("-") \
        if found is not None else ""
    return language or "unknown", MARKER in data


def shard_count(pages: int, per_shard: int | None = None) -> int:
    """How many shards a language of *pages* indexed pages is split in (*per_shard*: at
    most `PAGES_PER_SHARD` pages each, until there are `MAX_SHARDS`)."""
    count, per_shard = 1, per_shard or PAGES_PER_SHARD
    while count < MAX_SHARDS and pages > per_shard * count:
        count *= 2
    return count


def shard_of(path: str, language: str, count: int) -> str:
    """The shard of the page *path* (stable: a hash of the path)."""
    number = int.from_bytes(hashlib.blake2b(path.encode(), digest_size=4).digest(), "big")
    return f"{language}-{number % count}"


def _html(paths: Iterable[str]) -> list[str]:
    return sorted(path for path in paths
                  if path.endswith(".html") and not path.startswith(BUNDLE + "/"))


def _canonical(rel: str, data: bytes) -> bytes:
    """*data* as written, but the entry file's JSON with its keys sorted."""
    if rel != ENTRY:
        return data
    return json.dumps(json.loads(data), ensure_ascii=False, sort_keys=True,
                      separators=(",", ":")).encode("utf-8")


class _Index:
    """One build's search stage (see the module docstring)."""

    def __init__(self, writer: OutputWriter, store: Store | None, reuse: bool) -> None:
        self.writer, self.store, self.reuse = writer, store, reuse
        self.state: dict[str, Any] = {"pages": {}, "shards": {}}
        if store is not None and reuse:
            found = store.derived(STATE, ["state"]).get("state")
            try:
                loaded = json.loads(found) if found else None
            except ValueError:
                loaded = None
            if isinstance(loaded, dict) and loaded.get("format") == FORMAT:
                self.state = loaded

    def facts(self, pages: list[str]) -> dict[str, tuple[str, str, bool]]:
        """path → (sha256, language, marked), read from a page only when it changed."""
        known: Mapping[str, list[Any]] = self.state.get("pages", {})
        facts: dict[str, tuple[str, str, bool]] = {}
        for path in pages:
            digest = self.writer.digest(path) or ""
            row = known.get(path)
            if row is not None and row[0] == digest:
                facts[path] = (digest, str(row[1]), bool(row[2]))
                continue
            data = self.writer.read(path)
            if data is not None:
                facts[path] = (digest, *page_facts(data))
        return facts

    def shards(self, facts: Mapping[str, tuple[str, str, bool]]) -> dict[str, list[str]]:
        """shard → its indexed pages (those marked, else every page)."""
        indexed = [path for path, (_, _, marked) in facts.items() if marked] or list(facts)
        by_language: dict[str, list[str]] = {}
        for path in indexed:
            by_language.setdefault(facts[path][1], []).append(path)
        shards: dict[str, list[str]] = {}
        for language, paths in sorted(by_language.items()):
            count = shard_count(len(paths))
            for path in paths:
                shards.setdefault(shard_of(path, language, count), []).append(path)
        return dict(sorted(shards.items()))

    def kept(self, shard: str, key: str) -> bool:
        """Keep the previous build's bundle of *shard* when its key is the same and every
        file of it is intact."""
        previous = self.state.get("shards", {}).get(shard)
        if not self.reuse or not previous or previous[0] != key:
            return False
        names = [f"{BUNDLE}/{shard}/{name}" for name in previous[1]]
        if not names or not all(self.writer.intact(name) for name in names):
            return False
        for name in names:
            self.writer.keep(name)
        return True

    def ui_kept(self) -> bool:
        names = [f"{BUNDLE}/{name}" for name in sorted(UI_FILES)]
        if not self.reuse or not all(self.writer.intact(name) for name in names):
            return False
        for name in names:
            self.writer.keep(name)
        return True

    def save(self, facts: Mapping[str, tuple[str, str, bool]], keys: Mapping[str, str],
             names: Mapping[str, list[str]], made: Mapping[str, bytes]) -> None:
        if self.store is None:
            return
        self.store.save_derived(KIND, made, keys.values())
        state = {"format": FORMAT, "pages": {p: list(f) for p, f in facts.items()},
                 "shards": {shard: [keys[shard], names[shard]] for shard in keys}}
        self.store.save_derived(STATE, {"state": json.dumps(state).encode()}, ["state"])


def _shard_key(binary: str, shard: str, pages: Iterable[tuple[str, str]]) -> str:
    digest = hashlib.sha256(f"{code_fingerprint()}|{binary}|{shard}".encode())
    for path, sha in pages:
        digest.update(f"\x00{path}\x00{sha}".encode())
    return digest.hexdigest()


def _binary_stamp() -> str:
    binary = find_binary()
    found = binary.stat()
    return f"{binary}|{found.st_size}|{found.st_mtime_ns}"


def make_shards(writer: OutputWriter, shards: Mapping[str, list[str]]
                ) -> Iterator[tuple[str, dict[str, bytes]]]:
    """Run Pagefind over each shard's pages (links to where the writer holds them), as
    many at once as the machine has cores; each shard's files by path, shard by shard in
    the order of *shards* (the caller drops each before the next)."""
    def one(shard: str, root: Path) -> dict[str, bytes]:
        site, output = root / shard / "site", root / shard / "bundle"
        sources = {path: writer.source(path) for path in shards[shard]}
        link_pages(site, {path: source for path, source in sources.items() if source})
        pagefind.run_pagefind(site, output, EXCLUDED)
        files = {rel: _canonical(rel, data) for rel, data in read_bundle(output).items()}
        shutil.rmtree(root / shard, ignore_errors=True)  # (tmpfs holds the shards under way)
        return files

    if not shards:
        return
    workers = min(len(shards), os.cpu_count() or 1)
    with pagefind.scratch() as root, ThreadPoolExecutor(max_workers=workers) as pool:
        done = [(shard, pool.submit(one, shard, root)) for shard in shards]
        done.reverse()
        while done:
            shard, future = done.pop()  # (its files are the caller's alone once handed over)
            yield shard, future.result()


def _stored_bundle(store: Store | None, key: str) -> dict[str, bytes] | None:
    """The stored bundle under *key*, or None (not stored, or its seal does not verify)."""
    blob = store.derived(KIND, [key]).get(key) if store is not None else None
    return fileset.unpack(blob) if blob is not None else None


def _write_bundle(writer: OutputWriter, shard: str, files: Mapping[str, bytes],
                  ui: dict[str, bytes]) -> list[str]:
    """Name a shard's files to the writer (Pagefind's UI files into *ui*, once for all:
    the same binary writes the same ones); the shard's file names."""
    for rel, data in sorted(files.items()):
        if rel in UI_FILES:
            ui.setdefault(rel, data)
        else:
            writer.write(f"{BUNDLE}/{shard}/{rel}", data)
    return sorted(rel for rel in files if rel not in UI_FILES)


def index_site(writer: OutputWriter, pages: Iterable[str], store: Store | None = None, *,
               reuse: bool = True) -> SearchResult:
    """Name the search bundles of *pages* (output paths) to the writer: each shard kept,
    from the store, or indexed again (see the module docstring). One shard's bundle is
    in memory at a time (at 16,000 articles they are ~30 MB together)."""
    index = _Index(writer, store, reuse)
    facts = index.facts(_html(pages))
    shards = index.shards(facts)
    if not shards:
        raise SearchError("the site has no HTML page for Pagefind to index: set [search] "
                          "enabled = false, or publish an article")
    binary = _binary_stamp()
    keys = {shard: _shard_key(binary, shard, ((p, facts[p][0]) for p in sorted(paths)))
            for shard, paths in shards.items()}
    names: dict[str, list[str]] = {}
    kept = {shard for shard, key in keys.items() if index.kept(shard, key)}
    for shard in kept:
        names[shard] = list(index.state["shards"][shard][1])
    ui: dict[str, bytes] = {}
    todo: list[str] = []
    for shard in sorted(keys.keys() - kept):
        files = _stored_bundle(store, keys[shard]) if reuse else None
        if files is None:
            todo.append(shard)
        else:
            names[shard] = _write_bundle(writer, shard, files, ui)
    made: dict[str, bytes] = {}  # key → the packed bundle, for the store
    for shard, files in make_shards(writer, {shard: shards[shard] for shard in todo}):
        names[shard] = _write_bundle(writer, shard, files, ui)
        made[keys[shard]] = fileset.pack(files)
    indexed = list(todo)
    if not index.ui_kept():
        if not ui:  # every shard kept: the UI files of a stored bundle, else made again
            ui, extra = _ui_files(writer, store, keys, shards, kept)
            made.update(extra)
            indexed += [min(kept)] if extra else []
        for rel in sorted(UI_FILES & ui.keys()):
            writer.write(f"{BUNDLE}/{rel}", ui[rel])
    writer.write(f"{BUNDLE}/{SHARDS_FILE}", _shards_file(shards, facts))
    index.save(facts, keys, names, made)
    return SearchResult(pages=sum(len(p) for p in shards.values()), shards=list(shards),
                        indexed=sorted(indexed))


def search_stage(site: Site, writer: OutputWriter, store: Store, *, force: bool = False
                 ) -> dict[str, Any]:
    """The build's search stage: the index of *site*'s pages when `[search]` is on (the
    report's `search`), else nothing."""
    if site.search_url is None:
        return {}
    from sitegen.model.kinds import kind_of

    return index_site(writer, [page.path for page in site.pages
                               if not kind_of(page.kind).preview_only],  # (drafts: never)
                      store, reuse=not force).to_report()


def _ui_files(writer: OutputWriter, store: Store | None, keys: Mapping[str, str],
              shards: Mapping[str, list[str]], kept: Iterable[str]
              ) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """Pagefind's UI files when every shard was kept: from a kept shard's stored bundle, else
    from indexing one shard again (its bundle then stored, packed under its key, its files
    already kept)."""
    first = min(kept)
    files = _stored_bundle(store, keys[first])
    extra = {}
    if files is None:
        files = dict(make_shards(writer, {first: shards[first]}))[first]
        extra[keys[first]] = fileset.pack(files)
    return {rel: data for rel, data in files.items() if rel in UI_FILES}, extra


def _shards_file(shards: Mapping[str, list[str]],
                 facts: Mapping[str, tuple[str, str, bool]]) -> bytes:
    """`shards.json`: each language's shards (folders under the bundle) and its page count,
    the language with the most pages first (a search page in a language without an index
    searches that one, as Pagefind itself would)."""
    languages: dict[str, dict[str, Any]] = {}
    for shard, paths in shards.items():
        entry = languages.setdefault(facts[paths[0]][1], {"pages": 0, "shards": []})
        entry["pages"] += len(paths)
        entry["shards"].append(shard)
    ordered = dict(sorted(languages.items(), key=lambda item: (-item[1]["pages"], item[0])))
    return json.dumps({"languages": ordered}, sort_keys=False, separators=(",", ":")).encode()
