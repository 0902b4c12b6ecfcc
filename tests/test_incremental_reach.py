"""Incremental builds stay exact when a user's template sees an entity only through Python code.

A site's own `templates/base.html` shows the oldest article's title on every page, and
reaches it only through a function (`t()`, a message whose field walks into the article),
a filter, or a string format: no template reads an attribute of it. After that article is
retitled at the service, every page must show the new title, as a fresh build does.
"""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from sitegen.emulator.generator import generate_workspace
from tests import test_incremental as inc

SHOWS = {
    "t": "{{ t('Oldest: {a.title}.', a=site.articles[-1]) }}",
    "filter": "Oldest: {{ site.articles|last|string }}",
    "format": "{{ 'Oldest: {0.title}.'.format(site.articles[-1]) }}",
}


@pytest.mark.parametrize("how", sorted(SHOWS))
def test_an_entity_seen_only_by_python_code_is_read(tmp_path: Path, monkeypatch: Any,
                                                    how: str) -> None:
    monkeypatch.setenv("SITEGEN_API_KEY", inc.KEY)
    data = generate_workspace(12, seed=3)
    site = {"title": "Reach", "per_page": 4, "mark": "MARK 0", "language": "en",
            "description": "Reach"}
    base = ('{% extends "default/base.html" %}{% block head %}{{ super() }}\n'
            "<!-- " + SHOWS[how] + " -->\n{% endblock %}\n")

    def build(root: Path) -> dict[str, bytes]:
        inc.write_site(root, data, site)
        (root / "templates" / "base.html").write_text(base)
        return inc.build(root, data)

    before = build(tmp_path / "incremental")
    shown = re.search(rb"<!-- Oldest: .*? -->", before["404.html"])
    assert shown is not None
    oldest = next(a for a in data["articles"] if a["status"] == "published"
                  and html.escape(a["title"]).encode() in shown[0])
    oldest["title"] = "A Title Nobody Had"
    oldest["updatedAt"] = inc._later()
    got = build(tmp_path / "incremental")
    expected = build(tmp_path / "fresh")
    shutil.rmtree(tmp_path / "fresh")
    assert b"A Title Nobody Had" in expected["404.html"]
    assert got.keys() == expected.keys()
    assert [path for path in expected if got[path] != expected[path]] == []
