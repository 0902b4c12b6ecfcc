"""API-key checks of the emulated service, in each version's header form.

Role: decide whether a request's key opens the workspace it asks for, with each reference's
status: v1 wants `x-api-key: Bearer <KEY>`; v2 takes `x-api-key: <KEY>` or `Authorization:
Bearer <KEY>` and answers 403 when the path workspace is not the key's (the emulated data's).
Without a configured key any non-empty key is accepted, but not in the other version's form, as
the real service would refuse it. This module must never put a key in a message, a log line or
an exception.
"""

from __future__ import annotations

import hmac

from starlette.requests import Request

from sitegen.emulator.query import ApiProblem, Version, check_id
from sitegen.emulator.state import EmulatorState

BEARER = "bearer "


def _unauthorized(details: str) -> ApiProblem:
    return ApiProblem(401, "Unauthorized", details)


def _v1_key(request: Request) -> str:
    header = request.headers.get("x-api-key")
    if header is None:
        raise _unauthorized("Missing API key: send the header x-api-key: Bearer <API_KEY>.")
    if not header.lower().startswith(BEARER):
        raise _unauthorized("Invalid API key format: v1 expects x-api-key: Bearer <API_KEY>.")
    return header[len(BEARER):].strip()


def _v2_key(request: Request) -> str:
    header = request.headers.get("x-api-key")
    if header is not None:
        if header.lower().startswith(BEARER):
            raise _unauthorized("Invalid API key: v2 takes the bare key in x-api-key "
                                "(or Authorization: Bearer <API_KEY>).")
        return header.strip()
    authorization = request.headers.get("authorization")
    if authorization is None:
        raise _unauthorized("Missing API key: send x-api-key: <API_KEY> or "
                            "Authorization: Bearer <API_KEY>.")
    if not authorization.lower().startswith(BEARER):
        raise _unauthorized("Invalid Authorization header: expected Bearer <API_KEY>.")
    return authorization[len(BEARER):].strip()


def authenticate(request: Request, version: Version, state: EmulatorState) -> None:
    """Return when the key may read this request's workspace; raise ApiProblem otherwise."""
    given = _v1_key(request) if version == "v1" else _v2_key(request)
    if not given:
        raise _unauthorized("Missing API key: the key is empty.")
    if state.key is not None and not hmac.compare_digest(given.encode(), state.key.encode()):
        raise _unauthorized("Invalid API key.")
    if version == "v2":
        workspace_id = check_id("workspaceId", request.path_params.get("workspaceId", ""))
        if workspace_id != state.workspace_id:
            raise ApiProblem(403, "Forbidden",
                             "This API key belongs to another workspace than the one in the path.")
