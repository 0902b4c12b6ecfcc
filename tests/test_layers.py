"""The house's layers are a contract: no import of sitegen runs back up them.

The layers are the flow of a build, drawn as an import-linter `layers` contract in
pyproject.toml (`[tool.importlinter]`; ARCHITECTURE.md, "Layers"): the commands on top, the
tools beside the build, the recipe, the emulator, then emit → render → plan → images →
model → fetch → store → config → the base. Every top-level module of sitegen is in one
layer (the contract is exhaustive) and none is relabelled to pass. A second contract forbids
emit to import the render at all (`render/setup.py` readies the renderer; emit is handed what
it needs). These tests run the
maintained checker, `lint-imports`, as CI does, and show that it fails on an upward import,
one inside a function included.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import sitegen

ROOT = Path(sitegen.__file__).parent
PROJECT = ROOT.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(project: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` run in *project* (its pyproject.toml, its `sitegen/`)."""
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=project, text=True,
                          capture_output=True, timeout=120, check=False)


def test_the_layers_contract_is_kept() -> None:
    result = lint_imports(PROJECT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The project's package and its contract, in a folder of their own."""
    shutil.copytree(ROOT, tmp_path / "sitegen",
                    ignore=shutil.ignore_patterns("__pycache__", "themes", "static"))
    shutil.copy(PROJECT / "pyproject.toml", tmp_path)
    return tmp_path


@pytest.mark.parametrize(("module", "probe", "said"), [
    # the images stage reaching the emitter (a probe the old, relabelling check let pass)
    ("images/collect.py", "from sitegen.emit.headers import render_headers\n",
     "sitegen.images.collect -> sitegen.emit.headers"),
    # the model reaching the recipe from inside a function
    ("model/related.py", "def _probe() -> None:\n    from sitegen.build import run_build\n",
     "sitegen.model.related -> sitegen.build"),
    # the configuration reaching the deploy
    ("config.py", "import sitegen.deploy.run\n", "sitegen.config -> sitegen.deploy.run"),
])
def test_an_upward_import_breaks_the_contract(copy: Path, module: str, probe: str,
                                              said: str) -> None:
    path = copy / "sitegen" / module
    path.write_text(path.read_text(encoding="utf-8") + "\n\n" + probe, encoding="utf-8")
    result = lint_imports(copy)
    assert result.returncode == 1
    assert "1 kept, 1 broken" in result.stdout
    assert said in result.stdout


@pytest.mark.parametrize("probe", [
    "from sitegen.render.themes import ThemeSet\n",  # down a layer: the layers allow it
    "def _probe() -> None:\n    from sitegen.render.pages import Renderer\n",
])
def test_emit_importing_the_render_breaks_the_contract(copy: Path, probe: str) -> None:
    path = copy / "sitegen" / "emit" / "sitejobs.py"
    path.write_text(path.read_text(encoding="utf-8") + "\n\n" + probe, encoding="utf-8")
    result = lint_imports(copy)
    assert result.returncode == 1
    assert "the flow of a build: no import runs back up KEPT" in result.stdout
    assert "emit writes files and never reaches into the render BROKEN" in result.stdout
    assert "sitegen.emit.sitejobs -> sitegen.render." in result.stdout


def test_a_module_outside_every_layer_breaks_the_contract(copy: Path) -> None:
    """Exhaustive: a new top-level module must be given its layer."""
    (copy / "sitegen" / "newcomer.py").write_text('"""A module no layer names."""\n')
    result = lint_imports(copy)
    assert result.returncode == 1
    assert "sitegen.newcomer" in result.stdout
