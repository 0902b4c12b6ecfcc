"""The built wheel carries the themes and the demo, and works from a non-editable install.

A fresh virtual environment gets the wheel with `--no-deps`; the dependencies come from the
test environment's site-packages through a `.pth` line (which does not carry the editable
sitegen along), so `init` and `build --demo` run against the installed package only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: What a wheel is not built from: environments, caches and setuptools' own leftovers.
NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", ".ci-venv", "build", "dist", "*.egg-info",
                                    "__pycache__", ".*_cache", ".hypothesis", ".sitegen", "_site")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Built from a copy: setuptools leaves build/ in the tree it builds, and a build/lib of
    # an earlier checkout would carry removed modules into this wheel.
    source = tmp_path_factory.mktemp("source") / "sitegen"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
        check=True, capture_output=True, text=True,
    )
    (built,) = out.glob("sitegen_cas-*.whl")
    return built


def test_wheel_contains_themes_and_demo(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "sitegen/emulator/data/demo-workspace.json" in names
    assert "sitegen/themes/default/templates/base.html" in names
    assert any(n.startswith("sitegen/themes/magazine/templates/") for n in names)
    assert any(n.startswith("sitegen/themes/default/static/") and n.endswith(".css")
               for n in names)
    assert any(n.startswith("sitegen/emulator/data/media/") for n in names)
    assert any(n.startswith("sitegen/scaffold_templates/") for n in names)
    assert not any("/tests/" in n or n.startswith("tests/") for n in names)


def test_installed_wheel_runs_init_and_build_demo(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    (Path(purelib) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q",
         str(wheel)],
        check=True, capture_output=True, text=True,
    )
    site = tmp_path / "blog"
    run_env = {k: v for k, v in os.environ.items() if not k.startswith("SITEGEN_")}
    located = subprocess.run(
        [str(python), "-c", "import sitegen; print(sitegen.__file__)"],
        check=True, capture_output=True, text=True, cwd=tmp_path, env=run_env,
    ).stdout
    assert str(env_dir) in located, located
    sitegen = env_dir / "bin" / "sitegen"
    init = subprocess.run([str(sitegen), "init", str(site)], capture_output=True, text=True,
                          cwd=tmp_path, env=run_env)
    assert init.returncode == 0, init.stderr
    assert (site / "site.toml").is_file()
    build = subprocess.run([str(sitegen), "build", "--demo"], capture_output=True, text=True,
                           cwd=site, env=run_env)
    assert build.returncode == 0, build.stderr
    home = (site / "_site" / "index.html").read_text(encoding="utf-8")
    assert "<html" in home
    assert (site / "_site" / "feed.xml").is_file()
    assert (site / "_site" / "sitemap.xml").is_file()


def test_a_plain_install_brings_the_preview_server_and_no_event_loop_extras(wheel: Path) -> None:
    """`sitegen serve` (Starlette + uvicorn) and `--demo` work on `pip install sitegen-cas`;
    uvloop and httptools are no dependency; `[emulator]` names the emulator's needs and the
    test extra pulls it in."""
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        lines = archive.read(name).decode("utf-8").splitlines()
    requires = [line.split(":", 1)[1].strip() for line in lines
                if line.startswith("Requires-Dist:")]
    plain = {r.split(">")[0].split("[")[0].strip().lower() for r in requires if ";" not in r}
    assert {"starlette", "uvicorn", "email-validator"} <= plain
    assert not any(r.lower().startswith(("uvloop", "httptools")) for r in requires), requires
    assert "Provides-Extra: emulator" in lines
    assert any(r.startswith("sitegen-cas[emulator]") and 'extra == "test"' in r
               for r in requires), requires
