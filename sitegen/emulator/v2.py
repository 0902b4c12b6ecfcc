"""Handlers of the emulated Workspace API v2 (`/api/v2/workspaces/{workspaceId}`).

Role: answer every endpoint of the v2 reference: the workspace `{id, name}`; lists `{<plural>:
[...], pagination}` of agents, articles, clusters, author identities and social posts, and the
per-agent, cluster and author article lists `{articles: [...], pagination}`; single records
`{agent}`, `{article}`, ...; digest GET / PUT and analytics POST. Lists default to limit 20
(1..100, else 400); articles and agents sort by createdAt, the others by updatedAt, descending
by default (the article and order defaults are our assumption). Handlers must never change
records other than the digest and the analytics log. With `Faults.no_owner_fields`, article
records leave out `clusterId` and `authorIdentityId` (the per-owner listings still scope by them).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse

from sitegen.emulator import filters, finitejson, forms, store
from sitegen.emulator.query import ApiProblem, Query, check_id
from sitegen.emulator.state import EmulatorState, Record, later_than
from sitegen.fetch.payloads import AnalyticsEvent, DigestUpdate

logger = logging.getLogger("sitegen.emulator")
M = TypeVar("M", bound=BaseModel)

# collection key in the data → (path id name, response key, not-found message)
SINGLE = {
    "agents": ("agentId", "agent", "Agent not found"),
    "articles": ("articleId", "article", "Article not found"),
    "clusters": ("clusterId", "cluster", "Cluster not found"),
    "authorIdentities": ("authorIdentityId", "authorIdentity", "Author identity not found"),
}


Handler = Callable[[Request, EmulatorState], Awaitable[Any]]


def _query(request: Request) -> Query:
    return Query(request.query_params, "v2")


def _one(request: Request, state: EmulatorState, collection: str) -> Record:
    id_name, _, missing = SINGLE[collection]
    record_id = check_id(id_name, request.path_params[id_name])
    record = state.find(collection, record_id)
    if record is None:
        raise ApiProblem(404, missing, f"No record {record_id} in this workspace.")
    return record


def _lister(collection: str, sort: tuple[str, ...], default: str,
            tests: Callable[[Query, EmulatorState], list[store.Predicate]]) -> Handler:
    """The list endpoint of *collection*: `{<collection>: [...], pagination}`."""

    async def handler(request: Request, state: EmulatorState) -> dict[str, Any]:
        query = _query(request)
        skip, limit = query.page(20)
        field, descending = query.sort(sort, default)
        page, paging = store.select(state.records(collection), tests(query, state),
                                    field, descending, skip, limit)
        return {collection: [forms.v2_full(record) for record in page], "pagination": paging}

    return handler


def _getter(collection: str) -> Handler:
    """The single-record endpoint of *collection*: `{<singular>: {...}}`."""

    async def handler(request: Request, state: EmulatorState) -> dict[str, Any]:
        hidden = (forms.ARTICLE_OWNER_FIELDS if collection == "articles"
                  and state.faults.no_owner_fields else frozenset())
        return {SINGLE[collection][1]: forms.v2_full(_one(request, state, collection),
                                                     hidden=hidden)}

    return handler


def _articles(request: Request, state: EmulatorState, scope: tuple[str, Any] | None,
              *, with_cluster: bool = True, with_agent: bool = True) -> dict[str, Any]:
    query = _query(request)
    skip, limit = query.page(20)
    field, descending = query.sort(filters.V2_ARTICLE_SORT, "createdAt")
    tests = filters.article_filters(query, with_cluster=with_cluster, with_agent=with_agent)
    if scope is not None:
        tests.insert(0, store.equals(*scope))
    key = ("v2 articles", scope, with_cluster, with_agent, field, descending,
           tuple(sorted((k, v) for k, v in request.query_params.multi_items()
                        if k not in ("skip", "limit"))))
    found = state.listing(key, lambda: store.matching(state.records("articles"), tests, field,
                                                      descending))
    page, paging = store.cut(found, skip, limit)
    owners = not state.faults.no_owner_fields
    return {"articles": [forms.v2_article_item(a, owners=owners) for a in page],
            "pagination": paging}


async def get_workspace(request: Request, state: EmulatorState) -> dict[str, Any]:
    return {"workspace": forms.project(state.workspace, forms.WORKSPACE_V2)}


async def agent_articles(request: Request, state: EmulatorState) -> dict[str, Any]:
    agent = _one(request, state, "agents")
    return _articles(request, state, ("agentId", agent.get("id")), with_agent=False)


async def list_articles(request: Request, state: EmulatorState) -> dict[str, Any]:
    return _articles(request, state, None)


async def cluster_articles(request: Request, state: EmulatorState) -> dict[str, Any]:
    cluster = _one(request, state, "clusters")
    return _articles(request, state, ("clusterId", cluster.get("id")), with_cluster=False)


async def author_articles(request: Request, state: EmulatorState) -> dict[str, Any]:
    author = _one(request, state, "authorIdentities")
    return _articles(request, state, ("authorIdentityId", author.get("id")))


async def get_social_post(request: Request, state: EmulatorState) -> dict[str, Any]:
    slug = request.path_params["postSlug"].strip()
    if not slug:
        raise ApiProblem(400, "Invalid postSlug", "postSlug must be a non-empty string.")
    matches = sorted((p for p in state.records("socialPosts") if p.get("slug") == slug),
                     key=store.sort_key("createdAt"))
    if not matches:
        raise ApiProblem(404, "Social post not found", f"No social post with slug {slug[:80]!r}.")
    return {"socialPost": forms.v2_full(matches[0])}


async def get_digest(request: Request, state: EmulatorState) -> dict[str, Any]:
    if state.digest is None:
        raise ApiProblem(404, "Digest settings not found",
                         "This workspace has no digest settings yet; PUT them first.")
    return {"digest": dict(state.digest)}


async def _json_body(request: Request, model: type[M]) -> tuple[M, Record]:
    """The request body validated by `model`, and the raw object; 400 as the reference says."""
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type != "application/json":
        raise ApiProblem(400, "Invalid request body", "Content-Type must be application/json.")
    try:
        raw = finitejson.loads(await request.body())
    except finitejson.NotFinite as number:
        raise ApiProblem(400, "Invalid JSON body", f"The body holds the number {number}, "
                         "which JSON answers cannot carry.") from None
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ApiProblem(400, "Invalid JSON body", "The body is not valid JSON.") from None
    if not isinstance(raw, dict):
        raise ApiProblem(400, "Invalid request body", "The body must be a JSON object.")
    try:
        return model.model_validate(raw), raw
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in issue['loc']) or 'body'}: {issue['msg']}"
            for issue in error.errors(include_url=False, include_input=False)
        )
        raise ApiProblem(400, "Invalid request body", problems) from None


async def put_digest(request: Request, state: EmulatorState) -> dict[str, Any]:
    update, _ = await _json_body(request, DigestUpdate)
    previous = state.digest or {}
    digest: Record = {**previous, "workspaceId": state.workspace_id}
    digest.update(update.model_dump(mode="json", include=update.model_fields_set))
    stamp = later_than(previous.get("updatedAt"))
    digest.setdefault("createdAt", stamp)
    digest["updatedAt"] = stamp
    state.digest = digest
    return {"digest": dict(digest)}


async def post_analytics(request: Request, state: EmulatorState) -> JSONResponse:
    event, raw = await _json_body(request, AnalyticsEvent)
    state.analytics_events.append(raw)
    page = event.page
    logger.info("analytics event: %s %s (visitor %s)", page.type if page else "-",
                page.path if page else "-", event.visitorId[:12])
    return JSONResponse({"analytics": {"inserted": True}}, status_code=201)


ROUTES: list[tuple[str, str, Handler]] = [
    ("GET", "", get_workspace),
    ("GET", "/agents", _lister("agents", filters.V2_AGENT_SORT, "createdAt",
                               lambda query, state: filters.agent_filters(query))),
    ("GET", "/agents/{agentId}", _getter("agents")),
    ("GET", "/agents/{agentId}/articles", agent_articles),
    ("GET", "/articles", list_articles),
    ("GET", "/articles/{articleId}", _getter("articles")),
    ("GET", "/clusters", _lister("clusters", filters.V2_NAMED_SORT, "updatedAt",
                                 filters.cluster_filters)),
    ("GET", "/clusters/{clusterId}", _getter("clusters")),
    ("GET", "/clusters/{clusterId}/articles", cluster_articles),
    ("GET", "/author-identities", _lister("authorIdentities", filters.V2_NAMED_SORT, "updatedAt",
                                          lambda query, state: filters.author_filters(query))),
    ("GET", "/author-identities/{authorIdentityId}", _getter("authorIdentities")),
    ("GET", "/author-identities/{authorIdentityId}/articles", author_articles),
    ("GET", "/social-posts", _lister("socialPosts", filters.V2_SOCIAL_SORT, "updatedAt",
                                     lambda query, state: filters.social_filters(query))),
    ("GET", "/social-posts/{postSlug}", get_social_post),
    ("GET", "/digest", get_digest),
    ("PUT", "/digest", put_digest),
    ("POST", "/analytics", post_analytics),
]
