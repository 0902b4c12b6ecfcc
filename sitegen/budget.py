"""The monthly API budget a build reports: scheduled builds, on a day with changes and without.

Role: turn one sync into the `api.monthly` part of the build report and, when the
projection exceeds the quota, one warning. Two figures per build: a re-sync that finds
nothing new (`sitegen.quota.steady_calls`, or this build's own calls when it was one) and a
build with changes, the ordinary day (`sitegen.quota.changed_calls`: one new article), each
times the builds `[api] schedule` starts in a month; the projection and the quota check use the
build with changes. Never of a cold first build, whose calls are once. The quota is `[api]
monthly_quota`, else the workspace plan's. It must never make a request, and never log a key.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from sitegen.quota import changed_calls, plan_quota, project, steady_calls

if TYPE_CHECKING:
    from sitegen.config import Config
    from sitegen.fetch.sync import SyncResult

log = logging.getLogger("sitegen.build")
#: The calls a drafts preview's refresh adds when no draft changed: the drafts listing.
DRAFT_CALLS = 1


def per_build(synced: SyncResult, calls: int) -> tuple[int, str]:
    """The steady-state calls of one scheduled build, and what they are based on."""
    stats = synced.stats
    if stats.details_made == 0 and int(synced.ledger.retries) == 0:
        return calls, "this build (a re-sync that found nothing new)"
    steady = steady_calls(version=synced.workspace.api_version, agents=stats.agents,
                          clusters=stats.clusters, authors=stats.authors,
                          social_posts=stats.social_posts)
    return steady, "the workspace's size (a re-sync that finds nothing new)"


def api_report(config: Config, synced: SyncResult, *, demo: bool = False) -> dict[str, object]:
    """The report's `api` part for one sync: its calls, and the monthly budget when it made any.

    `--demo`'s requests go to the built-in emulator in this process (no network, no quota):
    they are counted, marked `demo`, and never projected onto a month."""
    report: dict[str, object] = synced.ledger.to_report()
    if demo:
        report["demo"] = True
    elif synced.ledger.total and not synced.from_cache:
        report["monthly"] = monthly_budget(config, synced, synced.ledger.total)
    return report


def monthly_budget(config: Config, synced: SyncResult, calls: int
                   ) -> dict[str, float | int | str | None]:
    """The `api.monthly` report of a build that made *calls*; warns over the quota."""
    quota = config.api.monthly_quota
    if quota is None:
        quota = plan_quota(synced.workspace.info.plan)
    steady, basis = per_build(synced, calls)
    changed = changed_calls(steady, version=synced.workspace.api_version,
                            owner_pages=synced.stats.owner_pages_per_new)
    projection = project(changed, config.api.schedule, quota)
    if projection.over_budget:
        log.warning(
            "a build with a new article makes about %d API calls (%d when nothing is new); "
            "at [api] schedule '%s' (%.0f builds a month) that is about %d calls a month, "
            "over the monthly quota of %d: choose a less frequent [api] schedule (and the "
            "CI's cron), or raise [api] monthly_quota if your plan allows more",
            changed, steady, config.api.schedule, projection.runs_per_month,
            projection.monthly, projection.quota)
    unchanged = project(steady, config.api.schedule, quota)
    return {**projection.to_report(), "per_build": changed,
            "per_build_unchanged": steady, "projected_unchanged": unchanged.monthly,
            "basis": basis}


def refresh_cost(config: Config, minutes: float, workspace_counts: dict[str, int | None] | None,
                 *, drafts: bool = False) -> str:
    """What `serve --refresh-every MINUTES` spends, counted with the scheduled builds.

    *workspace_counts* are the cached workspace's sizes (None: no cache yet, so the
    smallest v2 re-sync is assumed); *drafts* (`serve --drafts`) adds each refresh's drafts
    listing (`DRAFT_CALLS`; a changed draft's body is one more). One sentence, for serve to
    print when it starts.
    """
    from sitegen.quota import refreshes_per_month

    counts = workspace_counts or {}
    each = steady_calls(version="v2", agents=counts.get("agents") or 0,
                        clusters=counts.get("clusters"), authors=counts.get("authors"),
                        social_posts=counts.get("social_posts"))
    runs = refreshes_per_month(minutes)
    scheduled = project(each, config.api.schedule, config.api.monthly_quota)  # (no drafts)
    if drafts:
        each += DRAFT_CALLS
    refreshes = round(each * runs)
    total = refreshes + scheduled.monthly
    quota = config.api.monthly_quota
    of_quota = f" of the monthly quota of {quota}" if quota is not None else ""
    listing = " (the drafts listing included)" if drafts else ""
    return (f"background refresh every {minutes:g} min: about {each} API calls each{listing}, "
            f"~{refreshes} a month if serve runs 8 hours every working day; with the "
            f"scheduled builds (~{scheduled.monthly}) that is ~{total} a month{of_quota}")
