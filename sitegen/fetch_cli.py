"""`sitegen fetch`: update the content store, or say what that would cost.

Role: resolve the configuration (`-c`, `--demo`), open the content store, run one sync (or, with
`--dry-run`, only its list calls, over the store opened read-only) and print one short summary
on stdout: records per kind, calls made, detail requests saved by the store. Errors are raised
as `SitegenError` for cli.py to report. It must never print a key and never write anything but
the store (through the sync); a dry run writes nothing at all.
"""

from __future__ import annotations

import argparse

from sitegen.config import check_api_url, resolve_config
from sitegen.emulator.demo import demo_transport
from sitegen.fetch.stored import open_config_store, peek_config_store
from sitegen.fetch.sync import DEMO_KEY, SyncPlan, SyncResult, plan_sync, sync
from sitegen.logs import is_quiet, say
from sitegen.progress import Progress


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def summary(result: SyncResult) -> str:
    """The two-line summary of a completed sync."""
    stats, ledger = result.stats, result.ledger
    kinds = [_plural(stats.agents, "agent"), _plural(stats.articles, "published article")]
    for count, word in ((stats.clusters, "cluster"), (stats.authors, "author identity"),
                        (stats.social_posts, "social post")):
        if count is not None:
            kinds.append(_plural(count, word).replace("identitys", "identities"))
    info = result.workspace.info
    name = info.name or info.id
    source = ("from the cache (no request)" if result.from_cache
              else f"through API {result.workspace.api_version}")
    lines = [f"{name}: {', '.join(kinds)} {source}"]
    if not result.from_cache:
        retries = f" ({_plural(ledger.retries, 'retry').replace('retrys', 'retries')})" \
            if ledger.retries else ""
        line = (f"{_plural(ledger.total, 'call')}{retries}; "
                f"{_plural(stats.details_made, 'detail request')} made, "
                f"{stats.details_saved} saved by the cache")
        if stats.removed:
            line += f"; {stats.removed} no longer published"
        if stats.skipped:
            line += f"; {stats.skipped} skipped"
        lines.append(line)
    return "\n".join(lines)


def plan_summary(plan: SyncPlan) -> str:
    """What `--dry-run` prints: the cost of a sync now, and what finding out cost."""
    cache = "the cache" if plan.cached else "no cache yet"
    return (
        f"a sync now would make {_plural(plan.total, 'call')} through API {plan.version}: "
        f"{plan.list_calls} list calls and {_plural(plan.details_needed, 'detail request')} "
        f"({plan.details_saved} unchanged articles served from {cache}, "
        f"{plan.bodies_in_lists} with bodies in the listings)\n"
        f"this dry run spent {_plural(plan.list_calls, 'call')} (the list calls only, no detail "
        "call) and wrote nothing"
    )


def fetch_command(options: argparse.Namespace) -> int:
    """`sitegen fetch [-c site.toml] [--refresh] [--demo] [--dry-run]`."""
    demo = bool(getattr(options, "demo", False))
    config = resolve_config(options.config, demo)
    offline = bool(getattr(options, "offline", False))
    if not demo and not offline:
        check_api_url(config)
    key = DEMO_KEY if demo else (None if offline else config.api_key())
    transport = demo_transport() if demo else None
    if getattr(options, "dry_run", False):
        peeked = peek_config_store(config)
        try:
            print(plan_summary(plan_sync(config, peeked, key=key, transport=transport)))
        finally:
            if peeked is not None:
                peeked.close()
        return 0
    with open_config_store(config) as store:
        result = sync(config, store, key=key, transport=transport,
                      refresh=bool(getattr(options, "refresh", False)),
                      offline=offline,
                      max_calls=getattr(options, "max_calls", None),
                      progress=Progress(enabled=False if is_quiet(options) else None))
    say(summary(result), is_quiet(options))
    return 0
