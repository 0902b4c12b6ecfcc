"""The owner's static/ folder: copied as is, hidden files left out, collisions refused."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from sitegen.build import BuildOptions, run_build
from sitegen.cli import main
from sitegen.config import Config, demo_config, parse_config
from sitegen.emit.ownfiles import check_collisions, collect_own_static
from sitegen.errors import ConfigError
from sitegen.outputnames import MANIFEST_NAME
from sitegen.workspace import Workspace
from tests.content import synced


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return synced(demo_config(None, tmp_path_factory.mktemp("fetch")))


def config(root: Path) -> Config:
    return parse_config({
        "site": {"title": "Own files", "url": "https://notes.acme.test/"},
        "api": {"url": "https://cas.example.test", "workspace": "65f0c0ffee0123456789abcd"},
    }, root)


def put(root: Path, rel: str, data: bytes) -> None:
    path = root / "static" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != MANIFEST_NAME}


def test_static_files_land_at_the_root_byte_identical_beside_hashed_theme_assets(
        tmp_path: Path, workspace: Workspace) -> None:
    put(tmp_path, "CNAME", b"notes.acme.test\n")
    put(tmp_path, "style.css", b"/* mine, not the theme's */")
    put(tmp_path, ".well-known/security.txt", b"Contact: mailto:security@acme.test\n")
    put(tmp_path, ".DS_Store", b"junk")
    put(tmp_path, ".git/config", b"junk")
    put(tmp_path, "img/.hidden", b"junk")
    put(tmp_path, "img/logo.png~", b"backup")
    out = tmp_path / "_site"
    run_build(config(tmp_path), BuildOptions(output=out, workspace=workspace))
    assert (out / "CNAME").read_bytes() == b"notes.acme.test\n"
    assert (out / "style.css").read_bytes() == b"/* mine, not the theme's */"
    assert (out / ".well-known/security.txt").is_file()
    hashed = list((out / "static").glob("style.*.css"))
    assert hashed and hashed[0].read_bytes() != b"/* mine, not the theme's */"
    for junk in (".DS_Store", ".git/config", "img/.hidden", "img/logo.png~"):
        assert not (out / junk).exists()


def test_a_static_edit_gives_the_output_of_a_fresh_build(
        tmp_path: Path, workspace: Workspace) -> None:
    put(tmp_path, "ads.txt", b"one")
    put(tmp_path, "old.txt", b"gone soon")
    out = tmp_path / "_site"
    run_build(config(tmp_path), BuildOptions(output=out, workspace=workspace))
    put(tmp_path, "ads.txt", b"two")
    (tmp_path / "static" / "old.txt").unlink()
    run_build(config(tmp_path), BuildOptions(output=out, workspace=workspace))
    fresh = tmp_path / "fresh"
    fresh_root = tmp_path / "other"
    (fresh_root).mkdir()
    put(fresh_root, "ads.txt", b"two")
    run_build(config(fresh_root), BuildOptions(output=fresh, workspace=workspace))
    assert files(out) == files(fresh)
    assert (out / "ads.txt").read_bytes() == b"two" and not (out / "old.txt").exists()


@pytest.mark.parametrize("rel, clash", [
    ("index.html", "index.html"), ("sitemap.xml", "sitemap.xml"),
    ("tags/index.html", "tags/index.html"), ("404.html/x", "404.html"),
    ("feed.xml", "feed.xml")])
def test_a_static_file_on_a_generated_one_is_a_configuration_error_naming_both(
        tmp_path: Path, workspace: Workspace, rel: str, clash: str) -> None:
    put(tmp_path, rel, b"mine")
    out = tmp_path / "_site"
    with pytest.raises(ConfigError) as caught:
        run_build(config(tmp_path), BuildOptions(output=out, workspace=workspace))
    message = str(caught.value)
    assert f"static/{rel}" in message and clash in message and "\n" not in message
    assert caught.value.exit_code == 2
    assert not out.exists()


def test_the_owners_robots_txt_replaces_sitegens_and_going_back_restores_it(
        tmp_path: Path, workspace: Workspace) -> None:
    """Which crawlers a site admits (say, none of the AI ones) is the owner's call."""
    mine = b"User-agent: GPTBot\nDisallow: /\n"
    put(tmp_path, "robots.txt", mine)
    out = tmp_path / "_site"
    run_build(config(tmp_path), BuildOptions(output=out, workspace=workspace))
    assert (out / "robots.txt").read_bytes() == mine
    (tmp_path / "static" / "robots.txt").unlink()
    run_build(config(tmp_path), BuildOptions(output=out, workspace=workspace))
    assert (out / "robots.txt").read_bytes().startswith(b"User-agent: *\nAllow: /\n")


