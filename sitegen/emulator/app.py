"""The emulated Content Automation Service: one Starlette app serving API v1 and v2.

Role: assemble the routes of `v1.py` and `v2.py` and run every API request through the service's
pipeline: count the call (per route template, like the quota), wait the simulated latency
(`asyncio.sleep`, so concurrent requests overlap), then, in this order (the reference leaves it
"not shown"): v2 absent (404), programmed fault, rate limit (429), random failure (500), key
(401), path workspace (400 / v2 403), quota (402), the endpoint's own checks. Error bodies are
`{error, details}` in both versions; CORS headers go on every response, `OPTIONS` is a 204
preflight, v2 responses carry rate-limit headers. Beside the API: the workspaces' media
(`media.py`) and the admin routes (`admin.py`), which are no API calls (no quota, no faults)
and, for no web page may call them, get no CORS headers and no preflight. The same app runs
in-process (`httpx.ASGITransport`) and over HTTP (`serve.py`). This module must never log or
echo an API key.
"""

from __future__ import annotations

import asyncio
import http
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Match, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sitegen.emulator import admin, auth, v1, v2
from sitegen.emulator.faults import Faults, InjectedFault
from sitegen.emulator.media import GENERATED_PATH, MEDIA_PATH, generated_image, media_file
from sitegen.emulator.query import ApiProblem, Version
from sitegen.emulator.state import EmulatorState

logger = logging.getLogger("sitegen.emulator")

V1_PREFIX = "/api/v1"
ADMIN_PREFIX = "/__admin/"
V2_PREFIX = "/api/v2/workspaces/{workspaceId}"
NOMINAL_RATE_LIMIT = 1000
"""Requests per minute announced in X-RateLimit-* when no rate-limit fault is set."""

CORS_V1 = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET, OPTIONS",
    "Access-Control-Allow-Headers": "Authorization, Content-Type, x-api-key",
}
CORS_V2 = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET, POST, PUT, OPTIONS",
    "Access-Control-Allow-Headers": "Authorization, Content-Type, X-API-KEY",
    "Access-Control-Expose-Headers":
        "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After",
}


def error_response(problem: ApiProblem) -> JSONResponse:
    """The `{error, details}` answer for a problem."""
    return JSONResponse({"error": problem.error, "details": problem.details},
                        status_code=problem.status, headers=problem.headers)


def _injected_response(fault: InjectedFault, retry_after: int) -> Response:
    headers = {"Retry-After": str(retry_after)} if fault.status == 429 else {}
    if fault.body is not None:
        return Response(fault.body, status_code=fault.status, headers=headers,
                        media_type=fault.content_type or "application/json")
    if fault.status < 400:
        return JSONResponse({}, status_code=fault.status, headers=headers)
    phrase = ("API access quota exceeded" if fault.status == 402
              else http.HTTPStatus(fault.status).phrase)
    return error_response(ApiProblem(fault.status, phrase, "simulated failure", headers))


