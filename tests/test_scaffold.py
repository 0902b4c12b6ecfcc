"""`sitegen init`: the scaffolded files, the CI workflows' behaviour, nothing overwritten."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from sitegen.cli import main
from sitegen.config import AnalyticsSection, ApiSection, SiteSection, load_config
from sitegen.emit.manifest import MANIFEST_NAME
from sitegen.emulator.generator import generate_workspace
from sitegen.errors import ConfigError
from sitegen.scaffold import (
    CI_PATHS,
    REQUIREMENTS_PATHS,
    SiteSettings,
    example_site_toml,
    render_ci,
    scaffold,
    settings_from_toml,
)

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def init(directory: Path, *argv: str) -> int:
    return main(["init", str(directory), *argv])


def workflow(site: Path) -> dict[str, Any]:
    data = yaml.safe_load((site / CI_PATHS["github"]).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def gitlab(site: Path) -> dict[str, Any]:
    data = yaml.safe_load((site / CI_PATHS["gitlab"]).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def triggers(data: dict[str, Any]) -> dict[str, Any]:
    # PyYAML (YAML 1.1) reads the bare key `on` as True.
    value = data.get("on", data.get(True))
    assert isinstance(value, dict)
    return value


def step(data: dict[str, Any], uses_or_id: str) -> dict[str, Any]:
    for item in data["jobs"]["build"]["steps"]:
        if item.get("id") == uses_or_id or str(item.get("uses", "")).startswith(uses_or_id):
            assert isinstance(item, dict)
            return item
    raise AssertionError(f"no step {uses_or_id}")


# --- the files ----------------------------------------------------------------------------


def test_init_creates_a_site_that_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    site = tmp_path / "new" / "site"
    assert init(site) == 0
    for name in ("site.toml", "templates/README.md", ".gitignore", ".github/workflows/sitegen.yml"):
        assert (site / name).is_file(), name
    out = capsys.readouterr().out.splitlines()
    assert out[:5] == ["created site.toml", "created templates/README.md", "created .gitignore",
                       "created .github/workflows/sitegen.yml",
                       "created .github/workflows/sitegen-requirements.txt"]
    assert out[5] == "next steps:" and len(out) == 10
    assert "SITEGEN_CACHE_KEY" in out[8]  # proposed as a CI secret (#50)
    assert out[9].startswith("once content is fetched, `sitegen schedule` proposes a cron")
    assert "sitegen serve --demo" in out[6] and str(site) in out[6]
    config = load_config(site / "site.toml")
    assert config.api.schedule == "0 6 * * *"
    ignored = (site / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert "/_site/" in ignored and "/.sitegen/" in ignored


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_built_site_leaves_git_nothing_but_its_sources(tmp_path: Path) -> None:
    """Output, cache, lock, the writer's spare tree and a `.git` the build found in the
    output (moved beside it) are all ignored by the scaffold."""
    assert init(tmp_path) == 0
    for _ in range(2):  # the second build leaves the recycled spare folder beside the output
        assert main(["build", "--demo", "-q", "-c", str(tmp_path / "site.toml")]) == 0
    assert any(p.name.startswith("._site.sitegen-") for p in tmp_path.iterdir())
    (tmp_path / "_site" / ".git").mkdir()
    (tmp_path / "_site" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert main(["build", "--demo", "-q", "--force", "-c", str(tmp_path / "site.toml")]) == 0
    assert any(p.name.startswith("._site.git-set-aside-") for p in tmp_path.iterdir())
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    status = subprocess.run(["git", "-C", str(tmp_path), "status", "--porcelain", "-uall"],
                            check=True, capture_output=True, text=True).stdout.splitlines()
    assert sorted(line[3:] for line in status) == [
        ".github/workflows/sitegen-requirements.txt", ".github/workflows/sitegen.yml",
        ".gitignore", "site.toml", "templates/README.md"]


def test_repository_example_is_the_scaffolded_site_toml(tmp_path: Path) -> None:
    assert (REPO / "site.toml").read_text(encoding="utf-8") == example_site_toml()
    assert init(tmp_path) == 0
    assert (tmp_path / "site.toml").read_text(encoding="utf-8") == example_site_toml()


@pytest.mark.parametrize("section", [SiteSection, ApiSection, AnalyticsSection])
def test_every_config_key_is_documented_with_its_default(section: type[BaseModel]) -> None:
    text = example_site_toml()
    name = {SiteSection: "site", ApiSection: "api", AnalyticsSection: "analytics"}[section]
    written = tomllib.loads(text)[name]
    body = text.split(f"[{name}]", 1)[1].split("\n[", 1)[0]
    for key, field in section.model_fields.items():
        assert re.search(rf"^#? ?{key} = .+#", body, re.M), f"[{name}] {key} is not documented"
        if field.is_required() or key in ("title", "url", "workspace"):
            continue
        if key in written:
            assert written[key] == field.default, f"[{name}] {key} is not the default"
        else:
            assert field.default is None, f"[{name}] {key} is commented out but has a default"


def test_templates_readme_names_the_lookup_chain(tmp_path: Path) -> None:
    assert init(tmp_path) == 0
    text = (tmp_path / "templates" / "README.md").read_text(encoding="utf-8")
    assert '{% extends "default/base.html" %}' in text
    assert text.index("`templates/`") < text.index("themes/<theme>/templates/") < text.index(
        "built-in `default`")


def test_existing_files_are_never_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = '[site]\ntitle = "Mine"\nurl = "https://mine.test/"\n[api]\nurl = "https://a.test"\n' \
           'workspace = "65f0c0ffee0123456789abcd"\nschedule = "15 3 * * 1"\n'
    (tmp_path / "site.toml").write_text(mine, encoding="utf-8")
    (tmp_path / ".gitignore").write_text("node_modules/\n", encoding="utf-8")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert init(tmp_path) == 0
    for path, content in before.items():
        assert path.read_bytes() == content
    out = capsys.readouterr().out.splitlines()
    assert "skipped site.toml: it already exists and was left as it was" in out
    assert any(line.startswith("skipped .gitignore") and "/_site/" in line for line in out)
    assert "created .github/workflows/sitegen.yml" in out
    # The workflow follows the existing site.toml's schedule.
    assert triggers(workflow(tmp_path))["schedule"] == [{"cron": "15 3 * * 1"}]
    # A second run creates nothing and changes nothing.
    snapshot = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert init(tmp_path) == 0
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == snapshot
    assert not [line for line in capsys.readouterr().out.splitlines()
                if line.startswith("created")]


def test_a_bad_schedule_is_a_config_error_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "site.toml").write_text('[api]\nschedule = "every day"\n', encoding="utf-8")
    assert init(tmp_path) == 2
    assert "schedule" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site.toml"]


def test_dir_that_is_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x", encoding="utf-8")
    with pytest.raises(ConfigError, match="not a folder"):
        scaffold(target)


def test_odd_output_folders_fall_back_to_the_defaults() -> None:
    found = settings_from_toml('[site]\noutput = "../www"\n[api]\ncache_dir = "/abs"\n')
    assert (found.output, found.cache_dir) == ("_site", ".sitegen")
    found = settings_from_toml('[site]\noutput = "public/site"\n[api]\nschedule = "0 */4 * * *"\n')
    assert (found.output, found.schedule) == ("public/site", "0 */4 * * *")


# --- GitHub Actions -----------------------------------------------------------------------


def test_github_workflow_schedule_cache_and_pages(tmp_path: Path) -> None:
    assert init(tmp_path) == 0
    text = (tmp_path / CI_PATHS["github"]).read_text(encoding="utf-8")
    data = workflow(tmp_path)
    schedule = load_config(tmp_path / "site.toml").api.schedule
    on = triggers(data)
    assert on["schedule"] == [{"cron": schedule}] and text.count(schedule) == 1
    assert "workflow_dispatch" in on and "push" in on
    build_job = data["jobs"]["build"]
    assert "github.event.repository.default_branch" in build_job["if"]
    # The output and cache folders are written once each, as workflow variables.
    assert data["env"]["SITEGEN_OUTPUT"] == "_site" and data["env"]["SITEGEN_CACHE"] == ".sitegen"
    assert text.count("_site") == 1 and text.count('".sitegen"') == 1
    assert data["permissions"] == {}
    assert build_job["permissions"] == {"contents": "read", "pages": "read"}
    assert data["jobs"]["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    for item in [*build_job["steps"], *data["jobs"]["deploy"]["steps"]]:
        if "uses" in item:  # every action pinned to a full commit, its release in a comment
            assert re.fullmatch(r"[\w-]+/[\w/-]+@[0-9a-f]{40}", item["uses"]), item["uses"]
    assert all(re.search(r"@[0-9a-f]{40} # v\d+\.\d+\.\d+$", line)
               for line in text.splitlines() if "uses: " in line)
    assert step(data, "actions/checkout")["with"]["persist-credentials"] is False
    install = next(s for s in build_job["steps"] if "pip install" in s.get("run", ""))
    assert install["run"].splitlines() == [
        "python -m pip install --no-deps -r .github/workflows/sitegen-requirements.txt",
        "python -m pip show sitegen-cas > /dev/null", "python -m pip install sitegen-cas"]
    restore, save = step(data, "actions/cache/restore"), step(data, "actions/cache/save")
    paths = "${{ env.SITEGEN_CACHE }}\n${{ env.SITEGEN_OUTPUT }}\n"
    assert restore["with"]["path"] == save["with"]["path"] == paths
    assert restore["with"]["key"] == save["with"]["key"] == (
        "sitegen-${{ github.run_id }}-${{ github.run_attempt }}")
    assert restore["with"]["restore-keys"] == "sitegen-"
    assert save["if"] == "success()"  # a cache that failed a build is never saved (#48)
    steps = build_job["steps"]
    assert steps.index(restore) < steps.index(step(data, "build")) < steps.index(save)
    build = step(data, "build")
    assert build["env"] == {"SITEGEN_API_KEY": "${{ secrets.SITEGEN_API_KEY }}",
                            "SITEGEN_CACHE_KEY": "${{ secrets.SITEGEN_CACHE_KEY }}",
                            "SITEGEN_ANALYTICS_KEY": "${{ secrets.SITEGEN_ANALYTICS_KEY }}",
                            "SITEGEN_SITE_URL": "${{ steps.pages.outputs.base_url }}"}
    assert step(data, "pages")["uses"].startswith("actions/configure-pages@")
    assert 'sitegen build --report "$SITEGEN_REPORT" -o "$SITEGEN_OUTPUT"' in build["run"]
    assert "--strict" not in text and "${{" not in build["run"]
    report = step(data, "actions/upload-artifact")
    assert report["if"] == "always()" and report["with"]["path"] == "${{ env.SITEGEN_REPORT }}"
    pages = step(data, "actions/upload-pages-artifact")
    assert pages["with"]["path"] == "${{ env.SITEGEN_OUTPUT }}"
    assert pages["if"] == "steps.build.outputs.deploy == 'true'"
    deploy = data["jobs"]["deploy"]
    assert deploy["needs"] == "build"
    assert deploy["if"] == "needs.build.outputs.deploy == 'true'"
    assert deploy["steps"][-1]["uses"].startswith("actions/deploy-pages@")
    assert build_job["outputs"]["deploy"] == "${{ steps.build.outputs.deploy }}"


def fake_sitegen(folder: Path, status: int) -> Path:
    """A `sitegen` on PATH that records its arguments and exits with *status*."""
    bin_dir = folder / "fake-bin"
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / "sitegen"
    script.write_text(f'#!/bin/sh\necho "$@" > "{folder}/args"\nexit {status}\n',
                      encoding="utf-8")
    script.chmod(0o755)
    return bin_dir


def run_github_build_step(
    site: Path, bin_dir: Path, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The Build step's script as GitHub runs it (`bash --noprofile --norc -eo pipefail`)."""
    script = step(workflow(site), "build")["run"]
    (site / "step.sh").write_text(script, encoding="utf-8")
    data = workflow(site)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", **data["env"],
           "GITHUB_OUTPUT": str(site / "github-output"),
           "GITHUB_STEP_SUMMARY": str(site / "summary"),
           "HOME": os.environ.get("HOME", str(site)), **(extra_env or {})}
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "step.sh"],
                          cwd=site, env=env, capture_output=True, text=True, timeout=120,
                          check=False)


