"""The pure half of deploy: waves, deletions, reconciling a listing, object headers."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sitegen.deploy.objects import content_type, object_headers, website_redirects
from sitegen.deploy.plan import plan_deploy, reconcile
from sitegen.emit.headers import IMMUTABLE, REVALIDATE, SHORT, render_headers
from sitegen.storefile import open_store

SITE = {"index.html": "h1", "new/index.html": "n1", "static/style.ab12.css": "c2",
        "favicon.svg": "f1", "feed.xml": "x2", "old/index.html": "o1"}


def test_uploads_come_in_waves_assets_new_pages_changed_pages_feeds_then_deletions() -> None:
    record = {"index.html": ("h0", "e"), "static/style.ab12.css": ("c1", "e"),
              "favicon.svg": ("f1", "e"), "feed.xml": ("x1", "e"), "gone/index.html": ("g", "e"),
              "old/index.html": ("o1", "e")}
    plan = plan_deploy(SITE, record)
    assert plan.waves == (("static/style.ab12.css",), ("new/index.html",), ("index.html",),
                          ("feed.xml",))
    assert plan.deletes == ("gone/index.html",) and plan.unchanged == 2
    assert plan.uploads == ["static/style.ab12.css", "new/index.html", "index.html", "feed.xml"]
    assert plan_deploy(SITE, record, delete=False).deletes == ()
    assert plan_deploy(SITE, {p: (s, "e") for p, s in SITE.items()}).empty


def test_a_listing_keeps_what_agrees_adopts_identical_files_and_counts_the_drift() -> None:
    record = {"index.html": ("h1", "e1"), "favicon.svg": ("f1", "e2"), "feed.xml": ("x2", "e3")}
    listing = {"index.html": '"e1"', "favicon.svg": '"other"', "static/style.ab12.css": '"m5"',
               "stray.txt": '"e9"'}
    md5 = {"static/style.ab12.css": "m5", "favicon.svg": "zz"}
    found, drift = reconcile(listing, record, SITE, lambda p: md5.get(p, ""))
    assert found == {"index.html": ("h1", "e1"), "favicon.svg": ("", "other"),
                     "static/style.ab12.css": ("c2", "m5"), "stray.txt": ("", "e9")}
    assert (drift.missing, drift.extra, drift.changed) == (1, 2, 1)
    assert drift.describe() == "1 missing, 2 extra, 1 changed"
    plan = plan_deploy(SITE, found)
    assert "favicon.svg" in plan.uploads and "feed.xml" in plan.uploads
    assert "static/style.ab12.css" not in plan.uploads and plan.deletes == ("stray.txt",)
    assert not reconcile({"a": '"1"'}, {"a": ("s", "1")}, {}, lambda p: "")[1]


def test_headers_follow_the_headers_file_rule() -> None:
    assert object_headers("static/style.ab12.css") == {
        "ContentType": "text/css; charset=utf-8", "CacheControl": IMMUTABLE}
    assert object_headers("a/index.html") == {
        "ContentType": "text/html; charset=utf-8", "CacheControl": REVALIDATE}
    text = render_headers("", None).decode()
    assert f"/static/*\n  Cache-Control: {IMMUTABLE}" in text
    assert content_type("img/photo.webp") == "image/webp"
    assert content_type("pagefind/x.pf_meta") == "application/octet-stream"
    assert content_type("_redirects") == "text/plain; charset=utf-8"


def test_every_cache_rule_of_the_headers_file_is_the_deploy_rule() -> None:
    """What `_headers` caches for a year or a short while (search on) is what deploy
    uploads with that Cache-Control; anything else revalidates."""
    import fnmatch

    lines = render_headers("", None, search=True).decode().splitlines()
    rules = {value: [lines[i - 1].lstrip("/").replace(":shard", "*")  # (`:shard`: one segment)
                     for i, line in enumerate(lines) if line.strip() == f"Cache-Control: {value}"]
             for value in (IMMUTABLE, SHORT)}
    assert {"static/*", "media/*", "pagefind/*/fragment/*", "pagefind/*/index/*"} <= set(
        rules[IMMUTABLE])
    assert {"pagefind/pagefind-ui.js", "pagefind/*/pagefind.js"} <= set(rules[SHORT])
    for path in ("static/app.1a2b.js", "pagefind/en-0/fragment/en_3f2.pf_fragment",
                 "pagefind/de-3/index/en_9c1.pf_index", "pagefind/en-0/pagefind.js",
                 "pagefind/pagefind-ui.js", "pagefind/shards.json", "a/index.html",
                 "media/abc-480.webp", "feed.xml", "pagefind/en-0/pagefind-worker.js",
                 "pagefind/en-0/pagefind-entry.json"):
        expected = next((value for value, globs in rules.items()
                         if any(fnmatch.fnmatch(path, g) for g in globs)), REVALIDATE)
        assert object_headers(path)["CacheControl"] == expected, path


def test_redirects_name_the_old_object_and_the_absolute_new_address() -> None:
    text = "/blog/old/ /blog/new/ 301\n/blog/x.html /blog/y/ 301\n# note\nbad\n"
    assert website_redirects(text, "https://x.test/blog/") == {
        "old/index.html": "https://x.test/blog/new/", "x.html": "https://x.test/blog/y/"}
    first = "/blog/old/ /blog/mine/ 302\n/blog/old/ /blog/new/ 301\n"  # the owner's, then sitegen's
    assert website_redirects(first, "https://x.test/blog/") == {
        "old/index.html": "https://x.test/blog/mine/"}


def test_an_older_store_gains_the_deployed_table_and_keeps_its_content(tmp_path: Path) -> None:
    with open_store(tmp_path, "src") as store:
        store.set_state({"api_version": "v2"})
        store.db.execute("DROP TABLE deployed")
        store.db.commit()
    with open_store(tmp_path, "src") as store:
        assert not store.recreated and store.has_content()
        store.save_deployed("t", {"a": ("s1", "e1"), "b": ("s2", "e2")})
        store.save_deployed("t", {"c": ("s3", "e3")}, ["a"])
        store.save_deployed("u", {"z": ("s", "e")})
        assert store.deployed("t") == {"b": ("s2", "e2"), "c": ("s3", "e3")}
        store.save_deployed("t", {"d": ("s4", "e4")}, replace=True)
        assert store.deployed("t") == {"d": ("s4", "e4")} and store.deployed("u")
    tables = {r[0] for r in sqlite3.connect(tmp_path / "store.sqlite").execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "deployed" in tables
