"""Paths the owner and the service both claim: the owner's page or file keeps the path, the
page the service names (article, tag, agent, topic, author, language, social post) moves to
a free slug with one warning naming both, and the build goes on (the owner cannot rename
what the service names)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sitegen.cli import main
from sitegen.model.claims import Claims, give_way

ARTICLE = "kimchi-slowly"  # an article of the demo workspace, at /kimchi-slowly/


def build(capsys: pytest.CaptureFixture[str], *more: str) -> tuple[int, str]:
    code = main(["build", "--demo", "-o", "out", *more])
    return code, capsys.readouterr().err


def test_an_article_slugged_like_an_own_page_moves_and_its_redirects_stay_right(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert build(capsys)[0] == 0
    out = tmp_path / "out"
    assert "Kimchi" in (out / ARTICLE / "index.html").read_text()
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / f"{ARTICLE}.md").write_text('+++\ntitle = "My own page"\n+++\nMine.\n')
    code, err = build(capsys, "--offline")
    assert code == 0, err  # (was exit 2: "your page … and article … both have the URL")
    warned = [line for line in err.splitlines() if f"pages/{ARTICLE}.md" in line]
    assert len(warned) == 1 and re.search(rf"article \S+ wants the URL /{ARTICLE}/", warned[0])
    assert f"moved to /{ARTICLE}-2/" in warned[0]
    assert re.search(r"<h1[^>]*>My own page</h1>", (out / ARTICLE / "index.html").read_text())
    moved = (out / f"{ARTICLE}-2" / "index.html").read_text()
    assert "Kimchi" in moved and "My own page" not in moved
    assert f'href="/{ARTICLE}-2/"' in (out / "page" / "2" / "index.html").read_text()
    # the old URL is the owner's page now: no redirect takes it
    assert not (out / "_redirects").exists() or \
        f"/{ARTICLE}/ " not in (out / "_redirects").read_text()
    # the page gone, the article comes back, and its moved URL redirects to it
    (tmp_path / "pages" / f"{ARTICLE}.md").unlink()
    code, err = build(capsys, "--offline")
    assert code == 0, err
    assert "Kimchi" in (out / ARTICLE / "index.html").read_text()
    assert f"/{ARTICLE}-2/ /{ARTICLE}/ 301" in (out / "_redirects").read_text()
    assert f'url=http://localhost:8000/{ARTICLE}/"' in \
        (out / f"{ARTICLE}-2" / "index.html").read_text()


@pytest.mark.parametrize("owned, moved_from, moved_to", [
    (f"{ARTICLE}/index.html", f"/{ARTICLE}/", f"/{ARTICLE}-2/"),
    ("tags/berlin/index.html", "/tags/berlin/", "/tags/berlin-2/"),
    ("tags/berlin/feed.xml", "/tags/berlin/", "/tags/berlin-2/"),
    ("agents/toolsmith/index.html", "/agents/toolsmith/", "/agents/toolsmith-2/"),
    ("topics/slow-travel", "/topics/slow-travel/", "/topics/slow-travel-2/"),
    ("authors/priya-raman/page/2/index.html", "/authors/priya-raman/",
     "/authors/priya-raman-2/"),
    ("lang/fr/index.html", "/lang/fr/", "/lang/fr-2/"),
    ("social/lyon-a-pied/index.html", "/social/lyon-a-pied/", "/social/lyon-a-pied-2/"),
])
def test_a_static_file_on_a_page_the_service_names_moves_that_page(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        owned: str, moved_from: str, moved_to: str) -> None:
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "static" / owned
    mine.parent.mkdir(parents=True)
    mine.write_bytes(b"the owner's own bytes\n")
    code, err = build(capsys)
    assert code == 0, err  # (was exit 2: "static/… would overwrite …, which sitegen writes")
    warned = [line for line in err.splitlines() if f"static/{owned}" in line]
    assert len(warned) == 1, err
    assert f"wants the URL {moved_from}" in warned[0] and f"moved to {moved_to}" in warned[0]
    out = tmp_path / "out"
    assert (out / owned).read_bytes() == b"the owner's own bytes\n"
    assert (out / moved_to.strip("/") / "index.html").is_file()


def test_a_fixed_path_of_sitegens_stays_a_configuration_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """sitegen's own paths (`/tags/`, feeds…) are fixed, not the service's to name: the
    owner renames the file."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "static" / "tags").mkdir(parents=True)
    (tmp_path / "static" / "tags" / "index.html").write_text("mine")
    code, err = build(capsys)
    assert code == 2 and "static/tags/index.html would overwrite tags/index.html" in err


def test_claims_see_files_folders_and_a_sections_parts() -> None:
    claims = Claims({"about/index.html": "pages/about.md"},
                    ["notes", "tags/x/feed.xml", "a/b/index.html/c"])
    assert claims.owner_of("/about/") == "your page pages/about.md"
    assert claims.owner_of("/notes/deep/") == "your file static/notes"  # a file, a folder
    assert claims.owner_of("/a/b/") == "your file static/a/b/index.html/c"
    assert claims.owner_of("/tags/x/") is None  # an article has no feed of its own
    assert claims.owner_of("/tags/x/", section=True) == "your file static/tags/x/feed.xml"
    assert claims.owner_of("/free/") is None and not Claims()
    # no slug frees a path under the owner's file: the slug is kept (the collision check
    # then names the file)
    slugs = iter(f"s-{n}" for n in range(2, 5000))
    assert give_way(claims, "s", lambda s: f"/notes/{s}/", lambda: next(slugs),
                    "article 1") == ("s", None)


def test_an_old_url_running_into_an_owners_file_makes_no_redirect(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert build(capsys)[0] == 0  # the article at /kimchi-slowly/: its URL history has it
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / ARTICLE).write_bytes(b"a file where the article's folder was\n")
    code, err = build(capsys, "--offline")
    assert code == 0, err  # (the redirect page kimchi-slowly/index.html ran into the file)
    assert f"moved to /{ARTICLE}-2/" in err
    assert f"the old URL /{ARTICLE}/ runs into your file static/{ARTICLE}" in err
    out = tmp_path / "out"
    assert (out / ARTICLE).read_bytes() == b"a file where the article's folder was\n"
    assert "Kimchi" in (out / f"{ARTICLE}-2" / "index.html").read_text()