@pytest.mark.parametrize(
    ("status", "step_status", "deploy", "annotation"),
    [(0, 0, "true", None), (4, 0, "false", "::warning"), (5, 0, "false", "::warning"),
     (3, 3, None, "::error"), (1, 1, None, "::error"), (2, 2, None, "::error")],
)
def test_github_exit_code_mapping(tmp_path: Path, status: int, step_status: int,
                                  deploy: str | None, annotation: str | None) -> None:
    assert init(tmp_path / "site") == 0
    site = tmp_path / "site"
    result = run_github_build_step(site, fake_sitegen(tmp_path, status))
    assert result.returncode == step_status, result.stdout + result.stderr
    assert (tmp_path / "args").read_text().split() == [
        "build", "--report", "build-report.json", "-o", "_site"]
    output = (site / "github-output").read_text() if (site / "github-output").exists() else ""
    assert output == ("" if deploy is None else f"deploy={deploy}\n")
    lines = [line for line in result.stdout.splitlines() if not line.startswith("sitegen:")]
    if annotation is None:
        assert not lines
    else:
        assert lines[0].startswith(annotation)
    if status == 4:
        assert "quota" in result.stdout
    if status == 3:
        assert "SITEGEN_API_KEY" in result.stdout


# --- GitLab CI ----------------------------------------------------------------------------


