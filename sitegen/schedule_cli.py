"""`sitegen schedule`: the CI cron proposed from the agents' schedules, and why.

Role: read the agents the last sync stored (no API call; `--demo`: the bundled demo workspace
through the built-in emulator, as `fetch --demo` syncs it), the workspace's size and quota, and
print the cron `sitegen.schedule.propose` chose, then why, one line each. The owner copies the
cron into `[api] schedule` and the CI workflow; `sitegen init` in a site folder whose store
holds agents writes the workflow with it (`stored_proposal`). It must never write site.toml
or the CI file itself, and never print a key.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from sitegen.config import Config, resolve_config
from sitegen.errors import CacheError
from sitegen.logs import is_quiet, say
from sitegen.quota import plan_quota, steady_calls
from sitegen.schedule import Proposal, propose
from sitegen.workspace import Workspace


def _stored(config: Config, demo: bool) -> Workspace:
    """The workspace whose agents set the schedule: the store's (the demo's: synced now)."""
    from sitegen.fetch.stored import load_workspace, open_config_store, peek_config_store

    if demo:
        from sitegen.emulator.demo import demo_transport
        from sitegen.fetch.sync import DEMO_KEY, sync

        with open_config_store(config) as opened:
            return sync(config, opened, key=DEMO_KEY, transport=demo_transport()).workspace
    store = peek_config_store(config)
    workspace = load_workspace(store) if store is not None else None
    if store is not None:
        store.close()
    if workspace is None:
        raise CacheError(f"the content store {config.cache_path} holds no agents yet: run "
                         "`sitegen fetch` (or a build) first; the schedule is read from them")
    return workspace


def proposal_for(config: Config, workspace: Workspace) -> Proposal:
    """The cron for *workspace*'s agents, checked against its quota (`[api] monthly_quota`,
    else its plan's)."""
    def count(items: Sequence[object] | None) -> int | None:
        return None if items is None else len(items)

    calls = steady_calls(version=workspace.api_version, agents=len(workspace.agents or []),
                         clusters=count(workspace.clusters), authors=count(workspace.authors),
                         social_posts=count(workspace.social_posts))
    quota = config.api.monthly_quota
    if quota is None:
        quota = plan_quota(workspace.info.plan)
    return propose(workspace.agents or [], calls, quota)


def schedule_command(options: argparse.Namespace) -> int:
    """`sitegen schedule [-c site.toml] [--demo]`."""
    demo = bool(getattr(options, "demo", False))
    config = resolve_config(options.config, demo)
    proposal = proposal_for(config, _stored(config, demo))
    quiet = is_quiet(options)
    print(f"proposed CI schedule: '{proposal.cron}' (UTC)")
    for line in proposal.why:
        say(f"  {line}", quiet)
    if proposal.cron != config.api.schedule:
        say(f"  to use it: schedule = \"{proposal.cron}\" under [api] in site.toml, and the "
            "same cron in the CI workflow (now "
            f"'{config.api.schedule}')", quiet)
    return 0


def stored_proposal(site_toml: Path) -> Proposal | None:
    """For `sitegen init` in a site folder: the cron its stored agents' schedules give, or
    None (no site.toml, no store, no agent with a schedule: the usual schedule stands)."""
    from sitegen.config import load_config
    from sitegen.errors import SitegenError
    from sitegen.fetch.stored import load_workspace, peek_config_store

    if not site_toml.is_file():
        return None
    try:
        config = load_config(site_toml)
        store = peek_config_store(config)
        if store is None:
            return None
        try:
            workspace = load_workspace(store)
        finally:
            store.close()
    except SitegenError:
        return None
    if workspace is None or not any((agent.schedule or "").strip()
                                    for agent in workspace.agents or []):
        return None
    return proposal_for(config, workspace)
