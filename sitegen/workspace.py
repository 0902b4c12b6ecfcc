"""The content snapshot: everything one sync gathered from one workspace.

Role: the contract between the fetch stage and the site model. `fetch.sync`
produces a `Workspace`, the cache stores it as JSON, and `model.build_site`
reads it. It holds records exactly as the API gave them (tolerantly parsed);
articles carry their full body (content / blocks / meta) and their cluster and
author membership, filled in by the sync from the per-cluster and per-author
listings when the article records themselves do not say. A field that is
`None` means "this API version does not have it" (v1: clusters, authors,
social posts), which is different from an empty list. The order of `articles`
carries no meaning (the model orders them). This module must never do
I/O; it only describes the data.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from sitegen.fetch.records import (
    Agent,
    Article,
    AuthorIdentity,
    Cluster,
    DigestSettings,
    SocialPost,
    WorkspaceInfo,
)

ApiVersion = Literal["v1", "v2"]


class Workspace(BaseModel):
    """One consistent snapshot of a workspace's content."""

    model_config = ConfigDict(extra="ignore")

    api_version: ApiVersion
    info: WorkspaceInfo
    agents: list[Agent] = []
    articles: list[Article] = []
    clusters: list[Cluster] | None = None
    authors: list[AuthorIdentity] | None = None
    social_posts: list[SocialPost] | None = None
    digest: DigestSettings | None = None
    #: True when `articles` is exactly what the published-article listing held at the sync
    #: (nothing skipped, cut off or gone missing, every article dated): the next sync may
    #: then read only the articles updated since (see `sitegen.fetch.v2`).
    articles_exact: bool = False