def test_gitlab_pipeline_schedule_cache_and_pages(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert init(tmp_path, "--ci", "gitlab") == 0
    assert "created .gitlab-ci.yml" in capsys.readouterr().out
    assert not (tmp_path / ".github").exists()
    text = (tmp_path / ".gitlab-ci.yml").read_text(encoding="utf-8")
    schedule = load_config(tmp_path / "site.toml").api.schedule
    assert text.count(schedule) == 1  # written once, as SITEGEN_CRON
    data = gitlab(tmp_path)
    assert data["variables"]["SITEGEN_CRON"] == schedule
    assert data["variables"]["SITEGEN_OUTPUT"] == "_site"
    assert data["variables"]["SITEGEN_PUBLIC"] == "public"
    assert data["variables"]["SITEGEN_CACHE"] == ".sitegen" and text.count(".sitegen") == 1
    pages = data["pages"]
    assert {"if": '$CI_PIPELINE_SOURCE == "schedule"'} in pages["rules"]
    assert {"if": '$CI_PIPELINE_SOURCE == "push" && $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH'} in (
        pages["rules"])
    assert pages["artifacts"]["paths"] == ["$SITEGEN_PUBLIC", "$SITEGEN_REPORT"]
    assert pages["artifacts"]["when"] == "always"
    assert pages["allow_failure"] == {"exit_codes": [4, 5]}
    content_cache = pages["cache"][0]
    assert content_cache["paths"] == ["$SITEGEN_CACHE/", "$SITEGEN_OUTPUT/"]
    assert content_cache["when"] == "on_success"  # never what failed a build (#48)
    assert content_cache["key"] == "sitegen-$CI_COMMIT_REF_SLUG"
    assert content_cache["fallback_keys"] == ["sitegen-$CI_DEFAULT_BRANCH"]
    assert pages["before_script"] == [
        "python -m pip install --no-deps -r sitegen-requirements.txt",
        "python -m pip show sitegen-cas > /dev/null", "python -m pip install sitegen-cas"]
    assert any('SITEGEN_SITE_URL="$CI_PAGES_URL" sitegen build --report "$SITEGEN_REPORT" '
               '-o "$SITEGEN_OUTPUT"' in line for line in pages["script"])
    assert "--strict" not in text
    assert "/public/" in (tmp_path / ".gitignore").read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("status", [0, 1, 2, 3, 4, 5])
def test_gitlab_exit_code_mapping(tmp_path: Path, status: int) -> None:
    site = tmp_path / "site"
    assert init(site, "--ci", "gitlab") == 0
    pages = gitlab(site)["pages"]
    (site / "job.sh").write_text("\n".join(pages["script"]), encoding="utf-8")
    (site / "_site").mkdir()  # (what a build of no file leaves: its manifest)
    (site / "_site" / MANIFEST_NAME).write_text('{"generator": "sitegen", "version": 3, '
                                                '"files": {}}')
    env = {"PATH": f"{fake_sitegen(tmp_path, status)}{os.pathsep}{BIN}{os.pathsep}"
                   f"{os.environ['PATH']}", **gitlab(site)["variables"]}
    result = subprocess.run(["bash", "-eo", "pipefail", "job.sh"], cwd=site, env=env,
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == status
    passes_with_warning = status in pages["allow_failure"]["exit_codes"]
    assert passes_with_warning == (status in (4, 5))
    last = result.stdout.strip().splitlines()[-1]
    if status in (4, 5):
        assert last.startswith("WARNING:")
    elif status:
        assert last.startswith("ERROR:")


# --- end to end: init, then the workflow's own build command ------------------------------


@pytest.fixture()
def data_file(tmp_path: Path) -> Path:
    """A generated workspace without defects, so that `build --strict` may pass."""
    path = tmp_path / "workspace.json"
    path.write_text(json.dumps(generate_workspace(24, seed=7)), encoding="utf-8")
    return path


@pytest.fixture()
def emulator(tmp_path: Path, data_file: Path) -> Iterator[str]:
    """`sitegen emulate --port 0 --data FILE` over a real socket; yields its base URL."""
    yield from _emulate(tmp_path, "--data", str(data_file))


def _emulate(tmp_path: Path, *argv: str) -> Iterator[str]:
    process = subprocess.Popen(
        [str(BIN / "sitegen"), "emulate", "--port", "0", *argv], stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True, cwd=tmp_path)
    assert process.stdout is not None
    try:
        line = process.stdout.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+)", line)
        assert found, f"emulate printed {line!r}"
        yield found.group(1)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()


def point_at(site: Path, url: str, data_file: Path | None = None) -> None:
    """Edit the scaffolded site.toml as a user would: the service URL and the workspace id."""
    text = (site / "site.toml").read_text(encoding="utf-8")
    text = text.replace('url = "https://cas.example.com"', f'url = "{url}"', 1)
    if data_file is not None:
        workspace = json.loads(data_file.read_text(encoding="utf-8"))["workspace"]["id"]
        text = text.replace('workspace = "65f0c0ffee0123456789abcd"', f'workspace = "{workspace}"')
    (site / "site.toml").write_text(text, encoding="utf-8")


def test_init_then_build_demo_in_a_fresh_folder(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "fresh"
    assert init(site) == 0
    monkeypatch.chdir(site)
    assert main(["build", "--demo"]) == 0
    assert (site / "_site" / "index.html").is_file()
    assert (site / "_site" / "sitemap.xml").is_file()


def test_the_override_example_of_templates_readme_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "fresh"
    assert init(site) == 0
    readme = (site / "templates" / "README.md").read_text(encoding="utf-8")
    example = re.search(r"```jinja\n(.*?)```", readme, re.S)
    assert example is not None
    (site / "templates" / "base.html").write_text(example.group(1), encoding="utf-8")
    monkeypatch.chdir(site)
    assert main(["build", "--demo"]) == 0
    page = (site / "_site" / "index.html").read_text(encoding="utf-8")
    assert '<meta name="theme-color" content="#1d4ed8">' in page
    assert "<title>" in page  # the rest still comes from the default theme


def test_the_github_build_step_as_written_against_the_emulator(
    tmp_path: Path, emulator: str, data_file: Path
) -> None:
    site = tmp_path / "site"
    assert init(site) == 0
    point_at(site, emulator, data_file)
    result = run_github_build_step(site, BIN, {"SITEGEN_API_KEY": "ci-secret-key-1234"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert (site / "github-output").read_text() == "deploy=true\n"
    assert (site / "_site" / "index.html").is_file()
    report = json.loads((site / "build-report.json").read_text(encoding="utf-8"))
    assert report["pages"]["written"] > 0 and report["api"]["total"] > 0
    assert "ci-secret-key-1234" not in result.stdout + result.stderr
    # The next scheduled run starts from the cache the first one left.
    assert any((site / ".sitegen").iterdir())


def test_the_github_build_step_keeps_the_site_when_the_quota_is_exhausted(
    tmp_path: Path, data_file: Path
) -> None:
    site = tmp_path / "site"
    assert init(site) == 0
    for url in _emulate(tmp_path, "--data", str(data_file), "--quota", "0"):
        point_at(site, url, data_file)
        result = run_github_build_step(site, BIN, {"SITEGEN_API_KEY": "ci-secret-key-1234"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "::warning title=sitegen: API quota exhausted::" in result.stdout
    assert (site / "github-output").read_text() == "deploy=false\n"
    assert not (site / "_site").exists()


def test_the_gitlab_job_as_written_against_the_emulator(
    tmp_path: Path, emulator: str, data_file: Path
) -> None:
    site = tmp_path / "site"
    assert init(site, "--ci", "gitlab") == 0
    point_at(site, emulator, data_file)
    (site / "job.sh").write_text("\n".join(gitlab(site)["pages"]["script"]), encoding="utf-8")
    env = {"PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "SITEGEN_API_KEY": "ci-key-5678",
           **gitlab(site)["variables"]}
    result = subprocess.run(["bash", "-eo", "pipefail", "job.sh"], cwd=site, env=env,
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (site / "public" / "index.html").is_file()
    # Pages publishes exactly the files the build wrote: not the manifest, nor what a
    # restored cache put beside them, nor a page whose bytes were changed since.
    built = json.loads((site / "_site" / MANIFEST_NAME).read_text())["files"]
    public = site / "public"
    assert sorted(p.relative_to(public).as_posix() for p in public.rglob("*")
                  if p.is_file()) == sorted(built)
    shutil.rmtree(public)
    (site / "_site" / ".git").mkdir()
    (site / "_site" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (site / "_site" / "planted.html").write_text("<p>not the build's</p>")
    copied = subprocess.run([str(BIN / "python"), "-m", "sitegen.publishcopy", "_site", "public"],
                            cwd=site, capture_output=True, text=True, timeout=120, check=False)
    assert copied.returncode == 0, copied.stderr
    assert sorted(p.relative_to(public).as_posix() for p in public.rglob("*")
                  if p.is_file()) == sorted(built)
    shutil.rmtree(public)
    (site / "_site" / "index.html").write_text("<p>forged</p>")
    copied = subprocess.run([str(BIN / "python"), "-m", "sitegen.publishcopy", "_site", "public"],
                            cwd=site, capture_output=True, text=True, timeout=120, check=False)
    assert copied.returncode == 1 and copied.stderr.startswith("error: ")
    assert "index.html is not the file the build wrote" in copied.stderr
    assert len(copied.stderr.strip().splitlines()) == 1


def test_the_digest_commands_over_a_real_socket(
    tmp_path: Path, emulator: str, data_file: Path
) -> None:
    site = tmp_path / "site"
    assert init(site) == 0
    point_at(site, emulator, data_file)
    before = json.loads(data_file.read_text(encoding="utf-8"))["digest"]
    env = {**os.environ, "SITEGEN_API_KEY": "digest-socket-key-9876"}

    def sitegen(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(BIN / "sitegen"), *argv], cwd=site, env=env,
                              capture_output=True, text=True, timeout=60, check=False)

    shown = sitegen("digest", "show")
    assert shown.returncode == 0, shown.stderr
    assert re.search(rf"^frequency:\s+{before['frequency']}$", shown.stdout, re.M)
    assert re.search(rf"^subject:\s+{re.escape(before['subject'])}$", shown.stdout, re.M)
    wanted = "monthly" if before["frequency"] != "monthly" else "daily"
    changed = sitegen("digest", "set", "--frequency", wanted, "--sender-name", "The Editors")
    assert changed.returncode == 0, changed.stderr
    assert re.search(rf"^frequency:\s+{wanted}$", changed.stdout, re.M)
    again = sitegen("digest", "show")
    assert re.search(r"^sender-name:\s+The Editors$", again.stdout, re.M)
    refused = sitegen("digest", "set", "--reply-to", "nobody")
    assert refused.returncode == 2 and "--reply-to" in refused.stderr
    for result in (shown, changed, again, refused):
        assert "digest-socket-key-9876" not in result.stdout + result.stderr


@pytest.mark.parametrize(("ci", "schema"), [("github", "vendor.github-workflows"),
                                            ("gitlab", "vendor.gitlab-ci")])
def test_the_scaffolded_ci_file_passes_its_schema(tmp_path: Path, ci: str, schema: str) -> None:
    """check-jsonschema's built-in (vendored, offline) schema of each CI service."""
    assert init(tmp_path, "--ci", ci) == 0
    checked = subprocess.run(
        [str(BIN / "check-jsonschema"), "--builtin-schema", schema, str(tmp_path / CI_PATHS[ci])],
        capture_output=True, text=True, timeout=120, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_github_workflow_has_no_zizmor_finding(tmp_path: Path) -> None:
    assert init(tmp_path) == 0
    audited = subprocess.run(
        [str(BIN / "zizmor"), "--offline", "--no-progress", str(tmp_path / CI_PATHS["github"])],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "NO_COLOR": "1"})
    assert audited.returncode == 0, audited.stdout + audited.stderr
    assert "No findings to report" in audited.stdout + audited.stderr


def test_render_ci_fills_every_placeholder() -> None:
    for ci in ("github", "gitlab"):
        text = render_ci(ci, SiteSettings(schedule="5 4 * * 0", output="out", cache_dir="c"))
        assert "__SITEGEN_" not in text and "__PIN_" not in text
        assert "5 4 * * 0" in text


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_init_inside_a_repository_subfolder_warns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert init(tmp_path / "docs") == 0
    assert "repository root" in capsys.readouterr().err
    root = tmp_path / "root"  # (tmp_path now holds docs/: not a folder init fills)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    assert init(root) == 0
    assert "repository root" not in capsys.readouterr().err


@pytest.mark.parametrize("ci", ["github", "gitlab"])
@pytest.mark.parametrize("name", ["null", "true", "no", "1e3", "0x10", "1.5", "on"])
def test_folders_yaml_would_read_as_other_types_stay_strings(tmp_path: Path, ci: str,
                                                             name: str) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "site.toml").write_text(
        f'[site]\noutput = "{name}"\n[api]\ncache_dir = "{name}"\n', encoding="utf-8")
    assert init(site, "--ci", ci) == 0
    data = yaml.safe_load((site / CI_PATHS[ci]).read_text(encoding="utf-8"))
    variables = data["env"] if ci == "github" else data["variables"]
    assert variables["SITEGEN_CACHE"] == name
    if ci == "github":
        assert variables["SITEGEN_OUTPUT"] == name


def test_upgrade_ci_never_writes_through_a_symlinked_requirements_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = tmp_path / "site"
    assert init(site) == 0
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n", encoding="utf-8")
    requirements = site / REQUIREMENTS_PATHS["github"]
    requirements.unlink()
    requirements.symlink_to(outside)
    capsys.readouterr()
    assert init(site, "--upgrade-ci", "--requirement", "sitegen-cas==1.2.3") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "symbolic link" in err[0]
    assert outside.read_text(encoding="utf-8") == "precious\n"
    assert requirements.is_symlink()


def test_upgrade_ci_never_writes_into_a_symlinked_folder_out_of_the_site(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    assert init(site) == 0
    shutil.rmtree(site / ".github")
    elsewhere.mkdir()
    (site / ".github").symlink_to(elsewhere, target_is_directory=True)
    assert init(site, "--upgrade-ci", "--requirement", "sitegen-cas==1.2.3") == 2
    assert "outside the site" in capsys.readouterr().err
    assert list(elsewhere.iterdir()) == []


def test_upgrade_ci_replaces_a_hard_link_rather_than_writing_through_it(tmp_path: Path) -> None:
    site = tmp_path / "site"
    assert init(site) == 0
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n", encoding="utf-8")
    requirements = site / REQUIREMENTS_PATHS["github"]
    requirements.unlink()
    os.link(outside, requirements)
    assert init(site, "--upgrade-ci", "--requirement", "sitegen-cas==1.2.3") == 0
    assert outside.read_text(encoding="utf-8") == "precious\n"
    assert requirements.read_text(encoding="utf-8").splitlines()[-1] == "sitegen-cas==1.2.3"


@pytest.mark.parametrize("spec", ["sitegen", "sitegen-cas==1.2.3\x0b--index-url https://e.x/"])
def test_init_refuses_a_requirement_pip_would_misread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str
) -> None:
    assert init(tmp_path / "site", "--requirement", spec) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --requirement ")
    assert not (tmp_path / "site").exists()
