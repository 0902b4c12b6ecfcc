"""Quota budgeting: cron parsing, builds per month, projections against the plan."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitegen.config import load_config
from sitegen.errors import ConfigError
from sitegen.quota import CronError, parse_schedule, plan_quota, project


@pytest.mark.parametrize(("schedule", "runs"), [
    ("0 6 * * *", 30.44),          # daily
    ("0 */6 * * *", 121.75),       # four times a day
    ("*/15 * * * *", 2922.0),      # every quarter hour
    ("0 6 * * 1", 4.35),           # Mondays
    ("0 6 * * mon-fri", 21.77),    # weekdays, by name
    ("0 0 1 * *", 1.0),            # first of the month
    ("0 0 1 1,7 *", 2 / 12),       # twice a year
    ("0 6 1 * 1", 5.17),           # cron's OR rule: the 1st or any Monday
    ("0 6 * * 7", 4.33),           # 7 is Sunday too
])
def test_runs_per_month(schedule: str, runs: float) -> None:
    assert parse_schedule(schedule).runs_per_month() == pytest.approx(runs, abs=0.01)


@pytest.mark.parametrize("schedule", ["", "0 6 * *", "61 * * * *", "0 6 * * 8", "x * * * *",
                                      "0 6 5-1 * *", "*/0 * * * *"])
def test_bad_schedules_are_refused(schedule: str) -> None:
    with pytest.raises(CronError):
        parse_schedule(schedule)


def test_plan_quotas() -> None:
    assert plan_quota("Pro") == 10_000
    assert plan_quota("free") == 0
    assert plan_quota("Enterprise") is None
    assert plan_quota("Agency") is None
    assert plan_quota(None) is None


def test_projection_over_budget() -> None:
    daily = project(29, "0 6 * * *", 10_000)
    assert daily.monthly == 883
    assert not daily.over_budget
    hourly = project(29, "0 * * * *", 10_000)
    assert hourly.monthly == round(29 * 730.5)
    assert hourly.over_budget
    assert project(29, "0 * * * *", None).over_budget is False


def test_config_refuses_a_bad_schedule(tmp_path: Path) -> None:
    path = tmp_path / "site.toml"
    path.write_text('[site]\ntitle = "T"\nurl = "https://t.test"\n[api]\n'
                    'url = "https://a.test"\nworkspace = "65f0c0ffee0123456789abcd"\n'
                    'schedule = "every day"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[api\] schedule must be a cron schedule"):
        load_config(path)


def _config(tmp_path: Path, **api: object) -> object:
    from sitegen.config import DEMO_API_URL, DEMO_WORKSPACE_ID, parse_config

    return parse_config({"site": {"title": "Budget", "url": "https://b.test/"},
                         "api": {"url": DEMO_API_URL, "workspace": DEMO_WORKSPACE_ID, **api}},
                        tmp_path)


def test_build_reports_the_monthly_projection(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """(The emulator in this process, reached with a key as the service would be: not
    `--demo`, whose requests cost no quota and are never projected.)"""
    from sitegen.build import BuildOptions, run_build
    from sitegen.emulator.demo import demo_transport

    monkeypatch.setenv("SITEGEN_API_KEY", "a-key")
    config = _config(tmp_path, schedule="0 6 * * *", monthly_quota=10_000)
    report = run_build(config, BuildOptions(  # type: ignore[arg-type]
        output=tmp_path / "out", transport=demo_transport()))
    calls = report.api["total"]
    monthly = report.api["monthly"]
    # A cold first build reads every article: the projection is of the ordinary day instead,
    # a build with one new article: the calls of a re-sync that finds nothing new (workspace,
    # digest, one page per listing) and its detail (the demo's records name their owners).
    steady = monthly["per_build_unchanged"]
    assert 0 < steady < calls / 4 and monthly["per_build"] == steady + 1
    assert monthly["basis"].startswith("the workspace's size")
    assert {k: monthly[k] for k in ("runs_per_month", "projected", "quota",
                                    "projected_unchanged")} == {
        "runs_per_month": 30.44, "projected": round((steady + 1) * 30.4375), "quota": 10_000,
        "projected_unchanged": round(steady * 30.4375)}
    assert (f"~{round((steady + 1) * 30.4375)}/month at the schedule "
            f"(~{round(steady * 30.4375)} if nothing is new)") in report.summary()
    # The next build finds nothing new: its own calls are the steady state, as estimated.
    again = run_build(config, BuildOptions(  # type: ignore[arg-type]
        output=tmp_path / "out", transport=demo_transport()))
    assert again.api["monthly"]["basis"].startswith("this build")
    assert again.api["monthly"]["per_build_unchanged"] == again.api["total"] == steady
    assert again.api["monthly"]["per_build"] == steady + 1


def test_the_projection_counts_the_owner_pages_of_a_new_article(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Article records without their cluster and author identity: a new article costs one
    page of every owner's listing, and the projection of a build with changes says so."""
    import httpx

    from sitegen.build import BuildOptions, run_build
    from sitegen.emulator.app import create_app
    from sitegen.emulator.demo import load_demo
    from sitegen.emulator.faults import Faults

    monkeypatch.setenv("SITEGEN_API_KEY", "a-key")  # (the emulator as the service: not --demo)
    data = load_demo()
    config = _config(tmp_path, schedule="0 6 * * *", monthly_quota=10_000)
    app = create_app(data, faults=Faults(no_owner_fields=True))
    run_build(config, BuildOptions(  # type: ignore[arg-type]
        output=tmp_path / "out", transport=httpx.ASGITransport(app=app)))
    again = run_build(config, BuildOptions(  # type: ignore[arg-type]
        output=tmp_path / "out", transport=httpx.ASGITransport(app=app)))
    monthly, owners = again.api["monthly"], len(data["clusters"]) + len(data["authorIdentities"])
    assert monthly["per_build_unchanged"] == again.api["total"]
    assert monthly["per_build"] == again.api["total"] + 1 + owners
    assert monthly["projected"] == round(monthly["per_build"] * 30.4375)


