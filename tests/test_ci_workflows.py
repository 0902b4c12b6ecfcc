"""The scaffolded CI files run, not only parse: their own steps, run after run.

Each run is a fresh checkout of a site made by `sitegen init` (pointed at `sitegen emulate`
on a loopback port, the secrets as environment variables). The GitHub workflow's `run:`
steps and the GitLab job's `before_script` + `script` lines are executed in order with bash,
in one fresh virtual environment per module (sitegen's dependencies linked in from the
test environment, sitegen-cas itself installed by the steps); the only change to their text is pip's
`--find-links` offering the project's freshly built wheel. The steps that `uses:` an action
are played by the test as the action behaves (the cache restores the newest entry whose key
starts with a restore key and saves under an immutable key; the Pages upload names the
folder that would be published). Cache entries live in a folder of their own, so each run
starts from the cache the runs before it saved, and from nothing else.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import venv
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml

from sitegen import installed_version
from sitegen.cli import main
from sitegen.emulator.generator import generate_workspace
from sitegen.scaffold import CI_PATHS

ROOT = Path(__file__).resolve().parents[1]
NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", ".ci-venv", "build", "dist", "*.egg-info",
                                    "__pycache__", ".*_cache", ".hypothesis", ".sitegen", "_site")
SECRETS = {"SITEGEN_API_KEY": "ci-secret-key-4321", "SITEGEN_CACHE_KEY": "ci-cache-key-8765"}
#: Each test runs whole CI jobs (pip, builds, the emulator) several times: on a loaded
#: 2-core machine that takes minutes, past the suite's default of 300 s.
pytestmark = pytest.mark.timeout(1200)
PAGES_URL = "https://someone.github.io/notes/"


# --- the pieces: a wheel, a fresh environment, the service ---------------------------------


@pytest.fixture(scope="module")
def wheel_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built once from a copy of the tree (no build/ left behind)."""
    source = tmp_path_factory.mktemp("source") / "sitegen"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE)
    out = tmp_path_factory.mktemp("wheels")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out),
                    str(source)], check=True, capture_output=True, text=True, timeout=300)
    assert list(out.glob("sitegen_cas-*.whl"))
    return out


def deps_only(folder: Path) -> Path:
    """*folder* filled with links to this environment's site-packages, sitegen-cas left out:
    sitegen's dependencies for a fresh environment, without the registry."""
    folder.mkdir(parents=True, exist_ok=True)
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.lower().startswith(("sitegen", "__editable__")):
            (folder / entry.name).symlink_to(entry)
    return folder


