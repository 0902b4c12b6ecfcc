"""The CI's cron from the agents' schedules (`sitegen schedule`, `sitegen init`), on the
emulator's demo workspace: each rebuild shortly after an agent's run, at most hourly, within
the quota (before: a fixed 06:00 whatever the agents did)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from sitegen.build import BuildOptions, run_build
from sitegen.cli import main
from sitegen.config import DEMO_API_URL, DEMO_WORKSPACE_ID, load_config
from sitegen.emulator.demo import demo_transport
from sitegen.quota import parse_schedule
from sitegen.schedule import propose

#: The demo's agents: Wayfarer '0 7 * * 1', Crock & Brine '30 6 * * 3,6', Toolsmith
#: '0 9 * * 2,4' → 30 minutes after each: 7:30 Mon, 7:00 Wed and Sat, 9:30 Tue and Thu.
DEMO_CRON = "30 7,9 * * 1,2,3,4,6"


def test_schedule_demo_proposes_a_cron_after_each_agents_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["schedule", "--demo"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"proposed CI schedule: '{DEMO_CRON}' (UTC)"
    assert "Wayfarer at '0 7 * * 1'" in out[1] and "Toolsmith at '0 9 * * 2,4'" in out[1]
    assert any("builds a month" in line for line in out)


def test_every_run_is_followed_by_a_build_at_most_hourly_and_within_the_quota() -> None:
    def agent(name: str, schedule: str, active: bool = True) -> SimpleNamespace:
        return SimpleNamespace(name=name, status="active" if active else "paused",
                               isActive=active, schedule=schedule)

    agents = [agent("a", "0 7 * * 1"), agent("b", "30 6 * * 3,6"), agent("c", "0 9 * * 2,4"),
              agent("off", "0 1 * * *", active=False)]
    proposal = propose(agents, calls_per_build=7, quota=None)
    parsed = parse_schedule(proposal.cron)
    assert proposal.cron == DEMO_CRON and len(parsed.minutes) == 1  # at most hourly
    assert 1 not in parsed.hours  # the paused agent is ignored
    thinned = propose(agents, calls_per_build=7, quota=200)  # 44 builds × 7 > 200
    assert thinned.cron == "30 9 * * 1,2,3,4,6"
    assert any("exceed the quota of 200" in line for line in thinned.why)
    late = propose([agent("late", "45 23 * * 6")])  # past midnight: the next day
    assert late.cron == "15 0 * * 0"
    assert propose([]).cron == "0 6 * * *"


def test_init_in_a_site_whose_store_holds_agents_writes_their_cron(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "site.toml").write_text(
        f'[site]\ntitle = "T"\nurl = "https://t.test/"\n[api]\nurl = "{DEMO_API_URL}"\n'
        f'workspace = "{DEMO_WORKSPACE_ID}"\n', encoding="utf-8")
    monkeypatch.setenv("SITEGEN_API_KEY", "a-key")
    run_build(load_config(site / "site.toml"),
              BuildOptions(output=site / "_site", transport=demo_transport()))
    capsys.readouterr()
    assert main(["init", str(site)]) == 0
    said = capsys.readouterr().out
    workflow = (site / ".github" / "workflows" / "sitegen.yml").read_text()
    assert f"cron: '{DEMO_CRON}'" in workflow or f'cron: "{DEMO_CRON}"' in workflow, workflow
    assert f"the CI's cron '{DEMO_CRON}' follows the agents' schedules:" in said
