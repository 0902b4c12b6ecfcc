"""The sentences a new owner meets first: an empty key, a service name that does not exist."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitegen.cli import main

SITE_TOML = """[site]
title = "Messages"
url = "https://notes.acme.test/"

[api]
url = "{api}"
workspace = "65f0c0ffee0123456789abcd"
timeout = 5.0
retry_budget = 5.0
"""


def write_site(root: Path, api: str = "https://cas.example.test") -> Path:
    path = root / "site.toml"
    path.write_text(SITE_TOML.format(api=api), encoding="utf-8")
    return path


def last_error(capsys: pytest.CaptureFixture[str]) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines and lines[-1].startswith("error: "), lines
    assert "Traceback" not in "\n".join(lines)
    return lines[-1]


@pytest.mark.parametrize("command", [["build"], ["fetch"], ["digest", "show"]])
def test_an_empty_key_is_called_empty_not_missing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    """`SITEGEN_API_KEY=` (set, but to nothing) was reported as "not set"."""
    config = write_site(tmp_path)
    monkeypatch.setenv("SITEGEN_API_KEY", "")
    assert main([*command, "-c", str(config)]) == 2
    line = last_error(capsys)
    assert "SITEGEN_API_KEY is empty" in line and "not set" not in line, line
    assert "export SITEGEN_API_KEY=" in line
    monkeypatch.setenv("SITEGEN_API_KEY", "   ")
    assert main([*command, "-c", str(config)]) == 2
    assert "SITEGEN_API_KEY is empty" in last_error(capsys)
    monkeypatch.delenv("SITEGEN_API_KEY")
    assert main([*command, "-c", str(config)]) == 2
    assert "SITEGEN_API_KEY is not set" in last_error(capsys)


@pytest.mark.parametrize("command", [["build"], ["fetch"]])
def test_a_host_that_does_not_resolve_is_named_with_the_setting_to_fix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    """An unresolvable `[api] url` said only "connection failed: ConnectError", after
    retrying for the whole retry budget. `.invalid` never resolves (RFC 2606), without
    network too; a resolver that cannot be asked fails as fast (this machine has no other
    network than loopback)."""
    config = write_site(tmp_path, "https://cas.example.invalid")
    monkeypatch.setenv("SITEGEN_API_KEY", "k-123456789")
    assert main([*command, "-c", str(config), "-o", str(tmp_path / "out")]
                if command == ["build"] else [*command, "-c", str(config)]) == 5
    line = last_error(capsys)
    assert line.startswith("error: cannot resolve cas.example.invalid: "), line
    assert "check [api] url in site.toml" in line
    assert "ConnectError" not in line and "k-123456789" not in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("value", "said"), [("", "is empty"), ("  ", "is empty"),
                                             (None, "is not set")])
def test_an_empty_analytics_key_is_called_empty_not_missing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
        value: str | None, said: str) -> None:
    """The beacon's key, set to nothing, was reported as "not set", as the API key was."""
    from sitegen.config import parse_config
    from sitegen.render.setup import beacon_key

    config = parse_config({"site": {"title": "T", "url": "https://notes.acme.test/"},
                           "api": {"url": "https://cas.example.test",
                                   "workspace": "65f0c0ffee0123456789abcd"},
                           "analytics": {"enabled": True}}, tmp_path)
    if value is None:
        monkeypatch.delenv("SITEGEN_ANALYTICS_KEY", raising=False)
    else:
        monkeypatch.setenv("SITEGEN_ANALYTICS_KEY", value)
    assert beacon_key(config) is None
    assert f"SITEGEN_ANALYTICS_KEY {said}:" in caplog.text, caplog.text
