"""`sitegen digest show|set` against the emulator (in-process), with failures injected."""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import logging
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.cli import build_parser, main
from sitegen.config import parse_config
from sitegen.digest import (
    check_changes,
    digest_command,
    merge,
    settings_lines,
    show_digest,
)
from sitegen.emulator import Faults, create_app
from sitegen.errors import ConfigError, SitegenError
from sitegen.fetch.records import DigestSettings
from sitegen.logs import setup_logging

WS = "65f0c0ffee0123456789abcd"
KEY = "sk-digest-test-key-0123456789"
DIGEST: dict[str, Any] = {
    "workspaceId": WS,
    "enabled": True,
    "frequency": "weekly",
    "subject": "This week at Acme",
    "previewText": "Five new notes",
    "senderName": "Acme Notes",
    "replyTo": "editor@acme.org",
    "createdAt": "2024-03-01T10:00:00.000Z",
    "updatedAt": "2024-03-02T10:00:00.000Z",
}


def workspace(digest: dict[str, Any] | None = DIGEST) -> dict[str, Any]:
    return {
        "workspace": {"id": WS, "name": "Acme"},
        "agents": [], "clusters": [], "authorIdentities": [], "articles": [],
        "socialPosts": [], "digest": copy.deepcopy(digest),
    }


class Recorder(httpx.AsyncBaseTransport):
    """Passes requests to the emulator and remembers them; `answer` may replace a response."""

    def __init__(self, app: Any,
                 answer: Callable[[httpx.Request], httpx.Response | None] | None = None) -> None:
        self.inner = httpx.ASGITransport(app=app)
        self.answer = answer
        self.requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.answer is not None:
            replaced = self.answer(request)
            if replaced is not None:
                return replaced
        return await self.inner.handle_async_request(request)

    def methods(self) -> list[str]:
        return [request.method for request in self.requests]


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("SITEGEN_API_KEY", KEY)
    yield


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    """`run` sets up terminal logging as the CLI does; put the logger back afterwards."""
    logger = logging.getLogger("sitegen")
    saved = (list(logger.handlers), logger.level, logger.propagate)
    yield
    logger.handlers[:] = saved[0]
    logger.setLevel(saved[1])
    logger.propagate = saved[2]


@pytest.fixture()
def no_key_in_output(capsys: pytest.CaptureFixture[str]) -> Iterator[None]:
    yield
    out, err = capsys.readouterr()
    assert KEY not in out and KEY not in err


def write_config(folder: Path, **api: object) -> Path:
    lines = ["[site]", 'title = "T"', 'url = "https://t.test/"', "[api]",
             'url = "http://emulator.test"', f'workspace = "{WS}"']
    lines += [f"{name} = {json.dumps(value)}" for name, value in api.items()]
    path = folder / "site.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def options(config: Path, *argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["digest", *argv, "-c", str(config)])


def run(config: Path, transport: httpx.AsyncBaseTransport, *argv: str) -> int:
    """`digest_command` with the emulator as transport, logs and errors shown as the CLI does."""
    setup_logging(0)
    try:
        return digest_command(options(config, *argv), transport=transport)
    except SitegenError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code


# --- show ------------------------------------------------------------------------------


def test_show_prints_aligned_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_key_in_output: None
) -> None:
    recorder = Recorder(create_app(workspace()))
    assert run(write_config(tmp_path), recorder, "show") == 0
    lines = capsys.readouterr().out.splitlines()
    pairs = dict(line.split(":", 1) for line in lines)
    assert {key: value.strip() for key, value in pairs.items()} == {
        "workspace": WS, "enabled": "true", "frequency": "weekly",
        "subject": "This week at Acme", "preview-text": "Five new notes",
        "sender-name": "Acme Notes", "reply-to": "editor@acme.org",
        "created": "2024-03-01T10:00:00.000Z", "updated": "2024-03-02T10:00:00.000Z",
    }
    columns = {len(line) - len(line.split(":", 1)[1].lstrip()) for line in lines}
    assert len(columns) == 1, "values must start in one column"
    assert recorder.methods() == ["GET"]
    assert recorder.requests[0].headers["x-api-key"] == KEY


def test_show_escapes_control_characters_from_the_service() -> None:
    settings_ = DigestSettings(subject="Hi \x1b[2J\u202eevil\nline", enabled=None)
    lines = settings_lines(settings_)
    subject = next(line for line in lines if line.startswith("subject:"))
    assert "\x1b" not in subject and "\u202e" not in subject and "\n" not in subject
    assert "\\x1b[2J" in subject and "evil" in subject
    assert next(line for line in lines if line.startswith("enabled:")).endswith("(not set)")


