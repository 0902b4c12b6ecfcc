"""Quota budgeting: how many API calls a schedule of builds spends in a month.

Role: pure arithmetic for `sitegen build` and `sitegen fetch --dry-run`: parse
the five-field cron expression of `[api] schedule`, count how many builds it
starts in an average month, project this build's calls over that month, and
compare the projection with the monthly quota (`[api] monthly_quota`, else the
workspace plan's quota where the service names the plan). It must never do I/O,
read the clock or log; the caller decides what to say.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import date, timedelta

_NAMES = {
    3: {name.lower(): number for number, name in enumerate(calendar.month_abbr) if name},
    4: {"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6},
}
_RANGES = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))
_FIELD_NAMES = ("minute", "hour", "day of month", "month", "day of week")

# Monthly API calls per plan, from the v1 reference's Limits table (None: unlimited).
PLAN_QUOTAS: dict[str, int | None] = {"free": 0, "starter": 0, "pro": 10_000,
                                      "enterprise": None}


class CronError(ValueError):
    """A schedule that is not a five-field cron expression sitegen understands."""


def _value(text: str, index: int) -> int:
    names = _NAMES.get(index, {})
    if text.lower() in names:
        return names[text.lower()]
    if not text.isdigit():
        raise CronError(f"{_FIELD_NAMES[index]} field has {text!r}, not a number")
    return int(text)


def _field(text: str, index: int) -> frozenset[int]:
    low, high = _RANGES[index]
    values: set[int] = set()
    for part in text.split(","):
        body, _, step_text = part.partition("/")
        step = _value(step_text, index) if step_text else 1
        if step < 1:
            raise CronError(f"{_FIELD_NAMES[index]} field has a step of 0")
        if body == "*":
            start, end = low, high
        elif "-" in body:
            first, _, last = body.partition("-")
            start, end = _value(first, index), _value(last, index)
        else:
            start = _value(body, index)
            end = high if step_text else start
        if not (low <= start <= high and low <= end <= high) or start > end:
            raise CronError(f"{_FIELD_NAMES[index]} field {part!r} is outside {low}-{high}")
        values.update(range(start, end + 1, step))
    if index == 4 and 7 in values:
        values = (values - {7}) | {0}
    return frozenset(values)


@dataclass(frozen=True)
class Schedule:
    """A parsed cron schedule."""

    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    day_restricted: bool
    weekday_restricted: bool

    def runs_on(self, day: date) -> bool:
        """Whether the schedule fires on *day* (cron's OR rule when both day fields are set)."""
        if day.month not in self.months:
            return False
        by_day = day.day in self.days
        by_weekday = (day.isoweekday() % 7) in self.weekdays
        if self.day_restricted and self.weekday_restricted:
            return by_day or by_weekday
        return by_day and by_weekday

    def runs_per_month(self) -> float:
        """Average builds a month, counted over the four years from 2024 (leap year included)."""
        start = date(2024, 1, 1)
        days = sum(1 for offset in range(1461) if self.runs_on(start + timedelta(days=offset)))
        return days * len(self.minutes) * len(self.hours) / 48


def parse_schedule(text: str) -> Schedule:
    """Parse a five-field cron expression; CronError says which field is wrong."""
    fields = text.split()
    if len(fields) != 5:
        raise CronError(f"expected 5 fields (minute hour day month weekday), got {len(fields)}")
    minutes, hours, days, months, weekdays = (
        _field(part, index) for index, part in enumerate(fields))
    return Schedule(minutes, hours, days, months, weekdays,
                    day_restricted=fields[2] != "*", weekday_restricted=fields[4] != "*")


def plan_quota(plan: str | None) -> int | None:
    """The monthly call quota of a named plan; None when unlimited or unknown."""
    if not plan:
        return None
    return PLAN_QUOTAS.get(plan.strip().lower())


@dataclass(frozen=True)
class Projection:
    """This build's calls, projected over a month of scheduled builds."""

    calls: int
    runs_per_month: float
    quota: int | None

    @property
    def monthly(self) -> int:
        return round(self.calls * self.runs_per_month)

    @property
    def over_budget(self) -> bool:
        return self.quota is not None and self.monthly > self.quota

    def to_report(self) -> dict[str, float | int | None]:
        return {"runs_per_month": round(self.runs_per_month, 2), "projected": self.monthly,
                "quota": self.quota}


def project(calls: int, schedule: str, quota: int | None) -> Projection:
    """Project *calls* per build over the builds *schedule* starts in a month."""
    return Projection(calls=calls, runs_per_month=parse_schedule(schedule).runs_per_month(),
                      quota=quota)


#: Items per page of the v2 list endpoints (`sitegen.fetch.paging.PAGE_LIMIT`).
LIST_PAGE = 100


def _pages(count: int | None) -> int:
    return 0 if count is None else max(1, -(-count // LIST_PAGE))


def steady_calls(*, version: str | None, agents: int, clusters: int | None,
                 authors: int | None, social_posts: int | None) -> int:
    """The API calls of a re-sync that finds nothing new, from the workspace's size.

    v2: the workspace, its digest, one page each of the articles, clusters and author
    identities updated since the last sync (the listing of the newest ones proves nothing
    else changed), and every page of the agent and social post listings. v1: the workspace call
    (after the v2 probe that answers 404 under `auto`). Retries and changed articles'
    detail requests come on top; a cold first build, which reads every article, is no
    guide to the months after it.
    """
    if version == "v1":
        return 2
    owners = sum(0 if count is None else 1 for count in (clusters, authors))
    return 3 + _pages(agents) + owners + _pages(social_posts)


def changed_calls(steady: int, *, version: str | None, owner_pages: int) -> int:
    """The API calls of a build with changes, the ordinary day of a workspace whose agents
    publish: the re-sync that finds nothing new (*steady*), one article's detail, and (v2)
    the *owner_pages* a new article costs when the article records do not name its cluster
    and author identity (one page of each owner's listing). A changed article already known
    costs at most one page of each of its two owners instead; several new articles on one day
    share the owner pages.
    """
    return steady + 1 + (0 if version == "v1" else owner_pages)


#: A working month of `sitegen serve`: 8 hours on each of 21 working days, in minutes.
SERVE_MINUTES_PER_MONTH = 8 * 60 * 21


def refreshes_per_month(minutes: float) -> float:
    """Background refreshes of `serve --refresh-every MINUTES` in a working month of serving."""
    return SERVE_MINUTES_PER_MONTH / minutes if minutes > 0 else 0.0
