"""The preview session with a fake builder: what each kind of change rebuilds, and failures."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from sitegen.config import Config, load_config
from sitegen.errors import BuildError, CacheError, UnreachableError
from sitegen.preview.builder import BuildSummary, preview_config
from sitegen.preview.changes import ChangeSet
from sitegen.preview.reload import ReloadChannel, Subscription
from sitegen.preview.session import PreviewSession

from .conftest import drain

SITE_TOML = """
[site]
title = "{title}"
url = "https://example.test/blog/"

[api]
url = "{api}"
workspace = "65f0c0ffee0123456789abcd"

[analytics]
enabled = true
"""


class FakeBuilder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, bool]] = []
        self.firsts: list[bool] = []
        self.fail: list[BaseException] = []

    def __call__(self, config: Config, *, fetch: bool, first: bool = False) -> BuildSummary:
        self.calls.append((config.site.title, fetch))
        self.firsts.append(first)
        if self.fail:
            raise self.fail.pop(0)
        return BuildSummary(written=3, removed=0, seconds=0.01)


def _write(path: Path, title: str = "One", api: str = "https://api.test") -> None:
    path.write_text(SITE_TOML.format(title=title, api=api), encoding="utf-8")


def _names(sub: Subscription) -> list[str]:
    return [event.name for event in drain(sub)]


@pytest.fixture()
def parts(tmp_path: Path) -> tuple[PreviewSession, FakeBuilder, ReloadChannel, Subscription]:
    config_file = tmp_path / "site.toml"
    _write(config_file)
    builder = FakeBuilder()
    channel = ReloadChannel()
    session = PreviewSession(
        load_config=lambda: preview_config(load_config(config_file), "http://127.0.0.1:9/"),
        build=builder, channel=channel, config_file=config_file)
    sub = channel.subscribe()
    sub.get(timeout=1)
    return session, builder, channel, sub


def test_preview_config_points_at_the_server_with_the_beacon_off(tmp_path: Path) -> None:
    _write(tmp_path / "site.toml")
    config = preview_config(load_config(tmp_path / "site.toml"), "http://127.0.0.1:8123/")
    assert config.site.base_url == "http://127.0.0.1:8123"
    assert config.analytics.enabled is False
    assert config.root == tmp_path.resolve()


def test_first_build_fetches_then_template_changes_do_not(
        parts: tuple[PreviewSession, FakeBuilder, ReloadChannel, Subscription],
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    session, builder, _, sub = parts
    session.start()
    caplog.set_level(logging.INFO, logger="sitegen.preview")
    session.apply(ChangeSet(templates=(tmp_path / "templates/base.html",)))
    assert builder.calls == [("One", True), ("One", False)]
    assert _names(sub) == ["reload", "reload"]
    assert "rebuilt 3 pages in 0.01 s (template change)" in caplog.messages


def test_css_change_swaps_stylesheets_unless_a_problem_is_pending(
        parts: tuple[PreviewSession, FakeBuilder, ReloadChannel, Subscription],
        tmp_path: Path) -> None:
    session, builder, _, sub = parts
    css = ChangeSet(static=(tmp_path / "themes/x/static/style.css",))
    session.apply(css)
    assert _names(sub) == ["css"]
    builder.fail.append(BuildError("boom"))
    session.apply(ChangeSet(templates=(tmp_path / "templates/a.html",)))
    session.apply(css)  # the page is stale (the last build failed): reload it whole
    assert _names(sub) == ["problem", "reload"]


def test_config_change_reloads_it_and_an_invalid_one_keeps_the_last_good(
        parts: tuple[PreviewSession, FakeBuilder, ReloadChannel, Subscription],
        tmp_path: Path) -> None:
    session, builder, channel, sub = parts
    config_file = tmp_path / "site.toml"
    _write(config_file, title="Two")
    session.apply(ChangeSet(config=(config_file,)))
    assert session.config.site.title == "Two"
    assert builder.calls[-1] == ("Two", False)  # [api] unchanged: no fetch
    config_file.write_text('[site]\ntitle = "Three"\nurl = \n', encoding="utf-8")
    session.apply(ChangeSet(config=(config_file,)))
    assert session.config.site.title == "Two"
    assert len(builder.calls) == 1
    problem = channel.problem
    assert problem is not None and problem.kind == "config" and problem.line == 3
    assert _names(sub) == ["reload", "problem"]
    _write(config_file, title="Four")
    session.apply(ChangeSet(config=(config_file,)))
    assert channel.problem is None and session.config.site.title == "Four"
    assert session.stats.rebuilds == 2 and session.stats.failed_rebuilds == 1


def test_an_api_change_fetches(parts: tuple[PreviewSession, FakeBuilder, ReloadChannel,
                                            Subscription], tmp_path: Path) -> None:
    session, builder, _, _ = parts
    _write(tmp_path / "site.toml", api="https://other.test")
    session.apply(ChangeSet(config=(tmp_path / "site.toml",)))
    assert builder.calls[-1] == ("One", True)


def test_template_failure_at_start_keeps_serving_and_heals(
        parts: tuple[PreviewSession, FakeBuilder, ReloadChannel, Subscription],
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    session, builder, channel, sub = parts
    builder.fail.append(BuildError(f"template {tmp_path / 'templates/a.html'} line 4 is bad"))
    with caplog.at_level(logging.ERROR, logger="sitegen.preview"):
        session.start()
    assert channel.problem is not None and channel.problem.file == "templates/a.html"
    assert any(m.startswith("templates/a.html:4: ") and "last good build" in m
               for m in caplog.messages)
    session.apply(ChangeSet(templates=(tmp_path / "templates/a.html",)))
    assert channel.problem is None
    assert _names(sub) == ["problem", "reload"]


def test_api_failure_at_start_falls_back_to_the_cache(
        parts: tuple[PreviewSession, FakeBuilder, ReloadChannel, Subscription]) -> None:
    session, builder, channel, sub = parts
    builder.fail.append(UnreachableError("the service is unreachable"))
    session.start()
    assert builder.calls == [("One", True), ("One", False)]
    assert _names(sub) == ["notice", "reload"]


def test_api_failure_at_start_without_cache_is_fatal(
        parts: tuple[PreviewSession, FakeBuilder, ReloadChannel, Subscription]) -> None:
    session, builder, _, _ = parts
    builder.fail.extend([UnreachableError("down"), CacheError("no cache")])
    with pytest.raises(UnreachableError):
        session.start()


def test_refresh_counts_and_a_failed_one_is_a_notice(
        parts: tuple[PreviewSession, FakeBuilder, ReloadChannel, Subscription],
        caplog: pytest.LogCaptureFixture) -> None:
    session, builder, _, sub = parts
    caplog.set_level(logging.INFO, logger="sitegen.preview")
    session.refresh()
    builder.fail.append(UnreachableError("the service is unreachable"))
    session.refresh()
    session.refresh()
    assert [fetch for _, fetch in builder.calls] == [True, True, True]
    assert _names(sub) == ["reload", "notice", "notice", "reload"]
    assert any(m.startswith("content refresh #2 failed") for m in caplog.messages)
    assert "content refresh #3: 3 pages changed in 0.01 s" in caplog.messages
    assert session.stats.line() == (
        "preview stopped: 0 rebuilds, 2 content refreshes (1 failed)")


def test_offline_session_never_fetches(tmp_path: Path) -> None:
    _write(tmp_path / "site.toml")
    builder = FakeBuilder()
    session = PreviewSession(load_config=lambda: load_config(tmp_path / "site.toml"),
                             build=builder, channel=ReloadChannel(),
                             config_file=tmp_path / "site.toml", can_fetch=False)
    session.start()
    session.refresh()
    _write(tmp_path / "site.toml", api="https://other.test")
    session.apply(ChangeSet(config=(tmp_path / "site.toml",)))
    assert builder.calls == [("One", False), ("One", False)]


def test_after_a_build_what_the_preview_holds_is_out_of_the_collector_s_way(
        parts: tuple[PreviewSession, FakeBuilder, ReloadChannel, Subscription]) -> None:
    """A full collection of a large held model fell inside a save → page served: after each
    build the survivors are frozen (and thawed again before the next collection of them)."""
    import gc

    session, _, _, _ = parts
    held = {"model": ["a", "b"]}  # what a builder keeps between builds
    try:
        session.start()
        assert gc.get_freeze_count() > 0
        assert not any(found is held for found in gc.get_objects())  # (frozen ones: not listed)
        gc.unfreeze()
        session.apply(ChangeSet(templates=(Path("templates/base.html"),)))
        assert not any(found is held for found in gc.get_objects())
    finally:
        gc.unfreeze()
