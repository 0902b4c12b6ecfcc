"""What the service's answers mean: one HTTP status and body, read as the client reads them.

Role: `judge` turns a non-2xx status into one error: 401/403 `AuthError`, 402 `QuotaError`, 404
`NotFound` (the sync decides what that means), 408/425/429 and 5xx `Transient` (retried; a 429
with the wait it asked for), any other status `ApiError`. `decode` turns a 2xx body into a JSON
object, or `Transient` when it is not one. A caller's `check` refuses an answer that lacks what
it needs with `UnusableAnswer`. It must never make a request, and never put the key in a
message: the service's own words pass through the client's scrubber first.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from sitegen.errors import ApiError, AuthError, QuotaError
from sitegen.fetch.retry import Transient, server_wait

TRANSIENT_STATUS = {408, 425, 429}
Check = Callable[[dict[str, Any]], None]


class NotFound(ApiError):
    """404: the route or the record does not exist; the sync decides what that means."""

    def __init__(self, endpoint: str) -> None:
        super().__init__(f"{endpoint} answered 404 (not found)")
        self.endpoint = endpoint


class UnusableAnswer(Exception):
    """Raised by a `check`: the answer lacks what the caller needs ("no 'articles' list").

    The client retries the request, then fails with `UnreachableError` quoting it.
    """


def detail(content: bytes) -> str:
    """The service's own error text (`details`, `message`, `error`), cut short."""
    try:
        body = json.loads(content)
    except ValueError:
        return ""
    if not isinstance(body, dict):
        return ""
    for name in ("details", "message", "error"):
        value = body.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()[:200]
    return ""


def judge(status: int, endpoint: str, content: bytes, headers: Mapping[str, str],
          scrub: Callable[[str], str]) -> None:
    """Raise the error a non-2xx *status* means; return for a 2xx one."""
    if 200 <= status < 300:
        return
    if status == 401:
        raise AuthError(
            f"the service refused the API key (HTTP 401 on {endpoint}): check that the "
            "variable named by [api] key_env holds a valid, unrevoked key for this workspace"
        )
    if status == 403:
        raise AuthError(
            f"the API key is not allowed here (HTTP 403 on {endpoint}): the key belongs to "
            "another workspace; check [api] workspace and the key"
        )
    if status == 402:
        raise QuotaError(
            f"the workspace's monthly API quota is exhausted (HTTP 402 on {endpoint}): wait "
            "for the monthly reset or upgrade the plan; the cache and site were kept"
        )
    if status == 404:
        raise NotFound(endpoint)
    if status in TRANSIENT_STATUS:
        raise Transient(f"HTTP {status}", server_wait(headers) if status == 429 else None)
    said = scrub(detail(content))
    if status >= 500:
        raise Transient(f"HTTP {status}{': ' + said if said else ''}")
    raise ApiError(
        f"the service rejected {endpoint} (HTTP {status}{': ' + said if said else ''}): "
        "check [api] workspace, or report it as a sitegen bug if the configuration is right"
    )


def decode(content: bytes, content_type: str, status: int) -> dict[str, Any]:
    """The JSON object of a 2xx body (`{}` for an empty 204); `Transient` for anything else."""
    if not content.strip():
        if status == 204:
            return {}
        raise Transient("an empty body instead of JSON")
    try:
        data = json.loads(content)
    except ValueError:
        kind = content_type.split(";", 1)[0].strip() or "no content type"
        raise Transient(f"a body that is not JSON ({kind})") from None
    if not isinstance(data, dict):
        raise Transient(f"a JSON {type(data).__name__} instead of an object")
    return data
