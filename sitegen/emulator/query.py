"""Query-string and path checks of the emulated API, with the service's error answers.

Role: read one request's query parameters the way each API version does (skip/limit bounds, sort
field and order, enum, ObjectId and boolean filters, comma lists) and raise `ApiProblem` with
the status and message the real service gives. v1 caps `limit` at 100 (its reference says so);
v2 answers 400 outside 1..100 or for a negative skip ("not shown": the strict reading, so a
client that passes here is safe there). Pure: it never touches the store, never logs and never
builds a response.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Literal

Version = Literal["v1", "v2"]

OBJECT_ID = re.compile(r"^[0-9a-fA-F]{24}$")
NULL = "null"
"""The clusterId filter value that selects articles without a cluster."""


@dataclass
class ApiProblem(Exception):
    """An error answer: `{error, details}` with `status` (and extra `headers`)."""

    status: int
    error: str
    details: str
    headers: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.status} {self.error}: {self.details}"


def is_object_id(value: object) -> bool:
    """True for a 24-character hexadecimal ObjectId string."""
    return isinstance(value, str) and OBJECT_ID.match(value) is not None


def check_id(name: str, value: str) -> str:
    """A path id, or 400 `Invalid <name>` when it is not an ObjectId."""
    if not is_object_id(value):
        raise ApiProblem(400, f"Invalid {name}", f"{name} must be a 24-character hexadecimal "
                         f"ObjectId, got {value[:40]!r}")
    return value


def bad_query(name: str, details: str) -> ApiProblem:
    return ApiProblem(400, "Invalid query parameters", f"{name}: {details}")


class Query:
    """The query parameters of one request, read under one API version's rules."""

    def __init__(self, params: Mapping[str, str], version: Version) -> None:
        self.params = params
        self.version = version

    def text(self, name: str) -> str | None:
        """A free string parameter; empty means absent."""
        value = self.params.get(name)
        return value if value else None

    def _integer(self, name: str, default: int) -> int:
        raw = self.params.get(name)
        if raw is None or raw == "":
            return default
        try:
            return int(raw.strip())
        except ValueError:
            raise bad_query(name, f"must be an integer, got {raw[:40]!r}") from None

    def page(self, default_limit: int) -> tuple[int, int]:
        """(skip, limit) under this version's bounds."""
        skip = self._integer("skip", 0)
        limit = self._integer("limit", default_limit)
        if skip < 0:
            raise bad_query("skip", f"must be 0 or more, got {skip}")
        if limit < 1:
            raise bad_query("limit", f"must be 1 or more, got {limit}")
        if limit > 100:
            if self.version == "v2":
                raise bad_query("limit", f"must be at most 100, got {limit}")
            limit = 100
        return skip, limit

    def enum(self, name: str, allowed: Collection[str]) -> str | None:
        """One of `allowed`, None when absent, 400 otherwise."""
        value = self.text(name)
        if value is not None and value not in allowed:
            raise bad_query(name, f"must be one of {', '.join(sorted(allowed))}, "
                            f"got {value[:40]!r}")
        return value

    def sort(self, allowed: Collection[str], default: str, *, field_param: str = "sortBy",
             order_param: str = "sortOrder") -> tuple[str, bool]:
        """(sort field, descending); the default order is descending."""
        sort_field = self.enum(field_param, allowed) or default
        order = self.enum(order_param, ("asc", "desc")) or "desc"
        return sort_field, order == "desc"

    def object_id(self, name: str, *, allow_null: bool = False) -> str | None:
        """An ObjectId filter (or the word `null` where allowed); 400 when malformed."""
        value = self.text(name)
        if value is None or (allow_null and value == NULL):
            return value
        if not is_object_id(value):
            raise ApiProblem(400, f"Invalid {name}", f"{name} must be a 24-character "
                             f"hexadecimal ObjectId{' or null' if allow_null else ''}, "
                             f"got {value[:40]!r}")
        return value

    def boolean(self, name: str) -> bool | None:
        """`true` / `false`, None when absent, 400 otherwise."""
        value = self.enum(name, ("true", "false"))
        return None if value is None else value == "true"

    def csv(self, name: str) -> list[str] | None:
        """A comma-separated list with blanks dropped; None when absent or empty."""
        value = self.text(name)
        if value is None:
            return None
        items = [part.strip() for part in value.split(",") if part.strip()]
        return items or None
