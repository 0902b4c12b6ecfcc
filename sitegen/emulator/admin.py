"""The emulator's admin routes: change the emulated workspace's articles as the service would.

Role: `POST /__admin/articles` (create: a record in the data file's form; a missing `id`,
`slug`, `createdAt`, `updatedAt`, `workspaceId` and `status` filled in; 201 with the record),
`PATCH /__admin/articles/{id}` (merge the body's fields; 200 with the record) and `DELETE
/__admin/articles/{id}` (204), each bumping `updatedAt` through `EmulatorState`'s helpers so
the next incremental sync sees exactly that article change. They need no key, are not API
calls (no quota, no faults, no latency), answer only loopback clients (403 otherwise) and
refuse any request that carries an `Origin` header: a web page open in the user's browser
must never change the workspace. A body that is not a JSON object, a number JSON cannot say
back (NaN, Infinity, 1e400), or a field of the wrong type, is a 422 with one sentence and
changes nothing. Changes live in memory only: this module must never write
the data file or anything else.
"""

from __future__ import annotations

import ipaddress
import secrets
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from sitegen.emulator import finitejson
from sitegen.emulator.prose import slugify
from sitegen.emulator.query import is_object_id
from sitegen.emulator.state import EmulatorState, Record

ADMIN_ARTICLES = "/__admin/articles"
ADMIN_ARTICLE = "/__admin/articles/{articleId}"
STATUSES = ("draft", "published", "archived")
TEXT_FIELDS = ("title", "slug", "description", "content", "language", "model", "tone",
               "createdBy", "updatedBy", "agentId", "workspaceId")
OPTIONAL_IDS = ("clusterId", "authorIdentityId")
STAMPS = ("createdAt", "updatedAt")
SET_BY_SERVICE = ("id", "workspaceId", "createdAt", "updatedAt")
"""Fields a PATCH may not change: the service sets them."""


class AdminProblem(Exception):
    """An admin request refused: its status and one sentence."""

    def __init__(self, status: int, details: str) -> None:
        super().__init__(details)
        self.status = status
        self.details = details


def _answer(problem: AdminProblem) -> JSONResponse:
    error = {403: "Forbidden", 404: "Not Found", 409: "Conflict"}.get(problem.status,
                                                                     "Unprocessable Entity")
    return JSONResponse({"error": error, "details": problem.details}, status_code=problem.status)


def is_loopback(host: str | None) -> bool:
    """Whether a client address is the loopback interface (127.0.0.0/8, ::1, ::ffff:127.x)."""
    try:
        address = ipaddress.ip_address(host or "")
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def _guard(request: Request) -> None:
    if not is_loopback(request.client.host if request.client else None):
        raise AdminProblem(403, "The admin routes answer only clients on this machine "
                                "(127.0.0.1 or ::1); send the request from there.")
    if "origin" in request.headers:
        raise AdminProblem(403, "The admin routes do not answer web pages (the request has an "
                                "Origin header); send it with curl or another HTTP client.")


def _is_tags(value: Any) -> bool:
    """A list of strings."""
    return isinstance(value, list) and all(isinstance(tag, str) for tag in value)


def _is_blocks(value: Any) -> bool:
    """A list of objects, each with a string "type"."""
    return isinstance(value, list) and all(
        isinstance(block, dict) and isinstance(block.get("type"), str) for block in value)


def _check_field(name: str, value: Any) -> None:
    """Raise a 422 when *value* is not what the record form holds in field *name*."""
    wrong: str | None = None
    if name in TEXT_FIELDS and not isinstance(value, str):
        wrong = "a string"
    elif name in OPTIONAL_IDS and value is not None and not isinstance(value, str):
        wrong = "a string or null"
    elif name == "status" and value not in STATUSES:
        wrong = "one of draft, published or archived"
    elif name == "tags" and not _is_tags(value):
        wrong = 'a list of strings (["a", "b"])'
    elif name == "blocks" and not _is_blocks(value):
        wrong = 'a list of block objects, each with a "type"'
    elif name == "meta" and not isinstance(value, dict):
        wrong = "an object"
    elif name in STAMPS and not _is_stamp(value):
        wrong = "an ISO 8601 time such as 2024-05-01T10:00:00.000Z"
    elif name == "id" and not is_object_id(value):
        wrong = "a 24-hex ObjectId"
    if wrong is not None:
        raise AdminProblem(422, f"The field {name!r} must be {wrong}; fix the request body.")


