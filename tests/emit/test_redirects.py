"""Redirects for moved articles (the store's URL history) and by hand ([site] redirects)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sitegen.build import BuildOptions, run_build
from sitegen.config import Config, demo_config, parse_config
from sitegen.errors import ConfigError
from sitegen.workspace import Workspace
from tests.content import synced

LINE = re.compile(r"^(/[^\s]*) (/[^\s]*) 301$")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return synced(demo_config(None, tmp_path_factory.mktemp("fetch")))


def config(root: Path, url: str = "https://notes.acme.test/", **site: object) -> Config:
    return parse_config({
        "site": {"title": "Moves", "url": url, **site},
        "api": {"url": "https://cas.example.test", "workspace": "65f0c0ffee0123456789abcd"},
    }, root)


def first_slug(workspace: Workspace) -> tuple[int, str]:
    index = next(i for i, a in enumerate(workspace.articles)
                 if a.status == "published" and a.slug)
    return index, str(workspace.articles[index].slug)


def with_slug(workspace: Workspace, index: int, slug: str | None = None,
              status: str | None = None) -> Workspace:
    articles = list(workspace.articles)
    update: dict[str, object] = {}
    if slug is not None:
        update["slug"] = slug
    if status is not None:
        update["status"] = status
    articles[index] = articles[index].model_copy(update=update)
    return workspace.model_copy(update={"articles": articles})


def build(root: Path, workspace: Workspace, **site: object) -> Path:
    out = root / "_site"
    run_build(config(root, **site), BuildOptions(output=out, workspace=workspace))
    return out


def rules(out: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    path = out / "_redirects"
    if not path.exists():
        return found
    for line in path.read_text().splitlines():
        match = LINE.match(line)
        assert match, f"not a Netlify redirect line: {line!r}"
        found[match.group(1)] = match.group(2)
    return found


def test_a_slug_changed_twice_keeps_two_redirects_to_the_newest_url(
        tmp_path: Path, workspace: Workspace) -> None:
    index, slug = first_slug(workspace)
    assert rules(build(tmp_path, workspace)) == {}
    build(tmp_path, with_slug(workspace, index, "second-name"))
    out = build(tmp_path, with_slug(workspace, index, "third-name"))
    assert rules(out) == {f"/{slug}/": "/third-name/", "/second-name/": "/third-name/"}
    page = (out / slug / "index.html").read_text()
    target = "https://notes.acme.test/third-name/"
    assert f'<meta http-equiv="refresh" content="0; url={target}">' in page
    assert f'<link rel="canonical" href="{target}">' in page
    assert '<meta name="robots" content="noindex">' in page
    assert f'<a href="{target}">' in page
    assert f"/{slug}/" not in (out / "sitemap.xml").read_text()
    assert (out / "third-name/index.html").is_file()


def test_a_move_there_and_back_makes_no_loop(tmp_path: Path, workspace: Workspace) -> None:
    index, slug = first_slug(workspace)
    build(tmp_path, workspace)
    build(tmp_path, with_slug(workspace, index, "elsewhere"))
    out = build(tmp_path, workspace)
    assert rules(out) == {"/elsewhere/": f"/{slug}/"}
    assert "Moved" not in (out / slug / "index.html").read_text()


def test_deleted_and_unpublished_articles_get_no_redirect(tmp_path: Path,
                                                         workspace: Workspace) -> None:
    index, slug = first_slug(workspace)
    build(tmp_path, workspace)
    build(tmp_path, with_slug(workspace, index, "renamed"))
    out = build(tmp_path, with_slug(workspace, index, "renamed", status="draft"))
    assert rules(out) == {} and not (out / slug).exists() and not (out / "renamed").exists()


def test_an_old_url_taken_by_another_page_gives_way(tmp_path: Path, workspace: Workspace,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    index, slug = first_slug(workspace)
    build(tmp_path, workspace)
    build(tmp_path, with_slug(workspace, index, "renamed"))
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "mine.md").write_text(f'+++\ntitle = "Mine"\nslug = "{slug}"\n+++\n')
    out = build(tmp_path, with_slug(workspace, index, "renamed"))
    assert rules(out) == {}
    assert "Mine" in (out / slug / "index.html").read_text()
    assert any(f"old URL /{slug}/" in r.getMessage() for r in caplog.records)


def test_redirects_by_hand_follow_chains_drop_loops_and_live_under_a_base_path(
        tmp_path: Path, workspace: Workspace, caplog: pytest.LogCaptureFixture) -> None:
    _, slug = first_slug(workspace)
    out = build(tmp_path, workspace, url="https://acme.test/blog/", redirects={
        "/old/": "/older/", "/older/": f"/{slug}/", "/a/": "/b/", "/b/": "/a/",
        "/legacy.html": "/tags/", f"/{slug}/": "/elsewhere/"})
    assert rules(out) == {"/blog/old/": f"/blog/{slug}/", "/blog/older/": f"/blog/{slug}/",
                          "/blog/legacy.html": "/blog/tags/"}
    assert "https://acme.test/blog/tags/" in (out / "legacy.html").read_text()
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "lead back" in messages and f"/{slug}/ now belongs" in messages


@pytest.mark.parametrize("target", ["https://evil.test/", "//evil.test/x", "javascript:x",
                                    "/../../etc/", "relative/"])
def test_redirects_never_point_outside_the_site(tmp_path: Path, target: str) -> None:
    with pytest.raises(ConfigError, match="redirects"):
        config(tmp_path, redirects={"/old/": target})


def test_a_redirect_page_speaks_the_language_of_the_article_it_leads_to(
        tmp_path: Path, workspace: Workspace) -> None:
    index = next(i for i, a in enumerate(workspace.articles)
                 if a.status == "published" and a.slug and a.language == "fr")
    old = str(workspace.articles[index].slug)
    build(tmp_path, workspace)
    out = build(tmp_path, with_slug(workspace, index, old + "-nouveau"))
    page = (out / old / "index.html").read_text()
    assert '<html lang="fr">' in page and "<h1>Cette page a déménagé</h1>" in page
    assert "This page has moved" not in page and "Moved to" not in page
    english = build(tmp_path / "en", workspace, redirects={"/gone/": "/"})
    assert "<h1>This page has moved</h1>" in (english / "gone" / "index.html").read_text()


def test_an_owners_redirects_file_is_merged_first_on_every_build(
        tmp_path: Path, workspace: Workspace, caplog: pytest.LogCaptureFixture) -> None:
    """Accepted at the first build, it made every build exit 2 from the first rename on."""
    published = [i for i, a in enumerate(workspace.articles) if a.status == "published"
                 and a.slug]
    first, second = published[:2]
    slug, other = str(workspace.articles[first].slug), str(workspace.articles[second].slug)
    mine = (f"# mine\n/shop/* https://shop.acme.test/:splat 301\n\n"
            f"/{other} /elsewhere/ 302").encode()  # (no newline at the end)
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "_redirects").write_bytes(mine)
    out = build(tmp_path, workspace, redirects={f"/{other}/": "/tags/", "/gone/": "/"})
    assert (out / "_redirects").read_bytes() == mine + b"\n/gone/ / 301\n"
    renamed = with_slug(with_slug(workspace, first, "new-name"), second, "other-name")
    out = build(tmp_path, renamed, redirects={f"/{other}/": "/tags/", "/gone/": "/"})
    text = (out / "_redirects").read_bytes()
    assert text == mine + f"\n/gone/ / 301\n/{slug}/ /new-name/ 301\n".encode()
    assert not (out / other).exists()  # the owner's rule wins: no page to hide it on Netlify
    assert "/new-name/" in (out / slug / "index.html").read_text()
    sources = [line.split()[0] for line in text.decode().splitlines()
               if line and not line.startswith("#")]
    assert len({s.rstrip("/") for s in sources}) == len(sources)  # one rule per source
    assert f"[site] redirects has /{other}/" in caplog.text
    (tmp_path / "static" / "_redirects").unlink()  # and without it: sitegen's alone
    assert rules(build(tmp_path, renamed)) == {f"/{slug}/": "/new-name/",
                                               f"/{other}/": "/other-name/"}