def test_show_without_settings_yet_reads_as_nothing_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recorder = Recorder(create_app(workspace(digest=None)))
    assert run(write_config(tmp_path), recorder, "show") == 0
    out = capsys.readouterr().out
    assert "subject:" in out and "(not set)" in out
    assert recorder.methods() == ["GET", "GET"]  # the digest, then the workspace to tell why


def test_show_on_a_service_without_v2_exits_5(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recorder = Recorder(create_app(workspace(), faults=Faults(no_v2=True)))
    assert run(write_config(tmp_path), recorder, "show") == 5
    assert "v2" in capsys.readouterr().err


def test_v1_config_is_refused_before_any_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recorder = Recorder(create_app(workspace()))
    config = write_config(tmp_path, version="v1")
    assert run(config, recorder, "show") == 2
    assert run(config, recorder, "set", "--frequency", "daily") == 2
    assert recorder.requests == []
    assert "v2" in capsys.readouterr().err


def test_refused_key_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                             no_key_in_output: None) -> None:
    recorder = Recorder(create_app(workspace(), key="another-key-entirely"))
    assert run(write_config(tmp_path), recorder, "show") == 3


def test_missing_key_variable_exits_2_without_a_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("SITEGEN_API_KEY")
    recorder = Recorder(create_app(workspace()))
    assert run(write_config(tmp_path), recorder, "show") == 2
    assert "SITEGEN_API_KEY" in capsys.readouterr().err
    assert recorder.requests == []


# --- set: validation before any request ---------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--subject", "x" * 181], "--subject"),
        (["--subject", ""], "--subject"),
        (["--sender-name", ""], "--sender-name"),
        (["--sender-name", "n" * 121], "--sender-name"),
        (["--preview-text", "p" * 281], "--preview-text"),
        (["--reply-to", "not-an-address"], "--reply-to"),
        (["--reply-to", "a" * 190 + "@example.com"], "--reply-to"),
        (["--subject", "two\nlines"], "--subject"),
    ],
)
def test_out_of_bounds_flags_send_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], flag: str
) -> None:
    recorder = Recorder(create_app(workspace()))
    assert run(write_config(tmp_path), recorder, "set", *argv) == 2
    assert recorder.requests == []
    err = capsys.readouterr().err.strip().splitlines()
    assert any(line.startswith(f"error: {flag}: ") for line in err), err
    assert "nothing was sent" in err[-1]


def test_every_bad_flag_gets_its_own_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recorder = Recorder(create_app(workspace()))
    code = run(write_config(tmp_path), recorder, "set", "--subject", "s" * 200,
               "--reply-to", "nobody", "--preview-text", "fine", "--sender-name", "")
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert [line.split(":", 2)[1].strip() for line in err[:-1]] == [
        "--subject", "--sender-name", "--reply-to"]
    assert "at most 180 characters (got 200)" in err[0]
    assert "(--subject, --sender-name, --reply-to)" in err[-1]
    assert recorder.requests == []


def test_bad_choice_through_the_cli_is_exit_2_without_a_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The config points at a closed loopback port: any request would end in exit 5.
    config = write_config(tmp_path, retry_budget=0.0, max_retries=0)
    text = config.read_text(encoding="utf-8").replace("http://emulator.test", "http://127.0.0.1:9")
    config.write_text(text, encoding="utf-8")
    assert main(["digest", "set", "-c", str(config), "--frequency", "hourly"]) == 2
    assert main(["digest", "set", "-c", str(config), "--subject", "x" * 181]) == 2
    assert main(["digest", "set", "-c", str(config)]) == 2
    assert "nothing to change" in capsys.readouterr().err


@settings(max_examples=60, deadline=None)
@given(subject=st.text(max_size=200))
def test_subject_bounds_match_the_reference(subject: str) -> None:
    acceptable = 1 <= len(subject) <= 180 and all(
        ch.isprintable() or ch == " " for ch in subject)
    try:
        check_changes({"subject": subject})
    except ConfigError:
        accepted = False
    else:
        accepted = True
    if accepted:
        assert 1 <= len(subject) <= 180
    if acceptable:
        assert accepted


# --- set: merge, PUT, print --------------------------------------------------------------


def test_set_merges_the_flags_into_the_current_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_key_in_output: None
) -> None:
    app = create_app(workspace())
    recorder = Recorder(app)
    code = run(write_config(tmp_path), recorder, "set", "--frequency", "daily",
               "--subject", "Today at Acme", "--enabled", "false")
    assert code == 0
    assert recorder.methods() == ["GET", "PUT"]
    sent = json.loads(recorder.requests[1].content)
    assert sent == {"enabled": False, "frequency": "daily", "subject": "Today at Acme",
                    "previewText": "Five new notes", "senderName": "Acme Notes",
                    "replyTo": "editor@acme.org"}
    assert recorder.requests[1].headers["content-type"] == "application/json"
    stored = app.state.emulator.digest
    assert (stored["frequency"], stored["enabled"], stored["senderName"]) == (
        "daily", False, "Acme Notes")
    out = capsys.readouterr().out
    assert "frequency:" in out and "daily" in out and "Today at Acme" in out
    assert run(write_config(tmp_path), Recorder(app), "show") == 0
    assert "Today at Acme" in capsys.readouterr().out


