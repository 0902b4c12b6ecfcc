"""`sitegen init` from each kind of install writes a CI that installs exactly that sitegen.

Each test installs the project's wheel (or its Git repository) into a fresh virtual
environment the way a user would, runs that environment's `sitegen init`, and checks the
requirements file beside the workflow; then the scaffolded workflow's build job is run step
by step (tests/test_ci_workflows.py's runner) in another fresh environment, against the
emulator. Indexes and repositories are served on loopback; sitegen's dependencies come from
this environment's site-packages (a `.pth` line, as in tests/test_wheel.py).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from sitegen import installed_version
from sitegen.cli import main
from sitegen.emulator.generator import generate_workspace
from sitegen.scaffold import REQUIREMENTS_PATHS
from tests.test_ci_workflows import (
    NOT_SOURCE,
    ROOT,
    Runner,
    _free_port,
    deps,
    emulator,
    fresh_env,
    run_github,
    wheel_dir,
)

__all__ = ["deps", "wheel_dir"]  # the module-scoped fixtures, shared

REQUIREMENTS = REQUIREMENTS_PATHS["github"]
#: Each test runs whole CI jobs (pip, builds, the emulator) several times: on a loaded
#: 2-core machine that takes minutes, past the suite's default of 300 s.
pytestmark = pytest.mark.timeout(1200)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


@contextmanager
def served(folder: Path) -> Iterator[str]:
    """*folder* as static files on a loopback port; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=30)


def pip_env(index_url: str | None = None) -> dict[str, str]:
    """pip without this machine's configuration, reading only *index_url* when given."""
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": "/tmp",
           "LANG": "C.UTF-8", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    if index_url is not None:
        env.update(PIP_CONFIG_FILE="/dev/null", PIP_INDEX_URL=index_url)
    return env


def sh(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False,
                          **kwargs)
    assert done.returncode == 0, f"{argv}: {done.stdout}{done.stderr}"
    return done


def point_at_emulator(site: Path, port: int, data: dict[str, Any]) -> None:
    text = (site / "site.toml").read_text(encoding="utf-8")
    text = text.replace('url = "https://cas.example.com"', f'url = "http://127.0.0.1:{port}"')
    text = text.replace('workspace = "65f0c0ffee0123456789abcd"',
                        f'workspace = "{data["workspace"]["id"]}"')
    (site / "site.toml").write_text(text, encoding="utf-8")


