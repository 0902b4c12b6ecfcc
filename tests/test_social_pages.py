"""Social posts as pages: image of the selected slot, text, the promoted article, OG tags."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitegen.build import BuildOptions, run_build
from sitegen.config import Config, demo_config, parse_config
from sitegen.workspace import Workspace
from tests.content import synced


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return synced(demo_config(None, tmp_path_factory.mktemp("fetch")))


def config(root: Path) -> Config:
    return parse_config({
        "site": {"title": "Social", "url": "https://notes.acme.test/"},
        "api": {"url": "https://cas.example.test", "workspace": "65f0c0ffee0123456789abcd"},
    }, root)


def promote(workspace: Workspace, **fields: str) -> tuple[Workspace, str, str]:
    article = next(a for a in workspace.articles if a.status == "published" and a.slug)
    posts = list(workspace.social_posts or [])
    posts[0] = posts[0].model_copy(update={
        key: value.format(id=article.id, slug=article.slug) for key, value in fields.items()})
    return (workspace.model_copy(update={"social_posts": posts}), str(posts[0].slug),
            str(article.slug))


@pytest.mark.parametrize("fields", [
    {"articleId": "{id}"}, {"articleSlug": "{slug}"},
    {"articleUrl": "https://notes.acme.test/{slug}/"}, {"url": "/{slug}"}])
def test_a_post_page_shows_its_image_text_and_the_promoted_article(
        tmp_path: Path, workspace: Workspace, fields: dict[str, str]) -> None:
    changed, post, article = promote(workspace, **fields)
    out = tmp_path / "_site"
    run_build(config(tmp_path), BuildOptions(output=out, workspace=changed))
    html = (out / "social" / post / "index.html").read_text()
    assert f'href="/{article}/"' in html and "Read the article" in html
    assert 'property="og:image"' in html
    assert 'name="twitter:card" content="summary_large_image"' in html
    assert '<meta property="og:type" content="article">' in html
    listing = (out / "social/index.html").read_text()
    assert f'href="/social/{post}/"' in listing
    assert f"https://notes.acme.test/social/{post}/" in (out / "sitemap.xml").read_text()


@pytest.mark.parametrize("fields", [
    {"articleUrl": "https://evil.test/{slug}/"}, {"url": "javascript:alert(1)"},
    {"articleId": "000000000000000000000000"}, {}])
def test_no_link_when_the_record_names_no_article_of_the_site(
        tmp_path: Path, workspace: Workspace, fields: dict[str, str]) -> None:
    changed, post, _ = promote(workspace, **fields)
    out = tmp_path / "_site"
    run_build(config(tmp_path), BuildOptions(output=out, workspace=changed))
    html = (out / "social" / post / "index.html").read_text()
    assert "Read the article" not in html and "evil.test" not in html
    assert "javascript:" not in html


def test_post_slugs_are_unique_and_never_page(tmp_path: Path, workspace: Workspace) -> None:
    posts = list(workspace.social_posts or [])
    posts = [posts[0].model_copy(update={"slug": "page"}),
             posts[1].model_copy(update={"slug": "same"}),
             posts[2].model_copy(update={"slug": "same", "id": "65f0c0ffeef00000000000ff"})]
    out = tmp_path / "_site"
    run_build(config(tmp_path), BuildOptions(
        output=out, workspace=workspace.model_copy(update={"social_posts": posts})))
    made = sorted(p.parent.name for p in (out / "social").glob("*/index.html"))
    assert "page" not in made and len(made) == 3 and "same" in made


def test_a_post_page_is_in_its_articles_language_else_the_owners_else_the_sites(
        tmp_path: Path, workspace: Workspace) -> None:
    """Before: every post page was `lang="en"` (the site's), a French post's too."""
    french = next(a for a in workspace.articles if a.status == "published" and a.slug
                  and a.language == "fr")
    posts = list(workspace.social_posts or [])
    posts[0] = posts[0].model_copy(update={"articleId": french.id, "articleSlug": None,
                                           "articleUrl": None, "url": None})
    posts[1] = posts[1].model_copy(update={"articleId": None, "articleSlug": None,
                                           "articleUrl": None, "url": None})
    changed = workspace.model_copy(update={"social_posts": posts})
    out = tmp_path / "_site"
    run_build(config(tmp_path), BuildOptions(output=out, workspace=changed))
    linked = (out / "social" / str(posts[0].slug) / "index.html").read_text()
    alone = (out / "social" / str(posts[1].slug) / "index.html").read_text()
    assert '<html lang="fr">' in linked
    assert '<html lang="en">' in alone
    owned = parse_config({**config(tmp_path).model_dump(mode="json", exclude={"root"}),
                          "social": {"language": "de"}}, tmp_path)
    run_build(owned, BuildOptions(output=out, workspace=changed))
    assert '<html lang="de">' in (out / "social" / str(posts[1].slug) / "index.html").read_text()
    assert '<html lang="fr">' in (out / "social" / str(posts[0].slug) / "index.html").read_text()
