"""The live-reload channel: state, fan-out, and the SSE wire format."""

from __future__ import annotations

import json
import queue

import pytest

from sitegen.preview.reload import Event, Problem, ReloadChannel


def _parse(raw: bytes) -> tuple[str, dict[str, object]]:
    lines = raw.decode("ascii").split("\n")
    assert lines[-2:] == ["", ""]
    assert lines[0].startswith("event: ") and lines[1].startswith("data: ")
    return lines[0][7:], json.loads(lines[1][6:])


def test_event_encoding_keeps_newlines_inside_one_data_line() -> None:
    raw = Event("problem", {"message": "line one\nline two\r\n<script>"}).encode()
    name, data = _parse(raw)
    assert name == "problem"
    assert data["message"] == "line one\nline two\r\n<script>"


def test_subscribe_starts_with_hello_and_the_current_state() -> None:
    channel = ReloadChannel()
    channel.failed(Problem("boom", file="templates/a.html", line=3, kind="template"))
    sub = channel.subscribe()
    hello = sub.get(timeout=1)
    assert hello is not None and hello.name == "hello"
    assert hello.data["problem"] == {"kind": "template", "file": "templates/a.html", "line": 3,
                                     "message": "boom"}
    assert hello.data["build"] == channel.build_id


def test_built_clears_the_problem_and_bumps_the_build() -> None:
    channel = ReloadChannel()
    sub = channel.subscribe()
    sub.get(timeout=1)
    before = channel.build_id
    channel.failed(Problem("boom"))
    channel.built()
    channel.built(css_only=True)
    events = [sub.get(timeout=1) for _ in range(3)]
    assert [e.name for e in events if e] == ["problem", "reload", "css"]
    assert channel.problem is None
    assert channel.build_id != before
    last = events[-1]
    assert last is not None and last.data["build"] == channel.build_id


def test_notice_is_sent_only_when_it_changes() -> None:
    channel = ReloadChannel()
    sub = channel.subscribe()
    sub.get(timeout=1)
    channel.notify("API down")
    channel.notify("API down")
    channel.notify(None)
    names = [sub.get(timeout=1) for _ in range(2)]
    assert [e.data["message"] for e in names if e] == ["API down", None]
    with pytest.raises(queue.Empty):
        sub.get(timeout=0.05)


def test_close_ends_every_stream_and_later_ones() -> None:
    channel = ReloadChannel()
    sub = channel.subscribe()
    sub.get(timeout=1)
    channel.close()
    assert sub.get(timeout=1) is None
    late = channel.subscribe()
    assert late.get(timeout=1) is not None  # hello
    assert late.get(timeout=1) is None
    assert channel.subscriber_count == 0


def test_problem_one_line() -> None:
    assert Problem("bad", file="templates/a.html", line=4).one_line() == "templates/a.html:4: bad"
    assert Problem("bad", file="site.toml").one_line() == "site.toml: bad"
    assert Problem("bad").one_line() == "bad"