def fresh_env(folder: Path, deps: Path) -> Path:
    """A new virtual environment with pip (what `actions/setup-python` or `python:3.12-slim`
    gives) that finds sitegen's dependencies in *deps* (a `.pth` line); returns its bin/."""
    venv.EnvBuilder(with_pip=True).create(folder)
    purelib = subprocess.run(
        [str(folder / "bin" / "python"), "-c",
         "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip()
    (Path(purelib) / "deps.pth").write_text(f"{deps}\n", encoding="utf-8")
    return folder / "bin"


@pytest.fixture(scope="module")
def deps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return deps_only(tmp_path_factory.mktemp("deps") / "site-packages")


@pytest.fixture(scope="module")
def python_env(tmp_path_factory: pytest.TempPathFactory, deps: Path) -> Path:
    """A fresh virtual environment, once per module: sitegen-cas is installed into it by the
    steps; its dependencies are this environment's (not downloaded on every test run)."""
    return fresh_env(tmp_path_factory.mktemp("ci-python") / "venv", deps)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def emulator(data: dict[str, Any], port: int, folder: Path) -> Iterator[None]:
    """`sitegen emulate --data FILE --port PORT` while the block runs."""
    path = folder / f"workspace-{time.monotonic_ns()}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "sitegen"), "emulate", "--data", str(path),
         "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    try:
        assert str(port) in process.stdout.readline()
        yield
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stdout.close()


def changed(data: dict[str, Any]) -> dict[str, Any]:
    """The workspace with one published article's title edited (and its updatedAt moved on)."""
    edited = json.loads(json.dumps(data))
    article = next(a for a in edited["articles"] if a["status"] == "published")
    article["title"] += " (revised)"
    article["updatedAt"] = "2030-01-01T00:00:00.000Z"
    return edited


def budget(data: dict[str, Any]) -> int:
    """ceil(N/100) + C + A + 10: the most calls an incremental run may make."""
    return (math.ceil(len(data["articles"]) / 100) + len(data["clusters"])
            + len(data["authorIdentities"]) + 10)


@dataclass
class Runner:
    """Runs a scaffolded CI file's steps, one fresh checkout per run, with a shared cache."""

    ci: str
    site: Path  # the repository as `sitegen init` left it (pointed at the emulator)
    work: Path
    bin_dir: Path
    wheels: Path
    cache: dict[str, Path] = field(default_factory=dict)  # key -> saved entry, oldest first
    runs: int = 0

    def checkout(self) -> Path:
        self.runs += 1
        workspace = self.work / f"run-{self.runs}"
        shutil.copytree(self.site, workspace)
        return workspace

    def env(self, extra: dict[str, str]) -> dict[str, str]:
        return {"PATH": f"{self.bin_dir}{os.pathsep}{os.environ['PATH']}",
                "HOME": os.environ.get("HOME", str(self.work)), "LANG": "C.UTF-8",
                **SECRETS, **extra}

    def shell(self, script: str, workspace: Path, env: dict[str, str]) -> int:
        # The one change to the steps' text: the freshly built wheel, offered to pip.
        script = script.replace("pip install ", f"pip install --find-links {self.wheels} ")
        (workspace.parent / f"step-{self.runs}.sh").write_text(script, encoding="utf-8")
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail",
             str(workspace.parent / f"step-{self.runs}.sh")],
            cwd=workspace, env=env, capture_output=True, text=True, timeout=600, check=False)
        self.log += done.stdout + done.stderr
        return done.returncode

    log: str = ""

    def restore(self, workspace: Path, paths: list[str], key: str, prefixes: list[str]) -> None:
        found = self.cache.get(key) or next(
            (self.cache[k] for k in reversed(self.cache)
             if any(k.startswith(p) for p in prefixes)), None)
        if found is None:
            return
        for path in paths:
            if (found / path).exists():
                shutil.copytree(found / path, workspace / path, dirs_exist_ok=True)

    def save(self, workspace: Path, paths: list[str], key: str, *, mutable: bool = False
             ) -> None:
        if key in self.cache and not mutable:
            return  # GitHub's cache entries are immutable; GitLab's are replaced
        self.cache.pop(key, None)
        entry = self.work / "cache" / f"{self.runs}-{re.sub(r'[^A-Za-z0-9_.-]', '_', key)}"
        entry.mkdir(parents=True)
        for path in paths:
            if (workspace / path).exists():
                shutil.copytree(workspace / path, entry / path)
        self.cache[key] = entry


@dataclass
class Outcome:
    """What one run left: its exit status, outputs, report and the folder it would publish."""

    status: int
    outputs: dict[str, str]
    report: dict[str, Any]
    published: Path | None
    workspace: Path
    summary: str = ""


