"""`sitegen digest show|set`: read and change the workspace's digest settings (API v2).

Role: turn `digest set` flags into a change, refuse values outside the v2 bounds before any
request (one line per bad flag, exit 2), read the current settings, merge, validate the whole
body with `DigestUpdate`, PUT it through the fetch client and print the settings as aligned
`key: value` lines. It must never send a body that `DigestUpdate` refuses, never talk HTTP
except through `sitegen.fetch.client.ApiClient`, and never print the key or raw control
characters from the service.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import unicodedata
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from sitegen.config import Config, load_config
from sitegen.errors import ApiError, ConfigError, UnreachableError
from sitegen.fetch.answers import NotFound
from sitegen.fetch.client import ApiClient
from sitegen.fetch.ledger import CallLedger
from sitegen.fetch.payloads import DigestUpdate
from sitegen.fetch.records import DigestSettings
from sitegen.logs import is_quiet, say

if TYPE_CHECKING:
    import httpx

log = logging.getLogger("sitegen.digest")

# DigestUpdate field → the `digest set` flag that sets it, in display order.
FLAGS: dict[str, str] = {
    "enabled": "--enabled",
    "frequency": "--frequency",
    "subject": "--subject",
    "previewText": "--preview-text",
    "senderName": "--sender-name",
    "replyTo": "--reply-to",
}
_PLACEHOLDER: dict[str, object] = {
    "enabled": False, "frequency": "weekly", "subject": "x", "senderName": "x",
}
_TEXT_FIELDS = ("subject", "previewText", "senderName", "replyTo")


def changes_from_options(options: argparse.Namespace) -> dict[str, object]:
    """The DigestUpdate fields the user gave on the command line, typed."""
    changes: dict[str, object] = {}
    for field, flag in FLAGS.items():
        value = getattr(options, flag.removeprefix("--").replace("-", "_"), None)
        if value is None:
            continue
        if field == "enabled" and isinstance(value, str):
            lowered = value.strip().lower()
            changes[field] = {"true": True, "false": False}.get(lowered, value)
        else:
            changes[field] = value
    return changes


def _is_control(char: str) -> bool:
    return unicodedata.category(char) in ("Cc", "Cf") and char not in ("\u200d",)


def _explain(error: ErrorDetails, value: object) -> str:
    """One pydantic error as a short phrase a user can act on."""
    kind = error["type"]
    context: dict[str, Any] = dict(error.get("ctx") or {})
    if kind == "string_too_long":
        size = len(value) if isinstance(value, str) else "?"
        return f"at most {context.get('max_length')} characters (got {size})"
    if kind == "string_too_short":
        return "must not be empty"
    if kind == "literal_error":
        return f"must be one of {context.get('expected', 'the allowed values')}"
    if kind in ("bool_type", "bool_parsing"):
        return "must be true or false"
    if kind == "value_error" and error["loc"][-1:] == ("replyTo",):
        reason = str(context.get("reason") or error["msg"]).removeprefix("value is not a valid ")
        return f"not a valid e-mail address ({reason.rstrip('.')})"
    return str(error["msg"])


def _field_errors(body: dict[str, object], *, hygiene: bool) -> dict[str, str]:
    """Field → problem, for every field of *body* that DigestUpdate refuses.

    With *hygiene*, text with control characters (a newline in a subject) is refused
    too: sitegen does not send such values, but it keeps the service's own as they are.
    """
    problems: dict[str, str] = {}
    try:
        DigestUpdate.model_validate(body)
    except ValidationError as error:
        for item in error.errors():
            field = str(item["loc"][0]) if item["loc"] else "(body)"
            problems.setdefault(field, _explain(item, body.get(field)))
    for field in _TEXT_FIELDS if hygiene else ():
        value = body.get(field)
        if field not in problems and isinstance(value, str) and any(map(_is_control, value)):
            problems[field] = "must not contain control characters (newlines, tabs, escapes)"
    return problems


def check_changes(changes: dict[str, object]) -> None:
    """Refuse any flag value outside the v2 bounds, before a single request.

    Logs one `error:` line per bad flag and raises ConfigError (exit 2).
    """
    if not changes:
        raise ConfigError("nothing to change: pass at least one of " + ", ".join(FLAGS.values()))
    problems = _field_errors({**_PLACEHOLDER, **changes}, hygiene=True)
    bad = {field: text for field, text in problems.items() if field in changes}
    if not bad:
        return
    for field, text in bad.items():
        log.error("%s: %s", FLAGS.get(field, field), text)
    raise ConfigError(
        f"{len(bad)} digest value(s) outside the v2 bounds ({', '.join(FLAGS[f] for f in bad)}): "
        "nothing was sent; fix them and run again"
    )


def merge(current: DigestSettings, changes: dict[str, object]) -> DigestUpdate:
    """The full PUT body: the current settings with *changes* over them, validated."""
    body: dict[str, object] = {}
    for field in FLAGS:
        value = getattr(current, field, None)
        if value is not None:
            body[field] = value
    body.update(changes)
    problems = _field_errors(body, hygiene=False)
    if problems:
        for field, text in problems.items():
            flag = FLAGS.get(field, field)
            log.error("the current %s is not accepted (%s): pass %s", flag.lstrip("-"), text, flag)
        raise ConfigError(
            "the workspace's current digest settings are incomplete or invalid "
            f"({', '.join(problems)}): pass "
            + ", ".join(FLAGS.get(f, f) for f in problems) + " to set them; nothing was sent"
        )
    return DigestUpdate.model_validate(body)


def _clean(text: str) -> str:
    """Service text is untrusted: control and bidi characters are shown escaped, not obeyed."""
    return "".join(
        char.encode("unicode_escape").decode("ascii") if _is_control(char) else char
        for char in text
    )


def _shown(value: object) -> str:
    if value is None:
        return "(not set)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return _clean(str(value)) if str(value) else '""'


def settings_lines(settings: DigestSettings) -> list[str]:
    """The settings as aligned `key: value` lines, keys named like the `digest set` flags."""
    rows: list[tuple[str, object]] = [("workspace", settings.workspaceId)]
    rows += [(flag.removeprefix("--"), getattr(settings, field)) for field, flag in FLAGS.items()]
    rows += [("created", settings.createdAt), ("updated", settings.updatedAt)]
    width = max(len(key) for key, _ in rows) + 1
    return [f"{key + ':':<{width}} {_shown(value)}" for key, value in rows]


def _settings_from(answer: dict[str, Any]) -> DigestSettings | None:
    """`{digest: {...}}` or the settings object itself; None when neither is there."""
    inner = answer.get("digest", answer)
    if not isinstance(inner, dict) or not (set(inner) & {*FLAGS, "workspaceId"}):
        return None
    return DigestSettings.model_validate(inner)


def _path(config: Config) -> str:
    return f"workspaces/{config.api.workspace}/digest"


def _client(config: Config, transport: httpx.AsyncBaseTransport | None) -> ApiClient:
    if config.api.version == "v1":
        raise ConfigError(
            "digest settings exist only in API v2, but [api] version is \"v1\": "
            "set it to \"auto\" or \"v2\" in site.toml"
        )
    return ApiClient(
        config.api.base_url, config.api_key(), transport=transport,
        timeout=config.api.timeout, concurrency=1, retry_budget=config.api.retry_budget,
        max_retries=config.api.max_retries, ledger=CallLedger(version="v2"),
    )


def _no_v2(config: Config) -> UnreachableError:
    return UnreachableError(
        f"{config.api.base_url} has no v2 digest endpoint for workspace {config.api.workspace} "
        "(HTTP 404): check [api] url and [api] workspace; digest settings need API v2"
    )


async def read_digest(client: ApiClient, config: Config) -> DigestSettings:
    """GET the current settings; a workspace that has none yet reads as nothing set.

    A 404 is ambiguous (no settings yet, or no v2 at all), so it costs one more GET
    of the workspace itself to tell which.
    """
    try:
        answer = await client.get_json("v2", _path(config))
    except NotFound:
        try:
            await client.get_json("v2", f"workspaces/{config.api.workspace}")
        except NotFound:
            raise _no_v2(config) from None
        log.info("this workspace has no digest settings yet")
        answer = {}
    return _settings_from(answer) or DigestSettings(workspaceId=config.api.workspace)


async def write_digest(client: ApiClient, config: Config, body: DigestUpdate) -> DigestSettings:
    """PUT *body*; the answer's settings when it has them, else what was sent."""
    try:
        answer = await client.put_json("v2", _path(config), body.model_dump(exclude_none=True))
    except NotFound:
        raise _no_v2(config) from None
    except UnreachableError as error:
        last = client.ledger.records[-1].status if client.ledger.records else 0
        if last < 500:
            raise
        raise ApiError(
            f"the service failed to update the digest settings (HTTP {last}, "
            f"{_server_reason(error)}): check them with `sitegen digest show` and try again later"
        ) from error
    sent = DigestSettings.model_validate({"workspaceId": config.api.workspace,
                                          **body.model_dump()})
    return _settings_from(answer) or sent