def build_job(site: Path, tmp_path: Path, wheels: Path, deps: Path
              ) -> tuple[int, str, Path | None]:
    """The scaffolded build job, step by step, in a fresh environment, against the emulator."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    site = shutil.copytree(site, tmp_path / "repository")  # the user's site stays as it was
    data = generate_workspace(12, seed=3)
    port = _free_port()
    point_at_emulator(site, port, data)
    runner = Runner("github", site, tmp_path / "runs", fresh_env(tmp_path / "ci-env", deps), wheels)
    with emulator(data, port, tmp_path):
        outcome = run_github(runner)
    return outcome.status, runner.log, outcome.published


def body(site: Path) -> list[str]:
    text = (site / REQUIREMENTS).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def simple_index(folder: Path, wheel: Path) -> Path:
    """A PEP 503 index of one project holding *wheel*, under folder/simple/."""
    sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    (folder / "files").mkdir(parents=True)
    shutil.copy(wheel, folder / "files" / wheel.name)
    project = folder / "simple" / "sitegen-cas"
    project.mkdir(parents=True)
    (project / "index.html").write_text(
        f'<!DOCTYPE html><html><body><a href="../../files/{wheel.name}#sha256={sha}">'
        f"{wheel.name}</a></body></html>\n", encoding="utf-8")
    return folder


def test_an_index_install_writes_the_release_by_its_hash(tmp_path: Path, wheel_dir: Path,
                                                         deps: Path) -> None:
    (wheel,) = wheel_dir.glob("sitegen_cas-*.whl")
    sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    version = installed_version()
    with served(simple_index(tmp_path / "index", wheel)) as base:
        env = pip_env(f"{base}/simple/")
        user = fresh_env(tmp_path / "user", deps)
        sh([str(user / "python"), "-m", "pip", "install", "-q", "--no-deps",
            f"sitegen-cas=={version}"], env=env)
        site = tmp_path / "site"
        init = sh([str(user / "sitegen"), "init", str(site)], env=env, cwd=tmp_path)
        assert "warning" not in init.stderr, init.stderr
        assert body(site) == ["--require-hashes", "--only-binary :all:",
                              f"sitegen-cas=={version} \\", f"    --hash=sha256:{sha}"]
        # What the install step's first line does, from that index: exactly this wheel ...
        ci = fresh_env(tmp_path / "ci", deps)
        sh([str(ci / "python"), "-m", "pip", "install", "-q", "--no-deps", "-r",
            str(site / REQUIREMENTS)], env=env)
        # ... and never another one published under the same name and version.
        other = tmp_path / "other"
        shutil.copytree(tmp_path / "index", other)
        with (other / "files" / wheel.name).open("ab") as handle:
            handle.write(b"\0")
        with served(other) as tampered:
            refused = subprocess.run(
                [str(fresh_env(tmp_path / "ci2", deps) / "python"), "-m", "pip", "install",
                 "--no-deps", "-r", str(site / REQUIREMENTS)],
                env=pip_env(f"{tampered}/simple/"), capture_output=True, text=True,
                timeout=600, check=False)
        assert refused.returncode != 0 and "DO NOT MATCH THE HASHES" in refused.stderr.upper()
    # An index without that release: no requirement at all, and one warning naming the fix.
    (tmp_path / "empty").mkdir()
    with served(tmp_path / "empty") as nothing:
        lost = tmp_path / "lost"
        init = sh([str(user / "sitegen"), "init", str(lost)], env=pip_env(f"{nothing}/simple/"),
                  cwd=tmp_path)
    assert body(lost) == []
    assert init.stderr.count("warning:") == 1 and "--requirement SPEC" in init.stderr
    # The scaffolded build job installs from the hashed requirement and builds.
    status, log, published = build_job(site, tmp_path, wheel_dir, deps)
    assert status == 0, log
    assert published is not None and (published / "index.html").is_file()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_vcs_install_writes_that_url_at_its_commit(tmp_path: Path, wheel_dir: Path,
                                                      deps: Path) -> None:
    source = tmp_path / "checkout"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c",
           "init.defaultBranch=main"]
    sh([*git, "init", "-q", str(source)])
    sh([*git, "-C", str(source), "add", "-A"])
    sh([*git, "-C", str(source), "commit", "-q", "-m", "release"])
    commit = sh(["git", "-C", str(source), "rev-parse", "HEAD"]).stdout.strip()
    bare = tmp_path / "repos" / "sitegen.git"
    sh(["git", "clone", "-q", "--bare", str(source), str(bare)])
    sh(["git", "-C", str(bare), "update-server-info"])  # git's plain-HTTP protocol
    with served(tmp_path / "repos") as base:
        url = f"git+{base}/sitegen.git@{commit}"
        user = fresh_env(tmp_path / "user", deps)
        sh([str(user / "python"), "-m", "pip", "install", "-q", "--no-deps",
            f"sitegen-cas @ {url}"], env=pip_env())
        site = tmp_path / "site"
        init = sh([str(user / "sitegen"), "init", str(site)], env=pip_env(), cwd=tmp_path)
        assert "warning" not in init.stderr, init.stderr
        assert body(site) == [f"sitegen-cas @ {url}"]
        status, log, published = build_job(site, tmp_path, wheel_dir, deps)
    assert status == 0, log
    assert f"{base}/sitegen.git" in log or "Successfully installed" in log
    assert published is not None and (published / "index.html").is_file()


def test_an_editable_checkout_warns_and_ci_stops_until_told(
    tmp_path: Path, wheel_dir: Path, deps: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = tmp_path / "site"
    assert main(["init", str(site)]) == 0
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "CI cannot install an editable checkout" in warnings[0]
    assert "--requirement SPEC" in warnings[0]
    assert body(site) == []
    # Until told what to install, the job stops at its install step, having asked the index
    # for no sitegen-cas by name.
    status, log, published = build_job(site, tmp_path / "first", wheel_dir, deps)
    assert status != 0 and published is None
    assert "not found: sitegen-cas" in log
    assert "Collecting sitegen-cas" not in log
    # `init --upgrade-ci --requirement SPEC` rewrites only the requirements file.
    workflow = (site / ".github" / "workflows" / "sitegen.yml").read_bytes()
    spec = f"sitegen-cas=={installed_version()}"
    assert main(["init", str(site), "--upgrade-ci", "--requirement", spec]) == 0
    assert f"updated {REQUIREMENTS}" in capsys.readouterr().out
    assert body(site) == [spec]
    assert (site / ".github" / "workflows" / "sitegen.yml").read_bytes() == workflow
    status, log, published = build_job(site, tmp_path / "second", wheel_dir, deps)
    assert status == 0, log
    assert published is not None and (published / "index.html").is_file()
