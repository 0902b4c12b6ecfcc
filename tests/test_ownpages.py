"""The owner's own pages: front matter, errors naming file and line, menu, safety, collisions."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from sitegen.build import BuildOptions, run_build
from sitegen.config import Config, demo_config, parse_config
from sitegen.errors import ConfigError
from sitegen.ownpages import load_pages, parse_page
from sitegen.workspace import Workspace
from tests.content import synced


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return synced(demo_config(None, tmp_path_factory.mktemp("fetch")))


def config(root: Path, theme: str = "default", **site: object) -> Config:
    return parse_config({
        "site": {"title": "Own pages", "url": "https://notes.acme.test/", "theme": theme,
                 **site},
        "api": {"url": "https://cas.example.test", "workspace": "65f0c0ffee0123456789abcd"},
    }, root)


def page(root: Path, name: str, text: str) -> None:
    path = root / "pages" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_toml_and_yaml_front_matter() -> None:
    toml = parse_page("pages/a.md", '+++\ntitle = "About"\nmenu = 2\ndescription = "Us"\n'
                      'slug = "who"\n+++\n# Hello\n')
    assert (toml.title, toml.menu, toml.slug, toml.description, toml.template) == (
        "About", 2, "who", "Us", "page.html")
    assert toml.content == "# Hello\n"
    yaml = parse_page("pages/b.md", "---\ntitle: Contact\ndraft: true\ntemplate: x.html\n---\n")
    assert (yaml.title, yaml.draft, yaml.template, yaml.menu) == ("Contact", True, "x.html", None)


@pytest.mark.parametrize("text, line, words", [
    ('+++\ndescription = "no title"\n+++\nbody', 1, "no title"),
    ('---\ndescription: x\n---\n', 1, "no title"),
    ('+++\ntitle = "A"\ncolour = "red"\n+++\n', 3, "unknown front matter key 'colour'"),
    ('---\ntitle: A\n\nextra: 1\n---\n', 4, "unknown front matter key 'extra'"),
    ('+++\ntitle = "A"\nmenu = \n+++\n', 3, "invalid TOML"),
    ('+++\ntitle = "A"\n\nnot toml at all\n+++\n', 4, "invalid TOML"),
    ('---\ntitle: A\nmenu: [1\n---\n', 3, "invalid YAML"),
    ('---\ntitle: "A\n---\n', 2, "invalid YAML"),
    ('+++\ntitle = "A"\nmenu = "first"\n+++\n', 3, "must be an integer"),
    ('---\ntitle: A\ndraft: 3\n---\n', 3, "must be true or false"),
    ('+++\ntitle = "A"\ntemplate = "../../etc/passwd"\n+++\n', 3, "not a template name"),
    ("# no front matter\n", 1, "no front matter"),
    ('+++\ntitle = "A"\n', 1, "never closed"),
])
def test_front_matter_errors_are_one_line_naming_file_and_line(text: str, line: int,
                                                                 words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_page("pages/about.md", text)
    message = str(caught.value)
    assert message.startswith(f"pages/about.md:{line}: "), message
    assert words in message and "\n" not in message
    assert caught.value.exit_code == 2


def test_a_page_is_dated_by_its_front_matter_only() -> None:
    from datetime import UTC, datetime
    toml = parse_page("pages/a.md", '+++\ntitle = "A"\ndate = 2026-01-05\n'
                      'updated = 2026-03-01T10:30:00+02:00\n+++\n')
    assert toml.updated == datetime(2026, 3, 1, 8, 30, tzinfo=UTC)  # `updated` wins
    yaml = parse_page("pages/b.md", "---\ntitle: B\ndate: 2025-12-24\n---\n")
    assert yaml.updated == datetime(2025, 12, 24, tzinfo=UTC)
    naive = parse_page("pages/c.md", '+++\ntitle = "C"\nupdated = 2026-02-02T09:00:00\n+++\n')
    assert naive.updated == datetime(2026, 2, 2, 9, tzinfo=UTC)
    assert parse_page("pages/d.md", '+++\ntitle = "D"\n+++\n').updated is None
    with pytest.raises(ConfigError) as caught:
        parse_page("pages/e.md", '+++\ntitle = "E"\nupdated = "2026-03-01"\n+++\n')
    assert str(caught.value).startswith("pages/e.md:3: front matter key 'updated' must be a "
                                        "date or date-time written bare")


def test_drafts_and_hidden_files_are_left_out(tmp_path: Path) -> None:
    page(tmp_path, "a.md", '+++\ntitle = "A"\n+++\n')
    page(tmp_path, "b.md", '+++\ntitle = "B"\ndraft = true\n+++\n')
    page(tmp_path, ".c.md", '+++\ntitle = "C"\n+++\n')
    page(tmp_path, "notes.txt", "not a page")
    assert [p.title for p in load_pages(tmp_path)] == ["A"]


@pytest.mark.parametrize("theme", ["default", "magazine"])
def test_pages_render_in_the_theme_with_menu_order_seo_and_sitemap(
        tmp_path: Path, workspace: Workspace, theme: str) -> None:
    page(tmp_path, "about.md", '+++\ntitle = "About us"\ndescription = "Who we are"\n'
         'menu = 2\n+++\n## One\n\n## Two\n\n## Three\n\n```python\nprint(1)\n```\n')
    page(tmp_path, "contact.md", "---\ntitle: Contact\nmenu: 1\nslug: write-to-us\n---\nHi.\n")
    page(tmp_path, "imprint.md", '+++\ntitle = "Imprint"\n+++\nLegal.\n')
    out = tmp_path / "_site"
    run_build(config(tmp_path, theme), BuildOptions(output=out, workspace=workspace))
    about = (out / "about/index.html").read_text()
    assert "<h1" in about and "About us" in about and 'id="toc"' in about
    assert '<meta name="description" content="Who we are">' in about
    assert '<link rel="canonical" href="https://notes.acme.test/about/">' in about
    assert 'class="highlight' in about or "<pre" in about
    assert (out / "write-to-us/index.html").is_file() and (out / "imprint/index.html").is_file()
    home = (out / "index.html").read_text()
    nav = home[home.index('id="site-nav"'):home.index("</nav>", home.index('id="site-nav"'))]
    assert nav.index("/write-to-us/") < nav.index("/about/") and "/imprint/" not in nav
    footer = home[home.index('id="site-footer"'):]
    assert "/write-to-us/" in footer and "/about/" in footer
    for url in ("/write-to-us/", "/about/"):  # each menu page's navigation marks itself
        html = (out / url.strip("/") / "index.html").read_text()
        assert html.count('aria-current="page"') == 1 and \
            f'<a href="{url}" aria-current="page">' in html, url
    sitemap = (out / "sitemap.xml").read_text()
    for url in ("about/", "write-to-us/", "imprint/"):
        assert f"https://notes.acme.test/{url}</loc>" in sitemap


def test_hostile_pages_are_treated_as_article_content_is(tmp_path: Path,
                                                        workspace: Workspace) -> None:
    page(tmp_path, "%2e%2e%2f..%2fescape.md", '+++\ntitle = "<script>alert(1)</script>"\n'
         'slug = "../../../etc"\ndescription = "\\" onload=\\"x"\n+++\n'
         "[click](javascript:alert(1)) <script>alert(2)</script> <img src=x onerror=y>\n")
    page(tmp_path, "<b> ..\u00e9vil \u202e name.md", '+++\ntitle = "Named"\n+++\n')
    out = tmp_path / "_site"
    run_build(config(tmp_path), BuildOptions(output=out, workspace=workspace))
    assert (out / "b-evil-name/index.html").is_file()
    made = out / "etc/index.html"
    assert made.is_file() and not (tmp_path.parent / "etc").exists()
    html = made.read_text()
    assert "javascript:" not in html and "<script>alert" not in html
    assert "onerror" not in html.replace("&lt;img src=x onerror=y&gt;", "")
    assert 'onload="x' not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_reserved_slugs_duplicates_and_article_slugs(tmp_path: Path, workspace: Workspace,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    page(tmp_path, "tags.md", '+++\ntitle = "Tags"\n+++\n')
    with pytest.raises(ConfigError, match=r"pages/tags.md: the slug 'tags' is a URL sitegen"):
        run_build(config(tmp_path), BuildOptions(output=tmp_path / "o", workspace=workspace))
    (tmp_path / "pages/tags.md").unlink()
    page(tmp_path, "a.md", '+++\ntitle = "A"\nslug = "same"\n+++\n')
    page(tmp_path, "b.md", '+++\ntitle = "B"\nslug = "Same"\n+++\n')
    with pytest.raises(ConfigError, match=r"pages/a.md and pages/b.md|pages/b.md and pages/a.md"):
        run_build(config(tmp_path), BuildOptions(output=tmp_path / "o", workspace=workspace))
    (tmp_path / "pages/b.md").unlink()
    taken = workspace.articles[0].slug or ""
    (tmp_path / "pages/a.md").write_text(f'+++\ntitle = "Mine"\nslug = "{taken}"\n+++\n')
    out = tmp_path / "o"
    # a page on an article's URL keeps it: the article (named by the service) moves
    with caplog.at_level(logging.WARNING):
        run_build(config(tmp_path), BuildOptions(output=out, workspace=workspace))
    assert re.search(rf"article \S+ wants the URL /{taken}/, which your page pages/a.md has: "
                     rf"the article moved to /{taken}-2/", caplog.text)
    assert re.search(r"<h1[^>]*>Mine</h1>", (out / taken / "index.html").read_text())
    assert (out / f"{taken}-2" / "index.html").is_file()
    caplog.clear()
    # with articles under their own permalink the two never meet: both keep their URLs
    with caplog.at_level(logging.WARNING):
        run_build(config(tmp_path, permalink="/posts/{slug}/"),
                  BuildOptions(output=out, workspace=workspace))
    assert re.search(r"<h1[^>]*>Mine</h1>", (out / taken / "index.html").read_text())
    assert (out / "posts" / taken / "index.html").is_file()
    assert "which your page" not in caplog.text


def test_a_page_edit_gives_the_output_of_a_fresh_build(tmp_path: Path,
                                                      workspace: Workspace) -> None:
    site, fresh = tmp_path / "site", tmp_path / "fresh"
    page(site, "about.md", '+++\ntitle = "About"\nmenu = 1\n+++\nOne.\n')
    run_build(config(site), BuildOptions(output=site / "_site", workspace=workspace))
    page(site, "about.md", '+++\ntitle = "About me"\nmenu = 1\n+++\nTwo.\n')
    run_build(config(site), BuildOptions(output=site / "_site", workspace=workspace))
    page(fresh, "about.md", '+++\ntitle = "About me"\nmenu = 1\n+++\nTwo.\n')
    run_build(config(fresh), BuildOptions(output=fresh / "_site", workspace=workspace))

    def files(root: Path) -> dict[str, bytes]:
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
                if p.is_file() and p.name != ".sitegen-manifest.json"}

    assert files(site / "_site") == files(fresh / "_site")
    assert b"About me" in (site / "_site/index.html").read_bytes()


def test_the_example_site_has_an_about_page_in_the_menu_and_a_security_txt() -> None:
    from sitegen.emit.ownfiles import collect_own_static

    repo = Path(__file__).resolve().parents[1]
    (about,) = [p for p in load_pages(repo) if p.name == "pages/about.md"]
    assert about.title == "About" and about.menu == 1
    security = collect_own_static(repo)[".well-known/security.txt"].decode()
    assert "Contact: " in security and "Expires: " in security


def test_a_page_template_no_folder_holds_is_a_configuration_error(
        tmp_path: Path, workspace: Workspace) -> None:
    page(tmp_path, "about.md", '+++\ntitle = "About"\ntemplate = "wide.html"\n+++\n')
    with pytest.raises(ConfigError, match=r"^pages/about.md: the template 'wide.html'"):
        run_build(config(tmp_path), BuildOptions(output=tmp_path / "o", workspace=workspace))
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "wide.html").write_text(
        '{% extends "page.html" %}{% block content %}WIDE {{ body }}{% endblock %}')
    run_build(config(tmp_path), BuildOptions(output=tmp_path / "o", workspace=workspace))
    assert "WIDE" in (tmp_path / "o" / "about" / "index.html").read_text()


@pytest.mark.parametrize("images", [True, False])
def test_a_root_relative_image_of_an_own_page_is_a_file_of_the_site(
        tmp_path: Path, workspace: Workspace, images: bool,
        caplog: pytest.LogCaptureFixture) -> None:
    """`![](/logo.png)` in pages/*.md names the owner's static/logo.png: written as it is,
    never fetched from the service nor linked there (an article's `/media/x.png` is)."""
    page(tmp_path, "about.md", '+++\ntitle = "About us"\n+++\n![Our logo](/logo.png)\n')
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "logo.png").write_bytes(b"\x89PNG not fetched")
    cfg = parse_config({
        "site": {"title": "Own pages", "url": "https://notes.acme.test/"},
        "api": {"url": "https://cas.example.test", "workspace": "65f0c0ffee0123456789abcd"},
        "images": {"enabled": images}}, tmp_path)
    out = tmp_path / "_site"
    with caplog.at_level(logging.WARNING, logger="sitegen"):
        report = run_build(cfg, BuildOptions(output=out, workspace=workspace,
                                             fetch_images=False))
    about = (out / "about/index.html").read_text()
    assert 'src="/logo.png"' in about and 'alt="Our logo"' in about
    assert "cas.example.test/logo.png" not in about
    assert not [m for m in report.warning_messages if "logo.png" in m]


@pytest.mark.parametrize("folder, link", [
    ("pages", "pages/secret.md"), ("pages", "pages/notes"),
    ("templates", "templates/page.html"), ("theme", "themes/mine/templates/base.html"),
    ("theme", "themes/mine/static/leak.css")])
def test_a_link_out_of_pages_templates_or_a_theme_is_refused(
        tmp_path: Path, workspace: Workspace, folder: str, link: str) -> None:
    """A page, template or theme file linked from outside would be rendered or published."""
    site, outside = tmp_path / "site", tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text('+++\ntitle = "Private"\n+++\nroot:x:0:0\n')
    (outside / "page.html").write_text("{{ 'root:x:0:0' }}")
    page(site, "about.md", '+++\ntitle = "About"\n+++\nUs.\n')
    (site / "themes" / "mine" / "templates").mkdir(parents=True)
    (site / "themes" / "mine" / "static").mkdir()
    path = site / link
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(outside if link.endswith("notes") else outside / (
        "secret.md" if folder == "pages" else "page.html"))
    out = tmp_path / "_site"
    with pytest.raises(ConfigError) as caught:
        run_build(config(site, theme="mine" if folder == "theme" else "default"),
                  BuildOptions(output=out, workspace=workspace))
    message = str(caught.value)
    assert f"{link} is a symbolic link to {outside}" in message and "\n" not in message
    assert caught.value.exit_code == 2 and not out.exists()
