"""Handlers of the emulated Public Read API v1 (`/api/v1`), as its reference describes.

Role: answer GET /agents, /agents/{agentId}, /articles, /articles/{articleId},
/agents/{agentId}/articles and /workspaces/{workspaceId} in the v1 record forms of `forms.py`:
lists are `{data, pagination}` (the per-agent list says `articles`), limit defaults to 10 (50
per agent), capped at 100, sorted by createdAt descending by default. Handlers must never mutate
the state: v1 is read-only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request

from sitegen.emulator import filters, forms, store
from sitegen.emulator.query import ApiProblem, Query, check_id
from sitegen.emulator.state import EmulatorState, Record


def _query(request: Request) -> Query:
    return Query(request.query_params, "v1")


def _agent(request: Request, state: EmulatorState) -> Record:
    agent_id = check_id("agentId", request.path_params["agentId"])
    agent = state.find("agents", agent_id)
    if agent is None:
        raise ApiProblem(404, "Agent not found", f"No agent {agent_id} in this workspace.")
    return agent


async def list_agents(request: Request, state: EmulatorState) -> dict[str, Any]:
    query = _query(request)
    skip, limit = query.page(10)
    field, descending = query.sort(filters.V1_AGENT_SORT, "createdAt")
    page, paging = store.select(state.records("agents"), filters.agent_filters(query),
                                field, descending, skip, limit)
    return {"data": [forms.project(a, forms.AGENT_L) for a in page], "pagination": paging}


async def get_agent(request: Request, state: EmulatorState) -> dict[str, Any]:
    return {"agent": forms.project(_agent(request, state), forms.AGENT_S)}


async def list_articles(request: Request, state: EmulatorState) -> dict[str, Any]:
    query = _query(request)
    skip, limit = query.page(10)
    field, descending = query.sort(filters.V1_ARTICLE_SORT, "createdAt")
    tests = filters.article_filters(query, with_cluster=False)
    page, paging = store.select(state.records("articles"), tests, field, descending, skip, limit)
    return {"data": [forms.project(a, forms.ARTICLE_L) for a in page], "pagination": paging}


async def get_article(request: Request, state: EmulatorState) -> dict[str, Any]:
    article_id = check_id("articleId", request.path_params["articleId"])
    article = state.find("articles", article_id)
    if article is None:
        raise ApiProblem(404, "Article not found", f"No article {article_id} in this workspace.")
    return {"article": forms.project(article, forms.ARTICLE_S)}


async def agent_articles(request: Request, state: EmulatorState) -> dict[str, Any]:
    agent = _agent(request, state)
    query = _query(request)
    skip, limit = query.page(50)
    field, descending = query.sort(filters.V1_AGENT_ARTICLE_SORT, "createdAt",
                                   field_param="sort", order_param="order")
    tests = [store.equals("agentId", agent.get("id"))]
    if (status := query.enum("status", filters.ARTICLE_STATUSES)) is not None:
        tests.append(store.equals("status", status))
    if (slug := query.text("slug")) is not None:
        tests.append(store.equals("slug", slug))
    page, paging = store.select(state.records("articles"), tests, field, descending, skip, limit)
    return {"articles": [forms.project(a, forms.ARTICLE_A) for a in page], "pagination": paging}


async def get_workspace(request: Request, state: EmulatorState) -> dict[str, Any]:
    workspace_id = check_id("workspaceId", request.path_params["workspaceId"])
    if workspace_id != state.workspace_id:
        raise ApiProblem(401, "Unauthorized",
                         "This API key belongs to another workspace than the one requested.")
    published = [a for a in state.records("articles") if a.get("status") == "published"]
    published.sort(key=store.sort_key("createdAt"), reverse=True)
    agents = sorted(state.records("agents"), key=store.sort_key("createdAt"))
    return {
        "workspace": forms.project(state.workspace, forms.WORKSPACE_V1),
        "agents": [
            {**forms.project(agent, forms.AGENT_W),
             "articles": [forms.project(a, forms.ARTICLE_W) for a in published
                          if a.get("agentId") == agent.get("id")]}
            for agent in agents
        ],
    }


ROUTES: list[tuple[str, str, Callable[[Request, EmulatorState], Awaitable[Any]]]] = [
    ("GET", "/agents", list_agents),
    ("GET", "/agents/{agentId}", get_agent),
    ("GET", "/agents/{agentId}/articles", agent_articles),
    ("GET", "/articles", list_articles),
    ("GET", "/articles/{articleId}", get_article),
    ("GET", "/workspaces/{workspaceId}", get_workspace),
]
