"""What a sync keeps: which listed articles need a body, and the workspace they make.

Role: the sync's decisions, apart from its requests and its store: what an incremental listing
starts from (`known_articles`), which listed articles need a detail request (`plan_bodies`),
which are kept (`kept_articles`), and the workspace the listings make with the stored one
(`merged_workspace`). Pure: it must never make a request, touch the store, or treat a stored
article as deleted unless the listing was complete.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sitegen.fetch.records import BODY_FIELDS, Article
from sitegen.workspace import Workspace

if TYPE_CHECKING:
    from sitegen.fetch.v2 import KnownArticles, Structure

log = logging.getLogger("sitegen.fetch")


@dataclass
class SyncStats:
    """What one sync gathered and spent, for summaries and reports."""

    agents: int = 0
    articles: int = 0
    clusters: int | None = None
    authors: int | None = None
    social_posts: int | None = None
    details_made: int = 0
    details_saved: int = 0
    skipped: int = 0
    removed: int = 0
    #: Owner listing pages a new article would cost (`Structure.owner_pages_per_new`).
    owner_pages_per_new: int = 0

    def count(self, workspace: Workspace) -> None:
        """Take the record counts of *workspace* (None: a kind its API version lacks)."""
        self.agents = len(workspace.agents)
        self.articles = len(workspace.articles)
        self.clusters = None if workspace.clusters is None else len(workspace.clusters)
        self.authors = None if workspace.authors is None else len(workspace.authors)
        self.social_posts = (None if workspace.social_posts is None
                             else len(workspace.social_posts))


def _usable(article: Article) -> bool:
    return any(text and text.strip() for text in (article.title, article.content)) or bool(
        article.blocks)


def known_articles(previous: Workspace | None) -> KnownArticles | None:
    """What an incremental v2 article listing starts from: an exact v2 store, else nothing."""
    if previous is None or previous.api_version != "v2" or not previous.articles_exact:
        return None
    from sitegen.fetch.owners import KnownOwners
    from sitegen.fetch.v2 import KnownArticles

    updated = {a.id: a.updatedAt for a in previous.articles if a.updatedAt is not None}
    if len(updated) != len(previous.articles):
        return None
    owners = {name: KnownOwners({a.id: getattr(a, name) for a in previous.articles}, updated)
              for name in ("clusterId", "authorIdentityId")}
    return KnownArticles(updated, owners, previous.clusters, previous.authors)


def plan_bodies(articles: list[Article], previous: Workspace | None
                ) -> tuple[list[Article | None], list[Article], int]:
    """For each listed article: its final form when known now (None: needs a detail request).

    Returns (known-or-None per article, the articles needing a detail request, bodies saved).
    """
    stored = {a.id: a for a in previous.articles} if previous is not None else {}
    known: list[Article | None] = []
    needed: list[Article] = []
    saved = 0
    for listed in articles:
        if listed.has_body:
            known.append(listed)
            continue
        old = stored.get(listed.id)
        if old is not None and listed.updatedAt is not None and old.updatedAt == listed.updatedAt:
            fresh = {k: getattr(listed, k) for k in listed.model_fields_set - BODY_FIELDS}
            same = all(getattr(old, k) == value for k, value in fresh.items())
            known.append(old if same else old.model_copy(update=fresh))
            saved += 1
            continue
        known.append(None)
        needed.append(listed)
    return known, needed, saved


def kept_articles(found: list[Article], stats: SyncStats) -> list[Article]:
    """The published, usable articles of *found* (the others logged, the unusable counted)."""
    kept: list[Article] = []
    for article in found:
        if article.status not in (None, "published"):
            log.info("article %s is no longer published; it is left out", article.id)
        elif not _usable(article):
            log.warning("skipped article %s: it has neither a title nor a body", article.id)
            stats.skipped += 1
        else:
            kept.append(article)
    return kept


def unlisted(structure: Structure, previous: Workspace | None) -> list[Article]:
    """The stored articles a recent-only listing did not name: they stay as stored."""
    if previous is None or not structure.recent_only:
        return []
    listed = {a.id for a in structure.articles}
    return [a for a in previous.articles if a.id not in listed]


def merged_workspace(structure: Structure, kept: list[Article], previous: Workspace | None,
                     stats: SyncStats, *, exact: bool) -> Workspace:
    """The synced workspace: *kept* (the listed articles) merged with *previous*.

    A recent-only listing keeps every stored article it did not name; an incomplete
    one keeps those it could not list; a digest that could not be read stays as stored.
    Articles come in the order of their ids, as the store gives them back (the order
    carries no meaning: the model sorts them).
    """
    carried = unlisted(structure, previous)
    stats.details_saved += len(carried)
    kept = carried + kept
    digest = structure.digest
    if previous is not None:
        kept_ids = {a.id for a in kept}
        if not structure.articles_complete:
            kept += [a for a in previous.articles if a.id not in kept_ids]
        else:
            stats.removed = sum(1 for a in previous.articles if a.id not in kept_ids)
        if not structure.digest_read:
            digest = previous.digest
    workspace = Workspace(
        api_version=structure.version, info=structure.info, agents=structure.agents,
        articles=sorted(kept, key=lambda a: a.id), clusters=structure.clusters,
        authors=structure.authors, social_posts=structure.social_posts, digest=digest,
        articles_exact=exact and structure.articles_exact)
    stats.count(workspace)
    return workspace

