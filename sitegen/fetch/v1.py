"""Reading a workspace's structure through the v1 read API (the fallback).

Role: one `GET /api/v1/workspaces/{id}` gives the workspace and its agents, each with its
published articles (without bodies; those come from `GET /api/v1/articles/{id}`). v1 has no
clusters, author identities, social posts or digest: those stay `None`, with one warning. It
must never fetch bodies itself, never touch the store, and never take an answer without its
`agents` list for an empty workspace (a failed request: retried, then exit 5).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from sitegen.fetch.answers import UnusableAnswer
from sitegen.fetch.paging import parse_records, unwrap, what_it_said
from sitegen.fetch.records import Agent, Article
from sitegen.fetch.v2 import Structure, workspace_info

if TYPE_CHECKING:
    from sitegen.fetch.client import ApiClient

log = logging.getLogger("sitegen.fetch")

V1_GAPS_WARNING = ("the service answered through the v1 API, which has no clusters, author "
                   "identities or social posts: those pages are left out")


def structure_from_payload(payload: dict[str, Any], workspace_id: str) -> Structure:
    """Turn the v1 workspace response into a `Structure` (pure; warnings for bad records)."""
    info = workspace_info(payload.get("workspace"), workspace_id)
    raw_agents = payload.get("agents")
    if not isinstance(raw_agents, list):
        raw_agents = []
    agents: list[Agent] = []
    articles: list[Article] = []
    seen: set[str] = set()
    for position, raw in enumerate(raw_agents):
        embedded = raw.get("articles") if isinstance(raw, dict) else None
        bare = {k: v for k, v in raw.items() if k != "articles"} if isinstance(raw, dict) else raw
        parsed = parse_records([bare], Agent, "agent", offset=position)
        agent_id = parsed[0].id if parsed else None
        agents.extend(parsed)
        if not isinstance(embedded, list):
            continue
        owner = f"agent {agent_id}" if agent_id else f"agent #{position + 1}"
        for article in parse_records(embedded, Article, f"article of {owner}"):
            if article.id in seen:
                continue
            seen.add(article.id)
            if article.agentId is None:
                article.agentId = agent_id
            if article.status is None:
                article.status = "published"  # v1 embeds only published articles
            if article.status == "published":
                articles.append(article)
    log.warning(V1_GAPS_WARNING)
    return Structure(version="v1", info=info, agents=agents, articles=articles)


def _has_agents(payload: dict[str, Any]) -> None:
    """The `check` of the workspace answer: its `agents` list is there."""
    if not isinstance(payload.get("agents"), list):
        raise UnusableAnswer("a workspace answer without its 'agents' list"
                             f"{what_it_said(payload)}")


async def read_structure(client: ApiClient, workspace_id: str) -> Structure:
    """`GET /api/v1/workspaces/{id}`: workspace, agents and their published articles."""
    payload = await client.get_json("v1", f"/workspaces/{workspace_id}", check=_has_agents)
    return structure_from_payload(payload, workspace_id)


async def read_article(client: ApiClient, workspace_id: str, article_id: str) -> dict[str, Any]:
    """One article with content, blocks and meta (`GET /api/v1/articles/{id}`)."""
    del workspace_id  # v1 scopes by key, not by path
    payload = await client.get_json("v1", f"/articles/{article_id}")
    return unwrap(payload, "article")
