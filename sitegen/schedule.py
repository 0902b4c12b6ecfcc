"""The CI's rebuild schedule, proposed from the agents' own: rebuild when they publish.

Role: the service's agents carry a cron-style schedule (`Agent.schedule`); `propose` turns the
active agents' schedules into one five-field cron for the CI: each run shifted by `DELAY`
minutes (time for the agent to publish), at most one build an hour (one minute value, the
latest shifted minute of them all, so no build comes before a run it follows), on the
weekdays any agent runs (every day when one runs every day), and checked against the monthly
quota: over it, only the last run of each day is kept. It says what it chose and why, one
line each. Pure: it must never fetch, read files or write anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from sitegen.quota import CronError, parse_schedule

#: Minutes between an agent's run and the rebuild that publishes what it wrote.
DELAY = 30
#: The schedule when no active agent has one (`[api] schedule`'s default).
FALLBACK = "0 6 * * *"


class AgentLike(Protocol):
    """What `propose` reads of an agent record (`sitegen.fetch.records.Agent`)."""

    @property
    def name(self) -> str | None: ...
    @property
    def status(self) -> str | None: ...
    @property
    def isActive(self) -> bool | None: ...  # noqa: N802 (the API's field name)
    @property
    def schedule(self) -> str | None: ...


@dataclass(frozen=True)
class Proposal:
    """The proposed cron, and why (one sentence a line)."""

    cron: str
    why: list[str]
    runs_per_month: float


def _active(agent: AgentLike) -> bool:
    return agent.isActive is not False and (agent.status or "active").lower() == "active"


def _days(weekdays: set[int]) -> str:
    return "*" if len(weekdays) == 7 else ",".join(str(day) for day in sorted(weekdays))


def _cron(minute: int, hours: set[int], weekdays: set[int]) -> str:
    return f"{minute} {','.join(str(hour) for hour in sorted(hours))} * * {_days(weekdays)}"


@dataclass
class _Runs:
    """The times the rebuilds follow, gathered agent by agent (`_gather`)."""

    minutes: set[int] = field(default_factory=set)
    hours: set[int] = field(default_factory=set)
    weekdays: set[int] = field(default_factory=set)
    named: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def follow(self, name: str, schedule: str) -> None:
        """Each run of *schedule* (agent *name*'s), DELAY minutes later, the day after when
        that passes midnight; a schedule that does not parse is noted, not followed."""
        try:
            parsed = parse_schedule(schedule)
        except CronError:
            self.skipped.append(f"{name} ({schedule!r})")
            return
        days = set(parsed.weekdays) if parsed.weekday_restricted else set(range(7))
        for hour in parsed.hours:
            for minute in parsed.minutes:
                total = hour * 60 + minute + DELAY
                self.hours.add(total // 60 % 24)
                self.minutes.add(total % 60)
                self.weekdays |= days if total < 24 * 60 else {(day + 1) % 7 for day in days}
        self.named.append(f"{name} at '{schedule}'")


def _gather(agents: Sequence[AgentLike]) -> _Runs:
    runs = _Runs()
    for agent in agents:
        if _active(agent) and (agent.schedule or "").strip():
            runs.follow(agent.name or "an agent", str(agent.schedule))
    return runs


def propose(agents: Sequence[AgentLike], calls_per_build: int | None = None,
            quota: int | None = None) -> Proposal:
    """The CI cron for *agents* (see the module docstring); *calls_per_build* and *quota*
    (None: unknown, unlimited) check the monthly projection."""
    gathered = _gather(agents)
    minutes, hours, weekdays = gathered.minutes, gathered.hours, gathered.weekdays
    named, skipped = gathered.named, gathered.skipped
    if not named:
        why = ["no active agent has a schedule the CI can follow, so the site rebuilds daily "
               "at 06:00 UTC"]
        if skipped:
            why.append("schedules not understood: " + ", ".join(skipped))
        return Proposal(FALLBACK, why, parse_schedule(FALLBACK).runs_per_month())
    cron = _cron(max(minutes), hours, weekdays)
    why = [f"the active agents run {'; '.join(named)} (UTC)",
           f"each rebuild comes {DELAY} minutes or more after a run, at most one an hour: "
           f"'{cron}'"]
    if skipped:
        why.append("schedules not understood, left out: " + ", ".join(skipped))
    runs = parse_schedule(cron).runs_per_month()
    if calls_per_build is not None and quota is not None and calls_per_build * runs > quota:
        thinned = _cron(max(minutes), {max(hours)}, weekdays)
        why.append(f"~{round(calls_per_build * runs)} calls a month would exceed the quota of "
                   f"{quota}: one rebuild a day after the last run instead, '{thinned}'")
        cron, runs = thinned, parse_schedule(thinned).runs_per_month()
    if calls_per_build is not None:
        budget = f" of {quota} allowed" if quota is not None else ""
        why.append(f"about {runs:.0f} builds a month, ~{round(calls_per_build * runs)} API "
                   f"calls{budget}")
    return Proposal(cron, why, runs)
