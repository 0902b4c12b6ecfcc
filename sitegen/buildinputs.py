"""The recipe's first two stages: the workspace to build (given, or synced) and its model.

Role: for `sitegen.build`, `read_content` gives the workspace (the one a caller handed in,
or the store's after `sitegen.fetch.sync`), what reading it cost the service (the report's
`api`), and the store's content version it is; `model_site` builds the site model from it
with the cyclic garbage collector off. Imported by the recipe only once a build runs (the
no-change stage needs neither). It must never write the output, render, or log a key.
"""

from __future__ import annotations

import gc
from collections.abc import Collection, Sequence

from sitegen import model
from sitegen.budget import api_report
from sitegen.config import Config
from sitegen.fetch.ledger import CallLedger
from sitegen.fetch.sync import DEMO_KEY, sync
from sitegen.model.views import Site
from sitegen.options import BuildOptions
from sitegen.ownpages import PageSource
from sitegen.progress import Progress
from sitegen.report import BuildReport
from sitegen.store import Store
from sitegen.workspace import Workspace


def read_content(config: Config, store: Store, options: BuildOptions, report: BuildReport,
             progress: Progress) -> tuple[Workspace, int | None]:
    """The workspace to build: given, or synced into the store (`sitegen.fetch.sync`); and
    the store's content version it is (None: given, or another process changed the store
    during the sync: a version read before the sync, plus one if it changed the content)."""
    if options.workspace is not None:  # nothing fetched: an empty ledger of its version
        report.api, report.from_cache = CallLedger(
            version=options.workspace.api_version).to_report(), True
        return options.workspace, None
    before = store.content_version()
    synced = sync(config, store, key=DEMO_KEY if options.demo else None,
                  transport=options.service_transport(), refresh=options.refresh,
                  offline=options.offline, max_calls=options.max_calls, progress=progress)
    report.api, report.from_cache = api_report(config, synced, demo=options.demo), \
        synced.from_cache
    after = store.content_version()
    return synced.workspace, after if after == before + synced.changed else None


def model_site(config: Config, workspace: Workspace, own_pages: Sequence[PageSource],
           own_static: Collection[str], options: BuildOptions) -> Site:
    """The site model (`sitegen.model.build_site`), built with the cyclic garbage collector
    off: the stage allocates a graph that lives as long as the build, and the collections
    it set off walked that graph and the whole loaded workspace again and again, a cost that
    grew faster than the site (4,000 → 16,000 articles: the stage took 0.47 → 2.87 s of CPU
    with them, 0.40 → 1.71 s without). Switched back on after it (when it was on)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return model.build_site(config, workspace, own_pages, options.drafts, claimed=own_static)
    finally:
        if collecting:
            gc.enable()
