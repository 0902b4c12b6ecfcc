"""Incremental builds are exact: after any sequence of edits, equal file for file to a fresh build.

The site has its own `templates/base.html` that reads what the built-in themes do not:
the three newest articles in every page's head, each tag's article count, and each
topic's newest article. Edits happen at the service (the emulator, synced over its
real API routes) — retitled, new, deleted, moved, retagged and unpublished articles —
and in the site folder (site.toml, templates, the owner's pages/ and static/). After each
step the incremental build's output must equal a build from scratch (fresh store, fresh output).
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitegen import plan
from sitegen.build import BuildOptions, run_build
from sitegen.config import load_config
from sitegen.emulator.app import create_app
from sitegen.emulator.generator import generate_workspace
from sitegen.outputnames import MANIFEST_NAME

BASE = """{% extends "default/base.html" %}
{% block head %}{{ super() }}
<!-- newest: {% for a in site.articles[:3] %}{{ a.title }}|{% endfor %} -->
<!-- tags: {% for t in site.tags %}{{ t.name }}={{ t.articles|length }};{% endfor %} -->
<!-- topics: {% for c in site.clusters %}{{ c.name }}:{{ c.articles[0].title }};{% endfor %} -->
<!-- MARK -->
{% endblock %}
"""
SITE_TOML = """[site]
title = "{title}"
url = "https://example.test/"
per_page = {per_page}
language = "{language}"
description = "{description}"

[api]
url = "https://cas.example.test"
workspace = "{workspace}"

