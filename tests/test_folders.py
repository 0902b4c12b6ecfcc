"""The folders sitegen may fill: a build's output and `init`'s target (`sitegen.folders`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sitegen.errors import ConfigError
from sitegen.folders import check_init, check_output
from sitegen.outputnames import MANIFEST_NAME

SITE_TOML = """[site]
title = "Folders"
url = "https://notes.acme.test/"
{output}
[api]
url = "https://cas.example.test"
workspace = "65f0c0ffee0123456789abcd"
"""
TIMEOUT = 300  # a demo build on a loaded machine


def sitegen(*argv: str, cwd: Path, home: Path | None = None,
            ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home)} if home is not None else None
    return subprocess.run([sys.executable, "-m", "sitegen", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT, check=False)


def tree(root: Path) -> dict[str, tuple[bool, int]]:
    """Every path under *root* with whether it is a folder and its mtime."""
    found = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            found[path.relative_to(root).as_posix()] = (path.is_dir(), path.lstat().st_mtime_ns)
    return found


def make_site(root: Path, output: str = "") -> Path:
    site = root / "site"
    (site / "static").mkdir(parents=True)
    (site / "static" / "ads.txt").write_text("mine\n")
    (site / ".git").mkdir()
    (site / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (site / "site.toml").write_text(SITE_TOML.format(output=output))
    repo = root / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "README.md").write_text("# sources\n")
    other = root / "other-site"
    other.mkdir()
    (other / "site.toml").write_text(SITE_TOML.format(output=""))
    return site


def refused(result: subprocess.CompletedProcess[str], folder: Path) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and lines[0].startswith(f"error: the output folder {folder} ")
    assert "choose a dedicated folder such as _site" in lines[0]
    return lines[0]


@pytest.mark.parametrize("output, reason", [
    (".", "holds the site's own files"), ("..", "holds the site's own files"),
    ("../repo", "holds .git"), ("../other-site", "holds a site.toml"),
    ("static", "one of the site's own folders"), ("static/more", "one of the site's own folders"),
    (".sitegen", "one of the site's own folders"), (".git", "inside a git repository's .git"),
])
def test_an_output_holding_sources_is_refused_and_nothing_is_written(
        tmp_path: Path, output: str, reason: str) -> None:
    """`-o` at a repository's root wrote 442 entries among its sources."""
    site = make_site(tmp_path)
    before = tree(tmp_path)
    result = sitegen("build", "--demo", "-q", "-o", output, cwd=site)
    assert reason in refused(result, (site / output).resolve())
    assert tree(tmp_path) == before


@pytest.mark.parametrize("output", ['output = "."', 'output = "../repo"'])
def test_site_output_naming_sources_is_refused_too(tmp_path: Path, output: str) -> None:
    site = make_site(tmp_path, output)
    before = tree(tmp_path)
    result = sitegen("build", "--demo", "-q", "-c", str(site / "site.toml"), cwd=tmp_path)
    refused(result, (site / output.split('"')[1]).resolve())
    assert tree(tmp_path) == before


def test_the_home_folder_is_refused_with_exit_2(tmp_path: Path) -> None:
    site, home = make_site(tmp_path), tmp_path / "home"  # (a home of the test's: fails safe)
    home.mkdir()
    before = tree(tmp_path)
    result = sitegen("build", "--demo", "-q", "-o", str(home), cwd=site, home=home)
    assert "is your home folder" in refused(result, home)
    assert tree(tmp_path) == before


