"""The drafts of `sitegen serve --drafts`: the workspace's draft articles, with their bodies.

Role: list the workspace's articles of status `draft` through the API version the sync chose
(v2: `GET /workspaces/{id}/articles?status=draft`; v1: `GET /articles?status=draft`), and ask
one detail per draft that is new, or whose `updatedAt` changed, since this preview's last
drafts fetch (a listing that carries bodies needs none). The requests go through the sync's
client and call ledger, so they are counted, retried and budgeted like every other. The drafts
live in memory for one preview session (`DraftFetcher`). This module must never touch the
store (a draft is never saved, nor anything derived from one), never take a failed answer for
"no drafts", and never log or raise anything holding the key.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from sitegen.fetch.ledger import CallLedger
from sitegen.fetch.records import Article
from sitegen.fetch.sync import api_client, read_detail, run_async
from sitegen.workspace import ApiVersion

if TYPE_CHECKING:
    import httpx

    from sitegen.config import Config

log = logging.getLogger("sitegen.fetch")

DRAFT = "draft"
#: The draft listing's order: stable while it is walked.
_ORDER = {"sortBy": "createdAt", "sortOrder": "asc"}


def _drafts_only(articles: list[Article]) -> list[Article]:
    """The drafts of a listing filtered by status (a missing status is the filter's)."""
    for article in articles:
        if article.status is None:
            article.status = DRAFT
    return [article for article in articles if (article.status or "").lower() == DRAFT]


class DraftFetcher:
    """The drafts of one preview session: each fetch lists them and asks only for the
    bodies of the drafts that are new or changed since the previous fetch."""

    def __init__(self) -> None:
        self._known: dict[str, Article] = {}
        self.last: CallLedger | None = None  #: the ledger of the last fetch (with the sync's)
        self.bodies = 0  #: the detail requests of the last fetch

    def fetch(self, config: Config, version: ApiVersion, *, key: str,
              transport: httpx.AsyncBaseTransport | None = None,
              ledger: CallLedger | None = None) -> list[Article]:
        """The workspace's drafts now, through *version*; requests are added to *ledger*
        (a new one when None). An API failure propagates (an `ApiError`), the drafts kept."""
        ledger = ledger if ledger is not None else CallLedger(version=version)
        before = ledger.total
        drafts = run_async(self._fetch(config, version, key, transport, ledger))
        self._known = {article.id: article for article in drafts}
        self.last = ledger
        calls = ledger.total - before
        log.info("drafts: %d in the workspace, %d bod%s fetched (%d API call%s)", len(drafts),
                 self.bodies, "y" if self.bodies == 1 else "ies", calls, "" if calls == 1 else "s")
        return drafts

    def _plan(self, listed: list[Article]) -> tuple[list[Article | None], list[Article]]:
        """Each listed draft as known now (None: its detail is needed), and those needed:
        a body in the listing, or the one of the last fetch at the same `updatedAt`."""
        known: list[Article | None] = []
        needed: list[Article] = []
        for article in listed:
            old = self._known.get(article.id)
            if article.has_body:
                known.append(article)
            elif (old is not None and article.updatedAt is not None
                  and old.updatedAt == article.updatedAt):
                known.append(old)
            else:
                known.append(None)
                needed.append(article)
        return known, needed

    async def _fetch(self, config: Config, version: ApiVersion, key: str,
                     transport: httpx.AsyncBaseTransport | None, ledger: CallLedger
                     ) -> list[Article]:
        from sitegen.fetch import v1, v2
        from sitegen.fetch.paging import gather_all, paginate, parse_records

        workspace_id = config.api.workspace
        if version == "v2":
            path, keys, reader = f"/workspaces/{workspace_id}/articles", ("articles",), \
                v2.read_article
        else:
            path, keys, reader = "/articles", ("data",), v1.read_article
        async with api_client(config, key, transport, ledger, None) as client:
            listing = await paginate(client, version, path, keys, {"status": DRAFT, **_ORDER})
            listed = _drafts_only(parse_records(listing.items, Article, "draft article"))
            known, needed = self._plan(listed)
            self.bodies = len(needed)
            fetched = iter(await gather_all(
                read_detail(client, reader, workspace_id, article) for article in needed))
        found = [article if article is not None else next(fetched) for article in known]
        return [article for article in found if article is not None]