[analytics]
enabled = false
"""
KEY = "test-key"
STAMP = [0]


def _later() -> str:
    STAMP[0] += 1
    return f"2030-01-01T00:00:{STAMP[0] % 60:02d}.{STAMP[0]:03d}Z"


def _published(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for a in data["articles"] if a["status"] == "published"]


def apply(edit: tuple[str, int], data: dict[str, Any], site: dict[str, Any]) -> None:
    """One edit, at the service (data) or in the site folder (site)."""
    kind, n = edit
    articles = _published(data)
    article = articles[n % len(articles)] if articles else None
    if kind == "retitle" and article:
        article["title"] = f"Retitled {n} {article['title']}"[:90]
        article["updatedAt"] = _later()
    elif kind == "new" and article:
        made = copy.deepcopy(article)
        made["id"] = f"{900000000000000000000000 + STAMP[0] * 1000 + n:024x}"[:24]
        made["slug"] = f"fresh-{STAMP[0]}-{n}"
        made["title"] = f"Fresh article {STAMP[0]}"
        made["createdAt"] = made["updatedAt"] = _later()
        data["articles"].append(made)
    elif kind == "delete" and article:
        data["articles"].remove(article)
    elif kind == "move" and article:
        clusters = [c["id"] for c in data["clusters"]]
        article["clusterId"] = clusters[(clusters.index(article["clusterId"]) + 1) % len(clusters)
                                        ] if article.get("clusterId") in clusters else clusters[0]
        article["updatedAt"] = _later()
    elif kind == "retag" and article:
        article["tags"] = [f"tag{n % 3}", "shared"]
        article.pop("meta", None)
        article["updatedAt"] = _later()
    elif kind == "unpublish" and article:
        article["status"] = "draft"
        article["updatedAt"] = _later()
    elif kind == "config":
        site["title"] = f"Site {n}"
        site["per_page"] = 3 + n % 4
    elif kind == "language":  # read by templates only through the page context (`lang`)
        site["language"] = ["en", "fr", "de"][n % 3]
        site["description"] = f"About {n}"
    elif kind == "template":
        site["mark"] = f"MARK {n}"
    elif kind == "page":  # the owner's pages: add, retitle, move in the menu, date, drop
        pages = site.setdefault("pages", {})
        name = f"p{n % 3}"
        if name in pages and n % 4 == 0:
            del pages[name]
        elif name in pages and n % 4 == 1:  # only its date (the sitemap's lastmod) changes
            title, menu, body, _ = pages[name]
            pages[name] = (title, menu, body, None if n % 8 == 1 else f"2026-02-{n % 28 + 1:02}")
        else:
            pages[name] = (f"Page {n}", None if n % 5 == 0 else n % 7, f"# Head {n}\n\nText {n}.",
                           None if n % 3 == 0 else f"2026-01-{n % 28 + 1:02}")
    elif kind == "static":
        site.setdefault("static", {})[f"f{n % 2}.txt"] = f"static {n}".encode()


def write_site(root: Path, data: dict[str, Any], site: dict[str, Any]) -> None:
    (root / "templates").mkdir(parents=True, exist_ok=True)
    (root / "templates" / "base.html").write_text(BASE.replace("MARK", site["mark"]))
    (root / "site.toml").write_text(SITE_TOML.format(
        title=site["title"], per_page=site["per_page"], language=site["language"],
        description=site["description"], workspace=data["workspace"]["id"]))
    for folder in ("pages", "static"):
        shutil.rmtree(root / folder, ignore_errors=True)
        (root / folder).mkdir()
    for name, (title, menu, body, updated) in site.get("pages", {}).items():
        menu_line = "" if menu is None else f"menu = {menu}\n"
        date_line = "" if updated is None else f"updated = {updated}\n"
        (root / "pages" / f"{name}.md").write_text(
            f'+++\ntitle = "{title}"\n{menu_line}{date_line}+++\n{body}\n')
    for rel, data_ in site.get("static", {}).items():
        (root / "static" / rel).write_bytes(data_)


def build(root: Path, data: dict[str, Any]) -> dict[str, bytes]:
    config = load_config(root / "site.toml")
    transport = httpx.ASGITransport(app=create_app(copy.deepcopy(data)))
    out = root / "_site"
    run_build(config, BuildOptions(output=out, transport=transport))
    return {path.relative_to(out).as_posix(): path.read_bytes()
            for path in sorted(out.rglob("*")) if path.is_file() and path.name != MANIFEST_NAME}


EDITS = st.tuples(st.sampled_from(["retitle", "new", "delete", "move", "retag", "unpublish",
                                   "config", "language", "template", "page", "static"]),
                  st.integers(0, 40))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(EDITS, min_size=1, max_size=3), min_size=1, max_size=3),
       st.booleans())
def test_every_incremental_build_equals_a_fresh_one(tmp_path_factory: Any,
                                                    steps: list[list[tuple[str, int]]],
                                                    forked: bool) -> None:
    """Every build equals a fresh one, with the plan's checks in the building process or
    shared out over forked ones (as on a site of `plan.SHARED_FROM` pages or more)."""
    import os

    os.environ["SITEGEN_API_KEY"] = KEY
    shared_from = plan.SHARED_FROM
    plan.SHARED_FROM = 1 if forked else 10**9
    try:
        _equals_a_fresh_one(tmp_path_factory, steps)
    finally:
        plan.SHARED_FROM = shared_from


def _equals_a_fresh_one(tmp_path_factory: Any, steps: list[list[tuple[str, int]]]) -> None:
    data = generate_workspace(24, seed=5)
    site = {"title": "Exact", "per_page": 4, "mark": "MARK 0", "language": "en",
            "description": "Exact"}
    incremental = tmp_path_factory.mktemp("incremental")
    write_site(incremental, data, site)
    build(incremental, data)
    for step in steps:
        for edit in step:
            apply(edit, data, site)
        write_site(incremental, data, site)
        got = build(incremental, data)
        fresh = tmp_path_factory.mktemp("fresh")
        write_site(fresh, data, site)
        expected = build(fresh, data)
        shutil.rmtree(fresh)
        assert got.keys() == expected.keys(), step
        differing = [path for path in expected if got[path] != expected[path]]
        assert not differing, (step, differing[:5])


def test_a_footer_over_the_newest_articles_follows_a_retitle(tmp_path: Path,
                                                             monkeypatch: Any) -> None:
    """The issue's case: one title changed at the service reaches every page that shows it."""
    monkeypatch.setenv("SITEGEN_API_KEY", KEY)
    data = generate_workspace(24, seed=7)
    site = {"title": "Exact", "per_page": 4, "mark": "MARK 0", "language": "en",
            "description": "Exact"}
    write_site(tmp_path, data, site)
    before = build(tmp_path, data)
    newest = max(_published(data), key=lambda a: (a["createdAt"], a["id"]))
    newest["title"] = "A Title Nobody Had"
    newest["updatedAt"] = _later()
    after = build(tmp_path, data)
    pages = [p for p in after if p.endswith(".html")]
    assert all(b"A Title Nobody Had" in after[p] for p in pages)
    assert sum(after[p] != before[p] for p in pages) == len(pages)
