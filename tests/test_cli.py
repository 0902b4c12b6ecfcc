"""The command line: one `error:` line, SPEC exit codes, no traceback without --debug."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sitegen.cli import main


def test_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bild"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: ")
    assert "bild" in err[-1]


def test_bad_config_exits_2_before_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "site.toml").write_text("[site]\ntitle = 1\n", encoding="utf-8")
    code = main(["build", "-c", str(tmp_path / "site.toml")])
    assert code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("error: ")


def test_python_dash_m_runs() -> None:
    result = subprocess.run([sys.executable, "-m", "sitegen", "--version"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0
    assert result.stdout.startswith("sitegen ")