def _is_stamp(value: Any) -> bool:
    """An ISO 8601 time before the year 9999 (the service's clock moves every later change a
    millisecond past the newest `updatedAt`: after one in 9999 there may be none)."""
    if not isinstance(value, str):
        return False
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return moment.year < 9999


async def _body(request: Request) -> Record:
    raw = await request.body()
    try:
        body = finitejson.loads(raw)
    except finitejson.NotFinite as number:
        raise AdminProblem(422, f"The request body holds the number {number}, which JSON "
                                "answers cannot carry; send a finite number within a double's "
                                "range.") from None
    except (ValueError, RecursionError):
        body = None
    if not isinstance(body, dict):
        raise AdminProblem(422, "The request body must be a JSON object of article fields, "
                                'such as {"title": "New title"}.')
    for name, value in body.items():
        _check_field(name, value)
    return body


def _new_id(state: EmulatorState) -> str:
    while True:
        candidate = f"{int(time.time()) & 0xFFFFFFFF:08x}{secrets.token_hex(8)}"
        if state.find("articles", candidate) is None:
            return candidate


def _free_slug(state: EmulatorState, text: str) -> str:
    taken = {article.get("slug") for article in state.records("articles")}
    base = slug = slugify(text)
    counter = 2
    while slug in taken:
        slug, counter = f"{base}-{counter}", counter + 1
    return slug


async def create_article(request: Request) -> Response:
    """POST /__admin/articles: add an article, its missing fields filled as the service would."""
    state: EmulatorState = request.app.state.emulator
    _guard(request)
    record = await _body(request)
    if "id" in record and state.find("articles", record["id"]) is not None:
        raise AdminProblem(409, f"An article {record['id']} exists already; change it with "
                                f"PATCH {ADMIN_ARTICLES}/{record['id']}.")
    record.setdefault("id", _new_id(state))
    record.setdefault("workspaceId", state.workspace_id)
    record.setdefault("status", "draft")
    title = record.get("title")
    record.setdefault("slug", _free_slug(state, title if title else record["id"]))
    stamp = state.clock()
    record.setdefault("createdAt", stamp)
    record.setdefault("updatedAt", stamp)
    state.add_article(record)
    return JSONResponse(state.find("articles", record["id"]), status_code=201)


def _existing(request: Request, state: EmulatorState) -> str:
    article_id = request.path_params["articleId"]
    if state.find("articles", article_id) is None:
        raise AdminProblem(404, f"There is no article {article_id} in the emulated workspace; "
                                f"list them at /api/v2/workspaces/{state.workspace_id}/articles.")
    return str(article_id)


async def change_article(request: Request) -> Response:
    """PATCH /__admin/articles/{id}: merge the body's fields; `updatedAt` moves forward."""
    state: EmulatorState = request.app.state.emulator
    _guard(request)
    article_id = _existing(request, state)
    fields = await _body(request)
    fixed = [name for name in SET_BY_SERVICE if name in fields]
    if fixed:
        raise AdminProblem(422, f"The field {fixed[0]!r} is set by the service and cannot be "
                                "changed; leave it out of the request body.")
    state.update_article(article_id, **fields)
    return JSONResponse(state.find("articles", article_id))


async def delete_article(request: Request) -> Response:
    """DELETE /__admin/articles/{id}: remove the article, as a deletion at the service."""
    state: EmulatorState = request.app.state.emulator
    _guard(request)
    state.delete_article(_existing(request, state))
    return Response(status_code=204)


def _endpoint(method: str, path: str,
              handler: Callable[[Request], Awaitable[Response]]) -> Route:
    async def endpoint(request: Request) -> Response:
        state: EmulatorState = request.app.state.emulator
        state.calls[f"{method} {path}"] += 1  # counted apart: not an API call, no quota
        try:
            return await handler(request)
        except AdminProblem as problem:
            return _answer(problem)

    return Route(path, endpoint, methods=[method])


def routes() -> list[BaseRoute]:
    """The three admin routes."""
    return [_endpoint("POST", ADMIN_ARTICLES, create_article),
            _endpoint("PATCH", ADMIN_ARTICLE, change_article),
            _endpoint("DELETE", ADMIN_ARTICLE, delete_article)]
