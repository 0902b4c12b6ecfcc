"""`build --report FILE` on every exit status: the error's code and sentence, warnings, calls."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sitegen.cli import main

BIN = Path(sys.executable).parent
WORKSPACE = "65f0c0ffee0123456789abcd"  # the demo workspace the emulator serves by default


def _emulate(cwd: Path, *argv: str) -> Iterator[str]:
    process = subprocess.Popen([str(BIN / "sitegen"), "emulate", "--port", "0", *argv],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               cwd=cwd)
    assert process.stdout is not None
    try:
        found = re.search(r"(http://127\.0\.0\.1:\d+)", process.stdout.readline())
        assert found
        yield found.group(1)
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stdout.close()


@pytest.fixture(scope="module")
def strict_emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The demo workspace behind one accepted key, `right-key-1234`."""
    yield from _emulate(tmp_path_factory.mktemp("emulator"), "--key", "right-key-1234")


@pytest.fixture(scope="module")
def spent_emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The demo workspace with its monthly quota used up (402)."""
    yield from _emulate(tmp_path_factory.mktemp("emulator"), "--quota", "0")


def _closed_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def site(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "site.toml"
    path.write_text(f'[site]\ntitle = "Report"\nurl = "https://r.test/"\n[api]\nurl = "{url}"\n'
                    f'workspace = "{WORKSPACE}"\nretry_budget = 1.0\nmax_retries = 1\n',
                    encoding="utf-8")
    return path


def build(tmp_path: Path, url: str, monkeypatch: pytest.MonkeyPatch, key: str,
          *extra: str) -> tuple[int, dict[str, Any]]:
    monkeypatch.setenv("SITEGEN_API_KEY", key)
    report = tmp_path / "report.json"
    status = main(["build", "-q", "-c", str(site(tmp_path, url)), "-o", str(tmp_path / "out"),
                   "--report", str(report), *extra])
    return status, json.loads(report.read_text(encoding="utf-8"))


def test_a_built_site_reports_status_0_and_its_warnings_as_a_list(
    tmp_path: Path, strict_emulator: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    status, report = build(tmp_path, strict_emulator, monkeypatch, "right-key-1234")
    assert status == 0 and report["status"] == 0 and report["error"] is None
    assert report["pages"]["written"] > 0 and report["api"]["total"] > 0
    assert isinstance(report["warnings"], list) and report["warnings"]  # the demo's repair
    assert any("has no slug" in message for message in report["warnings"])
    assert report["warning_count"] == len(report["warnings"])


@pytest.mark.parametrize(("which", "code", "words"), [
    ("strict", 3, "refused"), ("spent", 4, "quota"), ("closed", 5, "")])
def test_every_failure_writes_the_report_with_its_code_and_sentence(
    tmp_path: Path, which: str, code: int, words: str, monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    url = _closed_port() if which == "closed" else request.getfixturevalue(f"{which}_emulator")
    status, report = build(tmp_path, url, monkeypatch, "wrong-key-5678")
    assert status == code and report["status"] == code
    assert report["error"]["code"] == code
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last == f"error: {report['error']['message']}"
    assert words in report["error"]["message"]
    assert "wrong-key-5678" not in json.dumps(report)
    assert report["pages"] == {"count": 0, "written": 0, "unchanged": 0, "removed": 0,
                               "html": 0, "rendered": 0}
    assert report["files"] == {"count": 0, "written": 0, "unchanged": 0, "removed": 0}
    assert isinstance(report["warnings"], list)
    if which != "closed":
        assert report["api"]["total"] >= 1  # the calls the failed sync made
    assert list(report["timings"]) == ["fetch"]  # the stage that failed, timed
    assert not (tmp_path / "out").exists()


def test_a_configuration_error_and_strict_failure_write_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "site.toml").write_text('[site]\ntitle = 1\n', encoding="utf-8")
    assert main(["build", "--report", "r.json"]) == 2
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["status"] == 2 and "title" in report["error"]["message"]
    assert report["timings"] == {}  # nothing ran
    (tmp_path / "site.toml").unlink()
    assert main(["build", "--demo", "--strict", "-o", "out", "--report", "r.json"]) == 1
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["status"] == 1 and report["error"]["message"].startswith("--strict")
    assert {"fetch", "model", "plan", "render", "files"} <= set(report["timings"])
    assert report["warnings"] and report["api"]["total"] > 0
