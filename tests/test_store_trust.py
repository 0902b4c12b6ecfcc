"""The whole store is untrusted (#48 findings 1, 2, 4; #50 "the cache seal and the key").

A CI cache of `.sitegen/` can be written by others. Each test edits the store's rows as an
attacker (or bad luck) would, with SQLite itself, and builds as CI does: a row that does not
verify or cannot be read is fetched or derived again, never published and never a failed
build; an older output record or page row put back is not used; a key change is said once.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from sitegen import storefile
from sitegen.cli import main
from sitegen.emulator.generator import generate_workspace
from sitegen.outputnames import MANIFEST_NAME
from tests.clireport import cli_report
from tests.test_incremental import KEY, build, write_site

FORGED = "Forged title, click https://phish.example/login"
_SEEDS: dict[str, Path] = {}


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
         tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of a demo site folder built once (its store and `out/`), as a cache restores it."""
    monkeypatch.setenv("SITEGEN_CACHE_KEY", "a-secret-only-the-build-has")
    if "demo" not in _SEEDS:
        root = tmp_path_factory.mktemp("seed")
        cli_report(root, "build", "-q", "--demo", "-o", "out")
        _SEEDS["demo"] = root
    shutil.copytree(_SEEDS["demo"], tmp_path / "site", symlinks=True)
    return tmp_path / "site"


def _db(site: Path) -> sqlite3.Connection:
    return sqlite3.connect(site / ".sitegen" / "demo" / "store.sqlite")


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != MANIFEST_NAME}


def _texts(root: Path) -> str:
    return "\n".join(data.decode("utf-8", "replace") for data in _files(root).values())


# --- finding 1: text edited in the cached store is never published ---------------------

def test_an_article_record_edited_in_the_store_is_never_published(demo: Path) -> None:
    with _db(demo) as db:
        ident, record = db.execute("SELECT id, record FROM articles ORDER BY id").fetchone()
        article = json.loads(record)
        title = article["title"]
        article["title"] = FORGED  # (its updatedAt kept: the sync sees nothing to fetch)
        db.execute("UPDATE articles SET record = ? WHERE id = ?", (json.dumps(article), ident))
    offline = cli_report(demo, "build", "-q", "--demo", "--offline", "-o", "offline")
    assert "phish.example" not in _texts(demo / "offline")
    assert offline["articles"] == 0 or title not in _texts(demo / "offline")  # left out
    assert [w for w in offline["warnings"] if "did not verify" in w] == [
        "1 stored row did not verify (edited, replayed or sealed with another key) and was "
        "fetched or derived again"]
    cli_report(demo, "build", "-q", "--demo", "-o", "online")
    texts = _texts(demo / "online")
    assert "phish.example" not in texts and title in texts  # fetched again
    again = cli_report(demo, "build", "-q", "--demo", "--offline", "-o", "again")
    assert not [w for w in again["warnings"] if "did not verify" in w]  # repaired
    assert _files(demo / "again") == _files(demo / "online")


# --- finding 2: one poisoned store value never fails a build ---------------------------

POISONS = {
    "builds value not JSON": "UPDATE builds SET value = 'not json {' WHERE name = 'code'",
    "garbled pages.reads": "UPDATE pages SET reads = x'010203' "
                           "WHERE path = (SELECT min(path) FROM pages)",
    "escaping urls row": "INSERT INTO urls(article, url) "
                         "SELECT min(id), '/../../escape/' FROM articles",
}


@pytest.mark.parametrize("poison", sorted(POISONS))
def test_a_poisoned_store_value_is_a_cache_miss_not_a_failed_build(
        demo: Path, poison: str) -> None:
    before = _files(demo / "out")
    with _db(demo) as db:
        assert db.execute(POISONS[poison]).rowcount == 1
    for _ in range(2):  # (and the next build finds it repaired)
        cli_report(demo, "build", "-q", "--demo", "--offline", "-o", "out")  # exit 0
        assert _files(demo / "out") == before
    assert not (demo / "escape").exists() and not (demo.parent / "escape").exists()


# --- finding 4: a replayed output record never keeps a stale page ----------------------

