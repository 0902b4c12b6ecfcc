"""Ctrl-C and the unforeseen: one line, no traceback, the report written, the output kept.

Ctrl-C reaches the whole process group (the render workers and Pagefind too), so these tests
start sitegen in a session of its own and send SIGINT to that group, as a terminal does.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from sitegen.cli import main
from sitegen.config import load_config
from sitegen.emulator.app import create_app
from sitegen.emulator.generator import generate_workspace
from tests.content import synced
from tests.localenv import developer_env

KEY = "interrupt-test-key"
SITE_TOML = """[site]
title = "Interrupted"
url = "https://example.test/"
description = "A site large enough that rendering it takes seconds."

[api]
url = "https://cas.example.test"
workspace = "{workspace}"

[analytics]
enabled = false
"""
TEMPLATE = '{% extends "default/base.html" %}{% block head %}{{ super() }}<!-- MARK -->' \
           "{% endblock %}\n"


def _env() -> dict[str, str]:
    return developer_env(SITEGEN_API_KEY=KEY, NO_COLOR="1", PYTHONUNBUFFERED="1")


def _files(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _staged(output: Path) -> int:
    """How many files the build in progress has staged beside *output* (0: none yet)."""
    staging = output.parent / f".{output.name}.sitegen-staging"
    try:
        return sum(1 for p in staging.rglob("*.html"))
    except OSError:
        return 0


@pytest.fixture(scope="module")
def big_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A site of ~500 articles, its content in its store and built once into `out/`."""
    root = tmp_path_factory.mktemp("big")
    data = generate_workspace(500, seed=11)
    (root / "site.toml").write_text(SITE_TOML.format(workspace=data["workspace"]["id"]),
                                    encoding="utf-8")
    (root / "templates").mkdir()
    (root / "templates" / "base.html").write_text(TEMPLATE, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:  # (the store is sealed with the build's key)
        patch.setenv("SITEGEN_API_KEY", KEY)
        synced(load_config(root / "site.toml"), key=KEY,
               transport=httpx.ASGITransport(app=create_app(data)))
    done = subprocess.run([sys.executable, "-m", "sitegen", "build", "--offline", "-o", "out",
                           "-q"], cwd=root, env=_env(), capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    yield root


def _interrupt_when(process: subprocess.Popen[str], ready: object, what: str) -> float:
    """SIGINT to *process*'s group as soon as `ready()` holds; the moment it was sent."""
    deadline = time.monotonic() + 180
    while not ready():  # type: ignore[operator]
        assert process.poll() is None, f"sitegen ended before {what}"
        assert time.monotonic() < deadline, f"never saw {what}"
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)
    return time.monotonic()


def test_ctrl_c_mid_render_is_one_line_exit_130_and_keeps_the_output(big_site: Path) -> None:
    """Workers printed KeyboardInterrupt tracebacks (2 of 5 tries): they ignore SIGINT now.
    Three tries, as the race between the workers and the building process is a race."""
    out = big_site / "out"
    before = _files(out)
    report = big_site / "report.json"
    for attempt in range(3):
        (big_site / "templates" / "base.html").write_text(  # every page changes
            TEMPLATE.replace("MARK", f"attempt {attempt}"), encoding="utf-8")
        with subprocess.Popen(
                [sys.executable, "-m", "sitegen", "build", "--offline", "-o", "out",
                 "--report", str(report)], cwd=big_site, env=_env(), text=True,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True) as build:
            try:
                sent = _interrupt_when(build, lambda: _staged(out) >= 100, "pages being rendered")
                _, err = build.communicate(timeout=120)
                stopped = time.monotonic() - sent
            finally:
                if build.poll() is None:
                    os.killpg(build.pid, signal.SIGKILL)
        assert build.returncode == 130, err
        lines = [line for line in err.splitlines() if not line.startswith("warning:")]
        assert lines == ["error: interrupted; the previous output was kept"], err
        assert stopped < 60, stopped  # (about 1 s on an idle machine; this one may be busy)
        assert _files(out) == before
        assert json.loads(report.read_text(encoding="utf-8"))["status"] == 130


def test_ctrl_c_during_a_serve_rebuild_stops_it_with_one_line(big_site: Path) -> None:
    """A Ctrl-C while the preview rebuilt hung it (the workers' lost answers) in 2 of 3 tries;
    a second one printed its line three times (once per worker)."""
    said = big_site / "serve.err"
    output = big_site / ".sitegen" / "preview"
    with said.open("w", encoding="utf-8") as errors, subprocess.Popen(
            [sys.executable, "-m", "sitegen", "serve", "--offline", "--port", "0"],
            cwd=big_site, env=_env(), text=True, stdout=subprocess.DEVNULL, stderr=errors,
            start_new_session=True) as serve:
        try:
            deadline = time.monotonic() + 180
            while "built " not in said.read_text(encoding="utf-8"):
                assert serve.poll() is None and time.monotonic() < deadline, \
                    said.read_text(encoding="utf-8")
                time.sleep(0.1)
            first = said.read_text(encoding="utf-8")
            (big_site / "templates" / "base.html").write_text(  # every page changes
                TEMPLATE.replace("MARK", "changed"), encoding="utf-8")
            sent = _interrupt_when(serve, lambda: _staged(output) >= 50, "the rebuild")
            try:
                serve.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(serve.pid, signal.SIGINT)  # a second Ctrl-C: stop without waiting
                serve.wait(timeout=60)
                pytest.fail("one Ctrl-C did not stop the preview during a rebuild")
            stopped = time.monotonic() - sent
        finally:
            if serve.poll() is None:
                os.killpg(serve.pid, signal.SIGKILL)
                serve.wait()
    err = said.read_text(encoding="utf-8")
    assert serve.returncode == 0, err
    assert stopped < 60, stopped  # (about 1 s on an idle machine; this one may be busy)
    after = err[len(first):].splitlines()
    assert after == [after[-1]] and after[-1].startswith("preview stopped: "), err
    assert "Traceback" not in err and "Pagefind" not in err


def test_an_unforeseen_exception_is_one_line_with_the_report_and_the_output_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A theme's template raising a Python error (not a TemplateError: a division by zero)
    printed a traceback and wrote no report."""
    monkeypatch.chdir(tmp_path)
    assert main(["build", "--demo", "-o", "out", "-q"]) == 0
    before = _files(tmp_path / "out")
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "base.html").write_text(
        '{% extends "default/base.html" %}{% block head %}{{ super() }}'
        "{{ site.articles|length // (site.articles|length - site.articles|length) }}"
        "{% endblock %}", encoding="utf-8")
    capsys.readouterr()
    assert main(["build", "--demo", "-o", "out", "-q", "--report", "report.json"]) == 1
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if not line.startswith("warning:")]
    assert lines == ["error: unexpected failure in the render stage (ZeroDivisionError: "
                     "integer division or modulo by zero); the previous output was kept: run "
                     "again with --debug for the details"], err
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["status"] == 1 and report["error"]["code"] == 1
    assert report["error"]["message"].startswith("unexpected failure in the render stage")
    assert _files(tmp_path / "out") == before
    # --debug still shows where it came from
    assert main(["build", "--demo", "-o", "out", "-q", "--debug"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "ZeroDivisionError" in err
    assert err.strip().splitlines()[-1].startswith("error: unexpected failure in the render")
