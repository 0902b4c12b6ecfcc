"""`sitegen serve` as a real process: serves the demo, stops cleanly on Ctrl-C, ports."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from sitegen.cli import main


def _spawn(cwd: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "sitegen", "serve", *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _url(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("sitegen preview: http://127.0.0.1:"), line
    return line.split()[2]


def _wait_for_200(url: str, timeout: float = 120.0) -> httpx.Response:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            response = httpx.get(url, timeout=5)
        except httpx.TransportError:
            response = None
        if response is not None and response.status_code == 200:
            return response
        time.sleep(0.2)
    pytest.fail(f"{url} never answered 200")


@pytest.fixture()
def demo(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    process = _spawn(tmp_path, "--demo", "--port", "0", "--refresh-every", "0")
    try:
        yield process, _url(process)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_ctrl_c_stops_cleanly(demo: tuple[subprocess.Popen[str], str], tmp_path: Path) -> None:
    process, url = demo
    home = _wait_for_200(url)
    assert "/__sitegen/livereload.js" in home.text
    assert home.headers["cache-control"] == "no-store"
    # The preview builds into .sitegen/preview, never the configured output, and the files
    # on disk carry neither the live-reload script nor a beacon.
    built = (tmp_path / ".sitegen" / "preview" / "index.html").read_text(encoding="utf-8")
    assert "livereload" not in built and "sitegen-beacon" not in built
    assert not (tmp_path / "_site").exists()
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("preview stopped: ")
    with pytest.raises(httpx.TransportError):
        httpx.get(url, timeout=2)


def test_port_in_use_is_exit_2_naming_the_port(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(["serve", "--demo", "--port", str(port), "-c", str(tmp_path / "site.toml")])
    assert code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("error: ") and str(port) in last and "--port 0" in last


def test_bad_config_is_exit_2_before_serving(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "site.toml").write_text("[site]\ntitle = 1\n", encoding="utf-8")
    assert main(["serve", "--port", "0", "-c", str(tmp_path / "site.toml")]) == 2
    err = capsys.readouterr()
    assert "sitegen preview:" not in err.out
    assert err.err.strip().splitlines()[-1].startswith("error: ")


def test_refresh_cost_counts_the_stored_workspace(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from sitegen.config import resolve_config
    from sitegen.preview.server import _stored_counts
    from tests.content import synced

    monkeypatch.chdir(tmp_path)
    config = resolve_config("site.toml", True)
    assert _stored_counts(config) is None  # nothing stored yet: no store is created either
    assert not config.cache_path.exists()
    workspace = synced(config)
    assert _stored_counts(config) == {
        "agents": len(workspace.agents), "clusters": len(workspace.clusters or []),
        "authors": len(workspace.authors or []),
        "social_posts": len(workspace.social_posts or [])}


def test_the_background_refresh_is_off_unless_asked_and_says_its_cost_when_on(
        tmp_path: Path) -> None:
    """#24: `serve` refreshes from the service only with --refresh-every, and then prints
    what that costs a month (with the scheduled builds) as it starts."""
    env = {**os.environ, "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}
    outputs = []
    for n, extra in enumerate(((), ("--refresh-every", "10"))):
        folder = tmp_path / str(n)  # no earlier preview output: a 200 means this one has built
        folder.mkdir()
        printed, said = folder / "stdout.txt", folder / "stderr.txt"
        with printed.open("w", encoding="utf-8") as sink, said.open("w") as errors:
            process = subprocess.Popen(
                [sys.executable, "-m", "sitegen", "serve", "--demo", "--port", "0", *extra],
                cwd=folder, stdout=sink, stderr=errors, text=True, env=env)
        try:
            deadline = time.monotonic() + 120
            while "\n" not in printed.read_text(encoding="utf-8"):
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.1)
            _wait_for_200(printed.read_text(encoding="utf-8").split()[2])
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=60) == 0, said.read_text(encoding="utf-8")[-2000:]
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        outputs.append(printed.read_text(encoding="utf-8").splitlines())
    off, on = outputs
    assert off[0].startswith("sitegen preview: ") and on[0].startswith("sitegen preview: ")
    assert not any("background refresh" in line for line in off), off
    assert on[1].startswith("background refresh every 10 min: about "), on
    assert "with the scheduled builds" in on[1]
