"""The shapes in which each API version shows a stored record.

Role: project a stored record (the database form of demo-workspace-format.md) onto the field set
of one response form. v1 forms follow the tables of its reference exactly: L (list item), S
(single), A (per-agent article list), W (inside the workspace response). A field the data lacks
stays absent, never invented as null. v2 record fields are "not shown" in its reference; we
assume article list items carry every stored field but `content`, `blocks` and `meta`, single
articles and every other record carry every stored field, and the workspace endpoint gives `{id,
name}` as the reference says. This module must never change the records it is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Record = dict[str, Any]

AGENT_L = (
    "id", "workspaceId", "name", "description", "status", "executionMode", "schedule", "model",
    "language", "isActive", "createdAt", "updatedAt",
)
AGENT_S = (*AGENT_L, "prompt", "createdBy", "updatedBy")
AGENT_W = (*AGENT_L, "tone")

ARTICLE_A = (
    "id", "workspaceId", "agentId", "title", "slug", "description", "status", "language",
    "model", "tone", "tags", "createdAt", "updatedAt",
)
ARTICLE_W = ARTICLE_A
ARTICLE_L = (*ARTICLE_A, "createdBy", "updatedBy")
ARTICLE_S = (*ARTICLE_L, "content", "blocks", "meta")

WORKSPACE_V1 = (
    "id", "ownerId", "name", "description", "plan", "isActive", "createdAt", "updatedAt",
)
WORKSPACE_V2 = ("id", "name")

ARTICLE_V2_HIDDEN_IN_LISTS = frozenset({"content", "blocks", "meta"})
#: An article's owners, left out of v2 article records by `emulate --no-owner-fields`.
ARTICLE_OWNER_FIELDS = frozenset({"clusterId", "authorIdentityId"})


def project(record: Record, fields: Sequence[str]) -> Record:
    """The fields of `record` named in `fields`, in that order; absent ones stay absent."""
    return {name: record[name] for name in fields if name in record}


def v2_article_item(record: Record, *, owners: bool = True) -> Record:
    """An article as the v2 list endpoints show it: everything but the body (and, without
    *owners*, but its cluster and author identity)."""
    hidden = ARTICLE_V2_HIDDEN_IN_LISTS if owners else (
        ARTICLE_V2_HIDDEN_IN_LISTS | ARTICLE_OWNER_FIELDS)
    return {name: value for name, value in record.items() if name not in hidden}


def v2_full(record: Record, *, hidden: frozenset[str] = frozenset()) -> Record:
    """A record as a v2 single-record endpoint shows it: every stored field (but *hidden*)."""
    return {name: value for name, value in record.items() if name not in hidden}