def test_the_demo_makes_no_call_to_a_quota_and_projects_none(tmp_path: Path) -> None:
    """`--demo` asks the built-in emulator (no network): before, "29 calls … ~213/month"."""
    from sitegen.build import BuildOptions, run_build

    config = _config(tmp_path, schedule="0 6 * * *", monthly_quota=10_000)
    report = run_build(config, BuildOptions(  # type: ignore[arg-type]
        output=tmp_path / "out", demo=True))
    assert report.api["demo"] is True and report.api["total"] > 0
    assert "monthly" not in report.api
    summary = report.summary()
    assert "API: no call to a quota (the demo's content: " in summary
    assert "/month" not in summary


def test_steady_calls_from_the_workspace_size() -> None:
    from sitegen.quota import changed_calls, refreshes_per_month, steady_calls

    assert steady_calls(version="v2", agents=3, clusters=4, authors=2, social_posts=0) == 7
    assert steady_calls(version="v2", agents=250, clusters=None, authors=None,
                        social_posts=None) == 6
    assert steady_calls(version="v1", agents=3, clusters=None, authors=None,
                        social_posts=None) == 2
    assert changed_calls(7, version="v2", owner_pages=0) == 8
    assert changed_calls(7, version="v2", owner_pages=192) == 200
    assert changed_calls(2, version="v1", owner_pages=192) == 3
    assert refreshes_per_month(10) == 1008
    assert refreshes_per_month(0) == 0


def test_a_projection_over_the_quota_warns_and_fails_strict(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sitegen.build import BuildOptions, run_build
    from sitegen.emulator.demo import demo_transport
    from sitegen.errors import StrictError

    monkeypatch.setenv("SITEGEN_API_KEY", "a-key")  # (the emulator as the service: not --demo)
    config = _config(tmp_path, schedule="*/5 * * * *", monthly_quota=1000)  # 8,766 builds
    with pytest.raises(StrictError):
        run_build(config, BuildOptions(  # type: ignore[arg-type]
            output=tmp_path / "out", strict=True, transport=demo_transport()))
    assert any("over the monthly quota of 1000" in r.getMessage() for r in caplog.records)
    assert not (tmp_path / "out").exists()


def test_serve_refreshes_only_when_asked_and_says_what_it_costs(tmp_path: Path) -> None:
    from sitegen.budget import refresh_cost
    from sitegen.cli import build_parser

    assert build_parser().parse_args(["serve"]).refresh_every == 0  # off unless asked for
    config = _config(tmp_path, schedule="0 6 * * *", monthly_quota=10_000)
    line = refresh_cost(config, 10, {"agents": 3, "clusters": 4, "authors": 2,  # type: ignore[arg-type]
                                     "social_posts": 0})
    # 7 calls a refresh, 1,008 refreshes in a working month; 213 for the daily builds.
    assert line == ("background refresh every 10 min: about 7 API calls each, ~7056 a month "
                    "if serve runs 8 hours every working day; with the scheduled builds "
                    "(~213) that is ~7269 a month of the monthly quota of 10000")