def test_collisions_with_folders_of_generated_files() -> None:
    with pytest.raises(ConfigError, match="static/tags would overwrite tags/index.html"):
        check_collisions(["tags"], ["tags/index.html"])
    check_collisions(["tags/extra.txt", "robots2.txt"], ["tags/index.html", "robots.txt"])


def test_no_static_folder_is_nothing(tmp_path: Path) -> None:
    assert collect_own_static(tmp_path) == {}


def test_a_link_inside_static_is_followed(tmp_path: Path) -> None:
    put(tmp_path, "inside.txt", b"ok")
    (tmp_path / "static" / "alias.txt").symlink_to(tmp_path / "static" / "inside.txt")
    (tmp_path / "static" / "dangling.txt").symlink_to(tmp_path / "static" / "gone.txt")
    (tmp_path / "static" / ".git").symlink_to("/etc")  # hidden: never looked at
    assert collect_own_static(tmp_path) == {"inside.txt": b"ok", "alias.txt": b"ok"}


@pytest.fixture
def passwd(tmp_path: Path) -> Path:
    """A file outside the site folder standing for /etc/passwd."""
    secret = tmp_path / "etc" / "passwd"
    secret.parent.mkdir()
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n")
    return secret


@pytest.mark.parametrize("link, to", [
    ("passwd", "file"), ("etc", "folder"), ("img/deep/passwd", "file"),
    ("env.txt", ".env"), ("store", ".sitegen"), ("loop", "static")])
def test_a_link_out_of_static_is_refused_and_nothing_is_published(
        tmp_path: Path, workspace: Workspace, passwd: Path, link: str, to: str) -> None:
    """`/etc/passwd` was published through a link; one to the site's own `.env` or store
    (inside the site folder, outside static/) would leak as much."""
    site = tmp_path / "site"
    put(site, "ads.txt", b"fine")
    (site / ".env").write_text("SITEGEN_API_KEY=sk-secret\n")
    (site / ".sitegen").mkdir()
    target = {"file": passwd, "folder": passwd.parent, ".env": site / ".env",
              ".sitegen": site / ".sitegen", "static": site / "static"}[to]
    (site / "static" / link).parent.mkdir(parents=True, exist_ok=True)
    (site / "static" / link).symlink_to(target)
    out = tmp_path / "_site"
    with pytest.raises(ConfigError) as caught:
        run_build(config(site), BuildOptions(output=out, workspace=workspace))
    message = str(caught.value)
    assert f"static/{link} is a symbolic link" in message and "\n" not in message
    assert caught.value.exit_code == 2
    assert not out.exists()


def test_static_itself_linked_out_of_the_site_is_refused_by_the_command(
        tmp_path: Path, passwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "site.toml").write_text(
        '[site]\ntitle = "Own files"\nurl = "https://notes.acme.test/"\n'
        '[api]\nurl = "https://cas.example.test"\nworkspace = "65f0c0ffee0123456789abcd"\n',
        encoding="utf-8")
    (site / "static").symlink_to(passwd.parent)
    out = tmp_path / "_site"
    assert main(["build", "--demo", "-q", "-c", str(site / "site.toml"), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: static is a symbolic link to {passwd.parent}, outside the site "
                   f"folder {site}: make static a real folder of the site (copy the files in)"]
    assert not out.exists()
    (site / "static").unlink()
    (site / "assets").mkdir()
    (site / "assets" / "ads.txt").write_text("fine")
    (site / "static").symlink_to(site / "assets")  # a folder of the site: fine
    assert main(["build", "--demo", "-q", "-c", str(site / "site.toml"), "-o", str(out)]) == 0
    assert (out / "ads.txt").read_text() == "fine" and not (out / "passwd").exists()


@pytest.mark.parametrize("rel", ["media/logo.png", "media/demo/x.png", "static/mine.css",
                                 "pagefind/index/x"])
def test_a_static_file_in_a_folder_of_hashed_names_is_refused(tmp_path: Path, rel: str) -> None:
    """`media/`, `static/` and Pagefind's folders are cached for a year (`_headers`, deploy):
    a file that keeps its name across edits must not be there."""
    put(tmp_path, rel, b"mine")
    put(tmp_path, "mediakit/logo.png", b"fine")
    with pytest.raises(ConfigError) as caught:
        collect_own_static(tmp_path)
    message = str(caught.value)
    assert f"static/{rel}" in message and "move it" in message and "\n" not in message
    (tmp_path / "static" / rel).unlink()
    assert collect_own_static(tmp_path) == {"mediakit/logo.png": b"fine"}