def _expand(text: str, context: dict[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        assert name in context, f"the test does not know ${{{{ {name} }}}}"
        return context[name]

    return re.sub(r"\$\{\{\s*([\w.-]+)\s*\}\}", value, text)


def run_github(runner: Runner) -> Outcome:
    workspace = runner.checkout()
    data = yaml.safe_load((workspace / CI_PATHS["github"]).read_text(encoding="utf-8"))
    env_vars = {k: str(v) for k, v in data["env"].items()}
    context = {**{f"env.{k}": v for k, v in env_vars.items()},
               **{f"secrets.{k}": v for k, v in SECRETS.items()},
               "secrets.SITEGEN_ANALYTICS_KEY": "",
               "github.run_id": str(1000 + runner.runs), "github.run_attempt": "1"}
    outputs_file, summary_file = workspace.parent / "out.txt", workspace.parent / "summary.md"
    outputs_file.write_text("", encoding="utf-8")
    summary_file.write_text("", encoding="utf-8")
    failed, status, published = False, 0, None
    for item in data["jobs"]["build"]["steps"]:
        outputs = dict(line.split("=", 1) for line in outputs_file.read_text().splitlines())
        context.update({f"steps.build.outputs.{k}": v for k, v in outputs.items()})
        condition = item.get("if", "success()")
        if condition == "always()":
            pass
        elif condition == "steps.build.outputs.deploy == 'true'":
            if failed or outputs.get("deploy") != "true":
                continue
        else:
            assert condition == "success()", condition
            if failed:
                continue
        uses = str(item.get("uses", "")).split("@")[0]
        given = {k: _expand(str(v), context) for k, v in (item.get("with") or {}).items()}
        paths = given.get("path", "").split()
        if "run" in item:
            env = runner.env({**env_vars, "GITHUB_OUTPUT": str(outputs_file),
                              "GITHUB_STEP_SUMMARY": str(summary_file),
                              **{k: _expand(str(v), context)
                                 for k, v in (item.get("env") or {}).items()}})
            status = runner.shell(item["run"], workspace, env)
            failed = failed or status != 0
        elif uses == "actions/cache/restore":
            runner.restore(workspace, paths, given["key"], given["restore-keys"].split())
        elif uses == "actions/cache/save":
            runner.save(workspace, paths, given["key"])
        elif uses == "actions/configure-pages":
            context[f"steps.{item['id']}.outputs.base_url"] = PAGES_URL.rstrip("/")
        elif uses == "actions/upload-pages-artifact":
            published = workspace / given["path"]
        else:
            assert uses in ("actions/checkout", "actions/setup-python",
                            "actions/upload-artifact"), uses
    report_path = workspace / env_vars["SITEGEN_REPORT"]
    report = json.loads(report_path.read_text()) if report_path.exists() else {}
    outputs = dict(line.split("=", 1) for line in outputs_file.read_text().splitlines())
    return Outcome(status if failed else 0, outputs, report, published, workspace,
                   summary_file.read_text(encoding="utf-8"))


def run_gitlab(runner: Runner) -> Outcome:
    workspace = runner.checkout()
    data = yaml.safe_load((workspace / CI_PATHS["gitlab"]).read_text(encoding="utf-8"))
    job = data["pages"]
    variables = {k: str(v) for k, v in data["variables"].items()}
    variables["PIP_CACHE_DIR"] = str(runner.work / "pip-cache")
    env = runner.env({**variables, "CI_PAGES_URL": PAGES_URL.rstrip("/"),
                      "CI_PROJECT_DIR": str(workspace)})

    def expand(path: str) -> str:
        return re.sub(r"\$(\w+)", lambda m: variables[m.group(1)], path).rstrip("/")

    content = job["cache"][0]
    paths = [expand(p) for p in content["paths"]]
    runner.restore(workspace, paths, content["key"], [])
    status = runner.shell("\n".join([*job["before_script"], *job["script"]]), workspace, env)
    if status == 0 or content.get("when") == "always":
        runner.save(workspace, paths, content["key"], mutable=True)
    passed = status == 0 or status in job["allow_failure"]["exit_codes"]
    assert job["artifacts"]["when"] == "always"
    report_path = workspace / variables["SITEGEN_REPORT"]
    report = json.loads(report_path.read_text()) if report_path.exists() else {}
    published = workspace / expand(job["artifacts"]["paths"][0]) if status == 0 else None
    return Outcome(status, {"passed": str(passed).lower()}, report, published, workspace)


# --- what a run must leave -----------------------------------------------------------------


def assert_complete_site(folder: Path, data: dict[str, Any]) -> None:
    """Every page the sitemap lists is in *folder*, one per published article at least."""
    assert (folder / "index.html").is_file() and (folder / "feed.xml").is_file()
    sitemap = (folder / "sitemap.xml").read_text(encoding="utf-8")
    locations = re.findall(r"<loc>([^<]+)</loc>", sitemap)
    published = [a for a in data["articles"] if a["status"] == "published"]
    assert len(locations) > len(published)
    base = urlparse(PAGES_URL).path  # the base URL came from the Pages host
    for location in locations:
        assert location.startswith(PAGES_URL), location
        path = urlparse(location).path[len(base):]
        assert (folder / path / "index.html").is_file() or (folder / path).is_file(), location


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")}


def assert_incremental(before: Outcome, after: Outcome, data: dict[str, Any],
                       edited: bool) -> None:
    """At most ceil(N/100)+C+A+10 calls, and only what changed written (the report says)."""
    report = after.report
    assert report["status"] == 0 and report["error"] is None
    assert 0 < report["api"]["total"] <= budget(data), report["api"]
    assert before.published is not None and after.published is not None
    old, new = files_of(before.published), files_of(after.published)
    differ = {path for path, body in new.items() if old.get(path) != body}
    assert report["files"]["written"] == len(differ), (report["files"], sorted(differ))
    assert report["files"]["unchanged"] >= len(new) - len(differ) - 1
    if edited:
        assert 0 < len(differ) < len(new) / 3, sorted(differ)
        assert report["api"]["saved"] >= len(data["articles"]) - 3  # bodies from the cache
    else:
        assert not differ


# --- the runs ------------------------------------------------------------------------------


@pytest.fixture()
def workspace_data() -> dict[str, Any]:
    """A generated workspace with one defect sitegen repairs with a warning (a missing slug)."""
    data = generate_workspace(24, seed=7)
    next(a for a in data["articles"] if a["status"] == "published")["slug"] = ""
    return data


def make_site(tmp_path: Path, ci: str, port: int, data: dict[str, Any]) -> Path:
    site = tmp_path / "repository"
    # The tests' sitegen is an editable checkout, which CI cannot install: the release.
    assert main(["init", str(site), "--ci", ci,
                 "--requirement", f"sitegen-cas=={installed_version()}"]) == 0
    text = (site / "site.toml").read_text(encoding="utf-8")
    text = text.replace('url = "https://cas.example.com"', f'url = "http://127.0.0.1:{port}"')
    text = text.replace('workspace = "65f0c0ffee0123456789abcd"',
                        f'workspace = "{data["workspace"]["id"]}"')
    text = text.replace("retry_budget = 20.0", "retry_budget = 2.0")
    (site / "site.toml").write_text(text, encoding="utf-8")
    return site


@pytest.mark.parametrize("ci", ["github", "gitlab"])
def test_the_scaffolded_ci_runs_run_after_run(
    ci: str, tmp_path: Path, wheel_dir: Path, python_env: Path,
    workspace_data: dict[str, Any]
) -> None:
    port = _free_port()
    runner = Runner(ci, make_site(tmp_path, ci, port, workspace_data), tmp_path / "runs",
                    python_env, wheel_dir)
    run = run_github if ci == "github" else run_gitlab
    edited = changed(workspace_data)

    # 1. A first run: cold, a complete site in the folder the upload step names.
    with emulator(workspace_data, port, tmp_path):
        first = run(runner)
    assert first.status == 0, runner.log
    assert first.published is not None and first.report["status"] == 0
    assert_complete_site(first.published, workspace_data)
    for secret in SECRETS.values():
        assert secret not in runner.log + json.dumps(first.report)
    # The missing slug is repaired with a warning: on the CI's surfaces, and still published.
    assert any("has no slug" in message for message in first.report["warnings"])
    if ci == "github":
        assert first.outputs["deploy"] == "true"
        assert re.search(r"^::warning title=sitegen::article \w+ has no slug", runner.log, re.M)
        assert re.search(r"\| pages \| \d+ \([1-9]\d* written", first.summary)
        assert "| API calls |" in first.summary
        assert "has no slug" in first.summary
    else:
        assert re.search(r"^WARNING: sitegen: article \w+ has no slug", runner.log, re.M)
        assert re.search(r"^sitegen pages: \d+ \([1-9]\d* written", runner.log, re.M)

    # 2. One article changed: the next run is incremental, from the first run's cache.
    with emulator(edited, port, tmp_path):
        second = run(runner)
    assert second.status == 0, runner.log
    assert_incremental(first, second, edited, edited=True)

    # 3. The service is down: the run fails softly (exit 5, the live site kept) ...
    third = run(runner)
    assert third.report["status"] == 5 and third.published is None
    if ci == "github":
        assert third.status == 0 and third.outputs["deploy"] == "false"
        assert "::warning title=sitegen: API unreachable::" in runner.log
    else:
        assert third.status == 5 and third.outputs["passed"] == "true"

    # 4. ... and its saved cache keeps the next run incremental.
    with emulator(edited, port, tmp_path):
        fourth = run(runner)
    assert fourth.status == 0, runner.log
    assert_incremental(second, fourth, edited, edited=False)
    assert_complete_site(fourth.published or tmp_path, edited)


@pytest.mark.parametrize("ci", ["github", "gitlab"])
def test_a_run_that_fails_never_saves_the_cache_it_failed_with(
    ci: str, tmp_path: Path, wheel_dir: Path, python_env: Path,
    workspace_data: dict[str, Any]
) -> None:
    """A cold first run that fetches everything, then fails the job (a template the owner
    pushed breaks the render: exit 1), saves no cache (#48: what made a build fail is never
    kept): the next run starts from the last successful run's cache, here none."""
    port = _free_port()
    site = make_site(tmp_path, ci, port, workspace_data)
    broken = site / "templates" / "article.html"
    broken.write_text("{{ article.title | no_such_filter }}\n", encoding="utf-8")
    runner = Runner(ci, site, tmp_path / "runs", python_env, wheel_dir)
    run = run_github if ci == "github" else run_gitlab

    with emulator(workspace_data, port, tmp_path):
        first = run(runner)
    assert first.status == 1 and first.report["status"] == 1, runner.log
    assert "fix the template" in first.report["error"]["message"]
    assert first.published is None
    assert first.report["api"]["total"] > len(workspace_data["articles"])  # read every body
    if ci == "github":
        assert "::error title=sitegen: build failed::" in runner.log
    else:
        assert first.outputs["passed"] == "false"
    assert not runner.cache  # nothing saved

    broken.unlink()  # the owner fixes the template and pushes again
    with emulator(workspace_data, port, tmp_path):
        second = run(runner)
    assert second.status == 0, runner.log
    assert second.published is not None
    assert_complete_site(second.published, workspace_data)
    assert second.report["api"]["total"] > len(workspace_data["articles"])  # cold again
    assert runner.cache  # saved by the run that succeeded
