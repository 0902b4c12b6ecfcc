"""`sitegen emulate` over a real loopback socket: startup line, requests, Ctrl-C, errors."""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from sitegen.emulator import create_app
from sitegen.emulator.serve import emulate_command, read_data
from sitegen.errors import ConfigError
from sitegen.listening import bind


@pytest.fixture
def data_file(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "workspace.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture
def live_url(data: dict[str, Any]) -> Iterator[str]:
    """The emulator app served by uvicorn on a free loopback port, in a thread."""
    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(create_app(data, key="live-key"), log_config=None,
                                           access_log=False, lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            thread.join(0.01)
            assert thread.is_alive(), "uvicorn did not start"
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def test_real_socket_serves_both_versions(live_url: str, ns: Any) -> None:
    with httpx.Client(base_url=live_url, timeout=10) as client:
        v1 = client.get("/api/v1/articles", headers={"x-api-key": "Bearer live-key"})
        v2 = client.get(f"{ns.BASE2}/articles", headers={"authorization": "Bearer live-key"})
        denied = client.get(f"{ns.BASE2}/articles", headers={"x-api-key": "nope"})
        preflight = client.options(f"{ns.BASE2}/analytics", headers={
            "Origin": "http://site.test", "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "x-api-key, content-type"})
    assert v1.status_code == v2.status_code == 200
    assert v1.json()["pagination"]["totalCount"] == v2.json()["pagination"]["totalCount"] == 6
    assert denied.status_code == 401 and denied.headers["access-control-allow-origin"] == "*"
    assert preflight.status_code == 204


def _options(**overrides: Any) -> argparse.Namespace:
    values: dict[str, Any] = dict(data=None, host="127.0.0.1", port=0, key=None, latency=0.0,
                                  fail_rate=0.0, rate_limit_every=0, quota=None, no_v2=False,
                                  no_owner_fields=False, seed=0)
    values.update(overrides)
    return argparse.Namespace(**values)


def test_the_owner_fields_can_be_left_out_of_article_records() -> None:
    from sitegen.cli import build_parser

    assert build_parser().parse_args(["emulate", "--no-owner-fields"]).no_owner_fields
    assert not build_parser().parse_args(["emulate"]).no_owner_fields


def test_port_in_use_is_a_config_error(data_file: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError) as caught:
            emulate_command(_options(data=str(data_file), port=port))
    message = str(caught.value)
    assert str(port) in message and "--port 0" in message
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(("content", "expected"), [
    (None, "does not exist"),
    ("{not json", "not valid JSON"),
    ('{"agents": []}', "'workspace'"),
    ('{"workspace": {"id": "short"}}', "24-hex"),
])
def test_bad_data_file_is_a_config_error(tmp_path: Path, content: str | None,
                                         expected: str) -> None:
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        read_data(str(path))
    assert str(path) in str(caught.value) and expected in str(caught.value)


@pytest.mark.timeout(60)
def test_emulate_command_prints_url_serves_and_stops_on_ctrl_c(data_file: Path,
                                                               ns: Any) -> None:
    key = "cli-s3cret-key"
    env = {**os.environ, "NO_COLOR": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "sitegen", "emulate", "--data", str(data_file), "--port", "0",
         "--key", key], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        assert line.startswith(f'emulating workspace {ns.WS} "Acme Notes" at http://127.0.0.1:')
        assert line.endswith(" (v1 + v2)")
        url = line.split(" at ")[1].split(" ")[0]
        assert not url.endswith(":0")
        response = httpx.get(f"{url}{ns.BASE2}/agents", headers={"x-api-key": key}, timeout=10)
        assert response.status_code == 200
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert "Traceback" not in err
    assert f"GET {ns.BASE2}/agents 200" in err  # one compact log line
    assert key not in out + err + line