@pytest.mark.parametrize("replayed", ["record and page row", "the whole plan too"])
def test_a_replayed_output_record_never_keeps_a_stale_page(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, replayed: str) -> None:
    """Build, snapshot the output record, the article page's bytes and its `pages` row;
    correct the article at the service, build; put the snapshot back, build: the page shows
    the corrected title, as the lists do."""
    monkeypatch.setenv("SITEGEN_API_KEY", KEY)
    data = generate_workspace(24, seed=7)
    site = {"title": "Replay", "per_page": 4, "mark": "MARK 0", "language": "en",
            "description": "Replay"}
    write_site(tmp_path, data, site)
    first = build(tmp_path, data)
    article = next(a for a in data["articles"] if a["status"] == "published")
    page = next(p for p in first if p.endswith("index.html") and article["slug"] in p
                and article["title"].encode() in first[p])
    store = tmp_path / ".sitegen" / "store.sqlite"
    tables = ("pages", "reads", "builds") if replayed == "the whole plan too" else ()
    with sqlite3.connect(store) as db:
        meta = db.execute("SELECT * FROM meta WHERE name LIKE 'output:%'"
                          + (" OR name = 'generation'" if tables else "")).fetchall()
        row = db.execute("SELECT * FROM pages WHERE path = ?", (page,)).fetchone()
        saved = {t: db.execute(f"SELECT * FROM {t}").fetchall() for t in tables}
    old = (tmp_path / "_site" / page).read_bytes()
    article["title"] = "The Corrected Title"
    article["updatedAt"] = "2031-01-01T00:00:00.000Z"
    second = build(tmp_path, data)
    assert b"The Corrected Title" in second[page]
    with sqlite3.connect(store) as db:  # the attacker puts the snapshot back
        for found in meta:
            db.execute(f"INSERT OR REPLACE INTO meta VALUES ({','.join('?' * len(found))})",
                       found)
        db.execute(f"INSERT OR REPLACE INTO pages VALUES ({','.join('?' * len(row))})", row)
        for table, rows in saved.items():
            db.execute(f"DELETE FROM {table}")
            for found in rows:
                db.execute(f"INSERT INTO {table} VALUES ({','.join('?' * len(found))})", found)
    (tmp_path / "_site" / page).write_bytes(old)
    third = build(tmp_path, data)
    assert b"The Corrected Title" in third[page] and old != third[page]
    assert third == second


# --- #50: a key change is said once; offline it cannot verify the content ---------------

def test_another_key_is_said_once_and_offline_names_the_fix(
        demo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SITEGEN_CACHE_KEY", "the-rotated-key")
    report = cli_report(demo, "build", "-q", "--demo", "-o", "out")
    said = [w for w in report["warnings"] if "key" in w or "did not verify" in w]
    assert said == ["the cache was sealed with another key (SITEGEN_CACHE_KEY or the API key "
                    "changed): everything in it is fetched or made again this once"]
    again = cli_report(demo, "build", "-q", "--demo", "--offline", "-o", "out")
    assert not [w for w in again["warnings"] if "key" in w or "verify" in w]  # sealed anew
    monkeypatch.setenv("SITEGEN_CACHE_KEY", "yet-another-key")
    monkeypatch.chdir(demo)
    capsys.readouterr()
    assert main(["build", "-q", "--demo", "--offline", "-o", "out"]) == 1
    error = capsys.readouterr().err
    assert "sealed with another key" in error and "yet-another-key" not in error
    assert error.count("\n") == 1


def test_a_ci_run_without_a_cache_key_is_told_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        ) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(storefile, "_CI_KEY_SAID", False, raising=False)  # (once a process)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.delenv("SITEGEN_CACHE_KEY", raising=False)
    assert main(["build", "--demo", "-o", "out"]) == 0
    assert capsys.readouterr().err.count("SITEGEN_CACHE_KEY is not set on this CI") == 1
    monkeypatch.setenv("SITEGEN_CACHE_KEY", "set-as-a-secret")
    assert main(["build", "--demo", "-o", "out"]) == 0
    assert "SITEGEN_CACHE_KEY is not set" not in capsys.readouterr().err