def _server_reason(error: UnreachableError) -> str:
    """The service's own words from a 5xx failure, when the client kept them."""
    text = str(error)
    start, end = text.find("(HTTP "), text.find("): ")
    if start >= 0 and end > start and ": " in text[start:end]:
        return text[start + 1:end].split(": ", 1)[1]
    return "no reason given"


async def show_digest(config: Config, *,
                      transport: httpx.AsyncBaseTransport | None = None) -> DigestSettings:
    """`digest show`: the workspace's digest settings (one GET)."""
    async with _client(config, transport) as client:
        return await read_digest(client, config)


async def set_digest(config: Config, changes: dict[str, object], *,
                     transport: httpx.AsyncBaseTransport | None = None) -> DigestSettings:
    """`digest set`: check the flags, GET, merge, validate, PUT; the settings now in force.

    Nothing is sent when a flag is out of bounds, and no PUT when nothing would change.
    """
    check_changes(changes)
    async with _client(config, transport) as client:
        current = await read_digest(client, config)
        body = merge(current, changes)
        if all(getattr(current, field) == value for field, value in changes.items()):
            log.info("the digest settings already have these values: nothing was sent")
            return current
        updated = await write_digest(client, config, body)
    log.info("updated the digest settings (%s)", ", ".join(FLAGS[f] for f in changes))
    return updated


def digest_command(options: argparse.Namespace, *,
                   transport: httpx.AsyncBaseTransport | None = None) -> int:
    """`sitegen digest show|set`: print the settings (after the update for `set`)."""
    if options.digest_command == "set":
        changes = changes_from_options(options)
        check_changes(changes)
        config = load_config(Path(options.config))
        settings = asyncio.run(set_digest(config, changes, transport=transport))
    else:
        config = load_config(Path(options.config))
        settings = asyncio.run(show_digest(config, transport=transport))
    for line in settings_lines(settings):  # (`show` prints what it was asked for, quiet too)
        if options.digest_command == "set":
            say(line, is_quiet(options))
        else:
            print(line)
    return 0