def _rate_headers(state: EmulatorState, number: int) -> dict[str, str]:
    every = state.faults.rate_limit_every
    now = time.time()
    if every > 0:
        position = number % every
        remaining = every - 1 - position if position else 0
        return {"X-RateLimit-Limit": str(every), "X-RateLimit-Remaining": str(remaining),
                "X-RateLimit-Reset": str(int(now) + state.faults.retry_after_s)}
    window = int(now // 60) * 60
    if state.rate_window != window:
        state.rate_window, state.rate_window_count = window, 0
    state.rate_window_count += 1
    remaining = max(0, NOMINAL_RATE_LIMIT - state.rate_window_count)
    return {"X-RateLimit-Limit": str(NOMINAL_RATE_LIMIT),
            "X-RateLimit-Remaining": str(remaining), "X-RateLimit-Reset": str(window + 60)}


async def _gate(state: EmulatorState, request: Request, version: Version,
                number: int) -> Response | None:
    """Faults, key and quota; a Response when the request ends here, else None."""
    faults = state.faults
    if version == "v2" and faults.no_v2:
        raise ApiProblem(404, "Not Found", "This service has no API v2; use /api/v1.")
    injected = faults.take_injected(request.url.path)
    if injected is not None:
        return _injected_response(injected, faults.retry_after_s)
    if faults.rate_limited(number):
        raise ApiProblem(429, "Too Many Requests",
                         f"Rate limit reached; retry after {faults.retry_after_s} s.",
                         {"Retry-After": str(faults.retry_after_s)})
    if faults.should_fail():
        raise ApiProblem(500, "Internal Server Error", "Simulated server failure.")
    auth.authenticate(request, version, state)
    if faults.quota_exceeded(number):
        raise ApiProblem(402, "API access quota exceeded",
                         f"The workspace has used all {faults.quota} API calls of its monthly "
                         "quota; calls resume when the quota resets.")
    return None


Handler = Callable[[Request, EmulatorState], Awaitable[Any]]


def _endpoint(version: Version, key: str, handler: Handler) -> Callable[
        [Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        state: EmulatorState = request.app.state.emulator
        state.calls[key] += 1
        state.requests += 1
        number = state.requests
        if state.faults.latency_ms > 0:
            await asyncio.sleep(state.faults.latency_ms / 1000)
        try:
            response = await _gate(state, request, version, number)
            if response is None:
                result = await handler(request, state)
                response = result if isinstance(result, Response) else JSONResponse(result)
        except ApiProblem as problem:
            response = error_response(problem)
        except Exception:  # a bug in a handler must still answer like the service: 500
            logger.exception("emulator handler for %s failed", key)
            response = error_response(ApiProblem(500, "Internal Server Error",
                                                 "The emulator failed on this request."))
        if version == "v2" and not (state.faults.no_v2 and response.status_code == 404):
            response.headers.update(_rate_headers(state, number))
        return response

    return endpoint


def _routes() -> list[BaseRoute]:
    routes: list[BaseRoute] = []
    tables: list[tuple[Version, str, list[tuple[str, str, Handler]]]] = [
        ("v1", V1_PREFIX, v1.ROUTES), ("v2", V2_PREFIX, v2.ROUTES)]
    for version, prefix, table in tables:
        for method, path, handler in table:
            template = prefix + path
            routes.append(Route(template, _endpoint(version, f"{method} {template}", handler),
                                methods=[method]))
    routes.append(Route(MEDIA_PATH, media_file, methods=["GET"]))
    routes.append(Route(GENERATED_PATH, generated_image, methods=["GET"]))
    routes.extend(admin.routes())
    return routes


async def _http_error(request: Request, exc: Exception) -> Response:
    """Unknown paths and methods: the service's error shape (CORS is added outside)."""
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    state: EmulatorState = request.app.state.emulator
    state.calls[f"{request.method} (no route)"] += 1
    headers = dict(exc.headers or {}) if isinstance(exc, HTTPException) else {}
    details = ("No such endpoint." if status == 404
               else f"{request.method} is not allowed here." if status == 405
               else "The request failed.")
    return error_response(ApiProblem(status, http.HTTPStatus(status).phrase, details, headers))


class CorsAndLog:
    """Outer ASGI layer: 204 preflights, CORS headers on every answer, one log line each."""

    def __init__(self, app: ASGIApp, routes: list[BaseRoute], log_level: int) -> None:
        self.app = app
        self.routes = routes
        self.log_level = log_level

    def _template(self, scope: Scope) -> str:
        for route in self.routes:
            match, _ = route.matches(scope)
            if match != Match.NONE and isinstance(route, Route):
                return route.path
        return "(no route)"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        cors = CORS_V1 if path.startswith(V1_PREFIX + "/") or path == V1_PREFIX else CORS_V2
        if path.startswith(ADMIN_PREFIX):
            cors = {}  # no web page may call the admin routes: no CORS, no preflight
        started = time.perf_counter()
        status = 0

        async def send_with_cors(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = [(k, v) for k, v in message.get("headers", [])
                           if not k.lower().startswith(b"access-control-")]
                headers += [(k.lower().encode(), v.encode()) for k, v in cors.items()]
                message = {**message, "headers": headers}
            await send(message)

        if scope["method"] == "OPTIONS" and cors:
            state: EmulatorState = scope["app"].state.emulator
            state.calls[f"OPTIONS {self._template(scope)}"] += 1
            await Response(status_code=204)(scope, receive, send_with_cors)
        else:
            await self.app(scope, receive, send_with_cors)
        if logger.isEnabledFor(self.log_level):
            query = scope.get("query_string", b"").decode("latin-1")
            logger.log(self.log_level, "%s %s%s %d %.0fms", scope["method"], path,
                       f"?{query}" if query else "", status,
                       (time.perf_counter() - started) * 1000)


def create_app(data: dict[str, Any], *, key: str | None = None, faults: Faults | None = None,
               log_requests: bool = False) -> Starlette:
    """An emulator of both API versions over one workspace JSON object.

    `key`: accept only this API key (default: any non-empty key). `faults`: the simulated
    trouble (mutable through `app.state.emulator.faults`). `log_requests`: one INFO line
    per request (else DEBUG), as `emulate` does.
    """
    state = EmulatorState(data, faults, key=key)
    routes = _routes()
    app = Starlette(routes=routes, exception_handlers={HTTPException: _http_error})
    app.router.redirect_slashes = False
    app.state.emulator = state
    app.add_middleware(CorsAndLog, routes=routes,
                       log_level=logging.INFO if log_requests else logging.DEBUG)
    return app
