"""`-q` silences every command: only `warning:` and `error:` lines remain, and what a command
was asked to show (`digest show`, a `--dry-run`). Each command runs as a user runs it, in a
child process; the emulator and the preview are real servers on loopback."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from sitegen.emulator.demo import load_demo

TIMEOUT = 300  # a demo build on a loaded machine
ENV = {**os.environ, "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}


def sitegen(*argv: str, cwd: Path, env: dict[str, str] | None = None,
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sitegen", *argv], cwd=cwd,
                          env={**ENV, **(env or {})}, capture_output=True, text=True,
                          timeout=TIMEOUT, check=False)


def quiet(out: str, err: str) -> None:
    """Nothing on stdout; on stderr only warnings and errors."""
    assert out == "", out
    others = [line for line in err.splitlines() if not line.startswith(("warning: ", "error: "))]
    assert others == [], err


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_answered(url: str, headers: dict[str, str] | None = None,
                        timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, headers=headers, timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    pytest.fail(f"{url} never answered 200")


def stop(process: subprocess.Popen[str]) -> tuple[str, str]:
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    return out, err


def test_init_build_and_fetch_say_nothing_with_q(tmp_path: Path) -> None:
    """`init -q` printed its five "created" lines and the next steps."""
    done = sitegen("init", "-q", "site", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    quiet(done.stdout, done.stderr)
    site = tmp_path / "site"
    assert (site / "site.toml").is_file()
    again = sitegen("init", "-q", "--upgrade-ci", "--requirement", "sitegen-cas==1.0", "site",
                    cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    quiet(again.stdout, again.stderr)
    for argv in (["build", "-q", "--demo"], ["-q", "fetch", "--demo"],
                 ["build", "--demo", "--offline", "--force", "-q"]):
        done = sitegen(*argv, cwd=site)
        assert done.returncode == 0, (argv, done.stderr)
        quiet(done.stdout, done.stderr)
        assert "warning: " in done.stderr or argv[1] == "fetch"  # (warnings stay)
    loud = sitegen("fetch", "--demo", cwd=site)
    assert loud.stdout.strip()  # (without -q the same command reports)
    asked = sitegen("fetch", "-q", "--demo", "--dry-run", cwd=site)
    assert asked.returncode == 0 and "a sync now would make" in asked.stdout  # (its answer)


def test_emulate_digest_and_serve_say_nothing_with_q(tmp_path: Path) -> None:
    """The emulator's and the preview's start and stop lines, and `digest set`'s echo."""
    port = free_port()
    emulator = subprocess.Popen([sys.executable, "-m", "sitegen", "emulate", "-q", "--port",
                                 str(port)], cwd=tmp_path, env=ENV, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    try:
        workspace = load_demo()["workspace"]["id"]
        api = f"http://127.0.0.1:{port}"
        wait_until_answered(f"{api}/api/v2/workspaces/{workspace}", {"x-api-key": "k"})
        (tmp_path / "site.toml").write_text(
            f'[site]\ntitle = "Quiet"\nurl = "https://notes.acme.test/"\n'
            f'description = "A quiet site"\n\n[api]\nurl = "{api}"\n'
            f'workspace = "{workspace}"\n', encoding="utf-8")
        key = {"SITEGEN_API_KEY": "k-quiet"}
        done = sitegen("digest", "set", "-q", "--subject", "Quiet news", cwd=tmp_path, env=key)
        assert done.returncode == 0, done.stderr
        quiet(done.stdout, done.stderr)
        shown = sitegen("digest", "show", "-q", cwd=tmp_path, env=key)
        assert shown.returncode == 0 and "Quiet news" in shown.stdout  # (what was asked for)
        built = sitegen("build", "-q", cwd=tmp_path, env=key)
        assert built.returncode == 0, built.stderr
        quiet(built.stdout, built.stderr)

        preview = free_port()
        serve = subprocess.Popen(
            [sys.executable, "-m", "sitegen", "-q", "serve", "--port", str(preview)],
            cwd=tmp_path, env={**ENV, **key}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        try:
            wait_until_answered(f"http://127.0.0.1:{preview}/")
        finally:
            out, err = stop(serve)
        quiet(out, err)
    finally:
        out, err = stop(emulator)
    quiet(out, err)