def test_set_with_unchanged_values_makes_no_put(tmp_path: Path) -> None:
    recorder = Recorder(create_app(workspace()))
    assert run(write_config(tmp_path), recorder, "set", "--frequency", "weekly") == 0
    assert recorder.methods() == ["GET"]


def test_first_settings_need_the_required_fields(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = create_app(workspace(digest=None))
    recorder = Recorder(app)
    assert run(write_config(tmp_path), recorder, "set", "--frequency", "daily") == 2
    assert "PUT" not in recorder.methods()
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--subject" in err and "--sender-name" in err and "--enabled" in err
    code = run(write_config(tmp_path), recorder, "set", "--frequency", "daily",
               "--enabled", "true", "--subject", "Daily notes", "--sender-name", "Acme")
    assert code == 0
    assert app.state.emulator.digest["subject"] == "Daily notes"


def test_a_current_value_outside_the_bounds_names_the_flag_to_fix(tmp_path: Path) -> None:
    broken = {**DIGEST, "replyTo": "not an address"}
    recorder = Recorder(create_app(workspace(digest=broken)))
    setup_logging(0)
    with pytest.raises(ConfigError, match="--reply-to"):
        digest_command(options(write_config(tmp_path), "set", "--frequency", "daily"),
                       transport=recorder)
    assert recorder.methods() == ["GET"]


def test_merge_keeps_what_the_flags_do_not_touch() -> None:
    current = DigestSettings.model_validate(DIGEST)
    body = merge(current, {"previewText": ""})
    assert body.previewText == "" and body.subject == DIGEST["subject"]
    assert body.replyTo == DIGEST["replyTo"] and body.enabled is True


# --- set: the server's refusals ------------------------------------------------------------


def _put_answer(status: int, body: dict[str, str]) -> Callable[[httpx.Request],
                                                                httpx.Response | None]:
    def answer(request: httpx.Request) -> httpx.Response | None:
        if request.method == "PUT":
            return httpx.Response(status, json=body)
        return None
    return answer


def test_server_400_is_surfaced_with_its_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_key_in_output: None
) -> None:
    recorder = Recorder(create_app(workspace()), _put_answer(
        400, {"error": "Invalid request body", "details": "subject: too spicy"}))
    assert run(write_config(tmp_path), recorder, "set", "--subject", "Hot") == 1
    assert recorder.methods() == ["GET", "PUT"]
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "HTTP 400" in last and "subject: too spicy" in last


def test_server_500_is_surfaced_with_its_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_key_in_output: None
) -> None:
    recorder = Recorder(create_app(workspace()), _put_answer(
        500, {"error": "Failed to update digest settings"}))
    config = write_config(tmp_path, max_retries=1, retry_budget=5.0)
    assert run(config, recorder, "set", "--subject", "Hot") == 1
    assert recorder.methods().count("PUT") == 2  # one retry: a PUT is idempotent
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "HTTP 500" in last and "Failed to update digest settings" in last
    assert "digest show" in last


def test_connection_failure_stays_exit_5(tmp_path: Path) -> None:
    config = write_config(tmp_path, max_retries=0, retry_budget=1.0)
    text = config.read_text(encoding="utf-8").replace("http://emulator.test", "http://127.0.0.1:9")
    config.write_text(text, encoding="utf-8")
    assert main(["digest", "show", "-c", str(config)]) == 5


def test_show_digest_is_usable_as_a_library() -> None:
    config = parse_config({"site": {"title": "T", "url": "https://t.test/"},
                           "api": {"url": "http://emulator.test", "workspace": WS}}, Path("."))
    settings_ = asyncio.run(show_digest(config, transport=Recorder(create_app(workspace()))))
    assert settings_.frequency == "weekly" and settings_.enabled is True


def test_service_text_with_control_characters_does_not_block_other_changes(
    tmp_path: Path
) -> None:
    stored = {**DIGEST, "previewText": "Line one\nLine two"}
    app = create_app(workspace(digest=stored))
    recorder = Recorder(app)
    assert run(write_config(tmp_path), recorder, "set", "--frequency", "monthly") == 0
    assert json.loads(recorder.requests[-1].content)["previewText"] == "Line one\nLine two"
    assert app.state.emulator.digest["frequency"] == "monthly"
