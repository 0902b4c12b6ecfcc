"""The command line: one `error:` line, SPEC exit codes, no traceback without --debug."""

from __future__ import annotations

import os
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


def test_a_finished_build_exits_quickly_with_its_output_and_status(tmp_path: Path) -> None:
    """`build` and `fetch` end with os._exit: what they printed must still arrive, whole."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # buffered pipes
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "sitegen", "build", "--demo", "-o", str(tmp_path / "out"),
         "--report", str(report)],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("built ")  # the summary line
    assert report.stat().st_size > 0
    fetched = subprocess.run([sys.executable, "-m", "sitegen", "fetch", "--demo"],
                             cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert fetched.returncode == 0, fetched.stderr
    assert " calls" in fetched.stdout  # a pipe: block-buffered until flushed
    failed = subprocess.run(
        [sys.executable, "-m", "sitegen", "fetch", "-c", str(tmp_path / "missing.toml")],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert failed.returncode == 2
    assert failed.stderr.strip().splitlines()[-1].startswith("error: no configuration at ")


def test_no_quick_exit_under_a_tracer_or_profiler(monkeypatch: pytest.MonkeyPatch) -> None:
    from sitegen import cli

    monkeypatch.setattr(cli, "_OBSERVERS", ())
    previous = sys.gettrace()
    sys.settrace(None)
    try:
        assert not cli._observed()
        sys.settrace(lambda *args: None)
        assert cli._observed()  # coverage, debuggers: they finish their work at exit
    finally:
        sys.settrace(previous)
    monkeypatch.setattr(cli, "_OBSERVERS", ("sitegen",))  # any module loaded counts
    assert cli._observed()


def _run_recording(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> dict[str, object]:
    """`cli.run()` on *argv*, its command replaced by one that records the process state."""
    import gc

    from sitegen import cli

    seen: dict[str, object] = {}

    def dispatch(options: object) -> int:
        seen["collecting"] = gc.isenabled()
        seen["plugins"] = os.environ.get("PYDANTIC_DISABLE_PLUGINS")
        return 0

    def exit_(status: int) -> None:
        raise SystemExit(status)

    monkeypatch.setattr(cli, "_dispatch", dispatch)
    monkeypatch.setattr(cli.os, "_exit", exit_)
    monkeypatch.setattr(sys, "argv", ["sitegen", *argv])
    try:
        with pytest.raises(SystemExit) as ended:
            cli.run()
    finally:
        gc.enable()
    assert ended.value.code == 0
    return seen


@pytest.mark.parametrize("command", [["build", "--offline"], ["fetch"]])
def test_a_batch_command_runs_without_the_cyclic_collector_or_plugin_search(
    monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    seen = _run_recording(monkeypatch, command)
    assert seen == {"collecting": False, "plugins": "__all__"}


def test_a_long_lived_command_keeps_the_collector_and_a_given_plugin_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    assert _run_recording(monkeypatch, ["serve"]) == {"collecting": True, "plugins": None}
    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "")  # a user who wants their plugins
    assert _run_recording(monkeypatch, ["build"])["plugins"] == ""


def test_main_changes_neither(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests and embedders call `main`: their process keeps its collector."""
    import gc

    from sitegen import cli

    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    monkeypatch.setattr(cli, "_dispatch", lambda options: 0)
    assert main(["build", "--offline"]) == 0
    assert gc.isenabled()
    assert "PYDANTIC_DISABLE_PLUGINS" not in os.environ


@pytest.mark.parametrize("argv", [
    ["--debug", "-q", "build", "--demo"], ["build", "--demo", "--debug", "-q"],
    ["-q", "build", "--debug", "--demo"]])
def test_global_flags_before_or_after_the_command(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str]
) -> None:
    from sitegen.cli import build_parser

    options = build_parser().parse_args(argv)
    assert options.debug is True and options.quiet is True
    monkeypatch.chdir(tmp_path)
    assert main([*argv, "-o", "out"]) == 0
    assert "built " not in capsys.readouterr().err  # -q took effect


def test_quiet_and_verbose_contradict(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-q", "build", "-v", "--demo"]) == 2
    assert "-q and -v" in capsys.readouterr().err


def test_version_names_the_installed_distribution() -> None:
    from importlib.metadata import version

    result = subprocess.run([sys.executable, "-m", "sitegen", "--version"],
                            capture_output=True, text=True, check=False)
    assert result.stdout.strip() == f"sitegen {version('sitegen-cas')} (sitegen-cas)"