@pytest.mark.parametrize("output, said", [
    ("site.toml", "is a file, not a folder"),
    ('[site] output = "site.toml"', "is a file, not a folder"),
    ("../notes", "holds files but was not written by sitegen"),
    ('[site] output = "../notes"', "holds files but was not written by sitegen"),
])
def test_every_refused_output_exits_2_with_one_sentence(
        tmp_path: Path, output: str, said: str) -> None:
    """`-o /` exited 2 but `-o site.toml` (a file) and a folder of someone's files (`-o ~`
    with a home sitegen does not know as one) exited 1: each is a usage error."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("mine\n")
    setting = output if output.startswith("[site]") else ""
    site = make_site(tmp_path, setting.removeprefix("[site] "))
    before = tree(notes), (site / "site.toml").read_bytes()
    argv = ["build", "--demo", "-q"] + ([] if setting else ["-o", output])
    result = sitegen(*argv, cwd=site)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and lines[0].startswith("error: the output ") and said in lines[0]
    assert (tree(notes), (site / "site.toml").read_bytes()) == before


@pytest.mark.parametrize("output", ["/", "HOME", "site.toml", ".git"])
def test_deploy_refuses_the_same_outputs_with_exit_2(tmp_path: Path, output: str) -> None:
    """`deploy -o` took a lock file beside `/` or the home folder before finding no site."""
    site, home = make_site(tmp_path), tmp_path / "home"
    home.mkdir()
    with (site / "site.toml").open("a") as toml:
        toml.write('\n[deploy.production]\nurl = "s3://bucket/site"\n'
                   'endpoint = "http://127.0.0.1:9"\n')
    before = tree(tmp_path)
    folder = str(home) if output == "HOME" else output
    result = sitegen("deploy", "-o", folder, cwd=site, home=home)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and lines[0].startswith("error: the output "), lines
    assert tree(tmp_path) == before


def test_a_checkout_of_a_publishing_branch_is_no_output(tmp_path: Path) -> None:
    """A `.git` alone (a new gh-pages worktree) is refused: a build removes what it did not
    write, `.git` too. Beside sitegen's manifest (planted in a cached output) it is a stray
    the build removes."""
    site = make_site(tmp_path)
    out = tmp_path / "gh-pages"
    (out / ".git").mkdir(parents=True)
    result = sitegen("build", "--demo", "-q", "-o", str(out), cwd=site)
    assert "holds .git, a git repository a build would remove" in refused(result, out)
    assert sorted(p.name for p in out.iterdir()) == [".git"]
    (out / ".git").rmdir()
    result = sitegen("build", "--demo", "-q", "-o", str(out), cwd=site)
    assert result.returncode == 0, result.stderr
    (out / ".git").mkdir()
    check_output(out, site=site)  # (sitegen's output: the build removes the stray)
    (out / MANIFEST_NAME).unlink()
    with pytest.raises(ConfigError, match="holds .git, a git repository"):
        check_output(out, site=site)


# --- sitegen init -------------------------------------------------------------------------


def test_init_refuses_the_filesystem_root_and_the_home_folder() -> None:
    with pytest.raises(ConfigError) as caught:
        check_init(Path("/"))
    assert str(caught.value) == ("/ is the filesystem root: give sitegen init a folder of "
                                 "its own, such as sitegen init my-site")
    with pytest.raises(ConfigError, match="is your home folder"):
        check_init(Path.home())


def test_init_of_the_home_folder_is_refused_by_the_command(tmp_path: Path) -> None:
    home = tmp_path / "home"  # (a home of the test's: writing there would be harmless)
    home.mkdir()
    result = sitegen("init", str(home), cwd=tmp_path, home=home)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {home} is your home folder: give sitegen init a folder of its own, such as "
        "sitegen init my-site"]
    assert list(home.iterdir()) == []


_READ_ONLY_ROOT = """
mount --make-rprivate / 2>/dev/null && mount -o remount,bind,ro / 2>/dev/null || exit 97
if touch /.sitegen-write-probe 2>/dev/null; then rm -f /.sitegen-write-probe; exit 97; fi
exec "$@"
"""


def test_init_of_the_filesystem_root_is_refused_by_the_command(tmp_path: Path) -> None:
    """Run where `/` cannot be written: as a user who may not, or (as root) in a mount
    namespace of its own where `/` is read-only; else not at all."""
    argv = [sys.executable, "-m", "sitegen", "init", "/"]
    if os.access("/", os.W_OK):
        argv = ["unshare", "-m", "sh", "-c", _READ_ONLY_ROOT, "sh", *argv]
    planned = ["/site.toml", "/templates/README.md", "/.gitignore", "/.github/workflows"]
    assert not any(os.path.lexists(p) for p in planned)
    try:
        result = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True,
                                timeout=TIMEOUT, check=False)
    except FileNotFoundError:
        pytest.skip("/ is writable here and unshare is missing")
    if result.returncode == 97:
        pytest.skip("/ is writable here and cannot be made read-only for the test")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: / is the filesystem root: give sitegen init a folder of its own, such as "
        "sitegen init my-site"]
    assert not any(os.path.lexists(p) for p in planned)


def test_init_refuses_a_folder_of_other_files_but_takes_a_fresh_repository(
        tmp_path: Path) -> None:
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "todo.txt").write_text("buy bread\n")
    (mine / "README.md").write_text("# notes\n")
    result = sitegen("init", "notes", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {mine} already holds files that are not a site's (todo.txt): run sitegen "
        "init in a new or empty folder, such as notes/site"]
    assert sorted(p.name for p in mine.iterdir()) == ["README.md", "todo.txt"]
    fresh = tmp_path / "fresh"  # what a forge's "new repository" holds
    (fresh / ".git").mkdir(parents=True)
    for name in ("README.md", "LICENSE", ".gitignore"):
        (fresh / name).write_text("x\n")
    assert sitegen("init", "fresh", cwd=tmp_path).returncode == 0
    assert (fresh / "site.toml").is_file() and (fresh / ".gitignore").read_text() == "x\n"
    assert sitegen("init", "fresh", cwd=tmp_path).returncode == 0  # a site: adds what is missing
