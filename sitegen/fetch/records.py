"""Tolerant pydantic models of every record of the service's v1 and v2 APIs.

Role: turn JSON from the API (or the content store) into typed records. Readers are tolerant:
unknown fields are ignored, fields the references mark "not shown" are optional, mistyped
scalars are coerced where the meaning is clear (`sitegen.fetch.fields`), and an article's
blocks are parsed by the block registry (`sitegen.blocktypes`: an unknown block type becomes
`UnknownBlock` instead of failing). The request bodies sitegen *sends* are strict and live apart
(`sitegen.fetch.payloads`). This module must never do I/O or log; callers decide what a
ValidationError means (usually: skip that one record with a warning).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator

from sitegen.blocktypes import Blocks
from sitegen.blocktypes import ImageBlock as ImageBlock  # (re-exported: older imports)
from sitegen.blocktypes import UnknownBlock as UnknownBlock
from sitegen.blocktypes import parse_block as parse_block
from sitegen.fetch.fields import (
    Flag,
    Record,
    RecordId,
    StrList,
    Text,
    Timestamp,
    to_str,
    to_str_list,
)

# --- workspace, agents, articles ----------------------------------------------


class Pagination(Record):
    skip: int | None = None
    limit: int | None = None
    totalCount: int | None = None
    totalPages: int | None = None
    currentPage: int | None = None
    hasNextPage: Flag = None
    hasPrevPage: Flag = None


class WorkspaceInfo(Record):
    """Workspace identity: v2 gives {id, name}; v1 adds owner, plan and dates."""

    id: RecordId
    name: Text = None
    ownerId: Text = None
    description: Text = None
    plan: Text = None
    isActive: Flag = None
    createdAt: Timestamp = None
    updatedAt: Timestamp = None


class Meta(Record):
    keywords: Annotated[str | None, BeforeValidator(
        lambda v: ", ".join(to_str_list(v)) if isinstance(v, list) else to_str(v))] = None
    description: Text = None
    tags: StrList = []


def _to_meta(value: Any) -> Any:
    return value if isinstance(value, (dict, Meta)) else None


#: The fields that carry an article's body: the detail forms have them, v2 lists do not.
BODY_FIELDS = frozenset({"content", "blocks", "meta"})


class Article(Record):
    """An article in any form (v1 L/S/A/W, v2 list or detail). Only `id` is required."""

    id: RecordId
    workspaceId: Text = None
    agentId: Text = None
    clusterId: Text = None
    authorIdentityId: Text = None
    title: Text = None
    slug: Text = None
    description: Text = None
    content: Text = None
    status: Text = None
    language: Text = None
    model: Text = None
    tone: Text = None
    tags: StrList = []
    blocks: Blocks = None
    meta: Annotated[Meta | None, BeforeValidator(_to_meta)] = None
    createdBy: Text = None
    updatedBy: Text = None
    createdAt: Timestamp = None
    updatedAt: Timestamp = None

    @property
    def has_body(self) -> bool:
        """True when the record carries its full body (content or blocks), as detail forms do."""
        return self.content is not None or self.blocks is not None


class Agent(Record):
    """An agent in any form (v1 L/S/W, v2). `articles` only in the v1 workspace form."""

    id: RecordId
    workspaceId: Text = None
    name: Text = None
    description: Text = None
    status: Text = None
    executionMode: Text = None
    schedule: Text = None
    model: Text = None
    tone: Text = None
    language: Text = None
    prompt: Text = None
    isActive: Flag = None
    createdAt: Timestamp = None
    updatedAt: Timestamp = None
    articles: list[dict[str, Any]] | None = None


class Cluster(Record):
    """A topic cluster (v2 only; fields not shown in the reference)."""

    id: RecordId
    workspaceId: Text = None
    name: Text = None
    description: Text = None
    color: Text = None
    contentCycleId: Text = None
    createdAt: Timestamp = None
    updatedAt: Timestamp = None


class AuthorIdentity(Record):
    """An author identity / voice persona (v2 only; fields not shown)."""

    id: RecordId
    workspaceId: Text = None
    name: Text = None
    bio: Text = None
    imageUrl: Text = None
    #: The language its bio is written in (not shown: read when a record has it).
    language: Text = None
    createdAt: Timestamp = None
    updatedAt: Timestamp = None


class SocialImages(Record):
    square: Text = None
    portrait: Text = None
    landscape: Text = None


class SocialPost(Record):
    """A short-form social asset (v2 only; fields not shown)."""

    id: RecordId
    workspaceId: Text = None
    title: Text = None
    slug: Text = None
    content: Text = None
    selectedImageSlot: Text = None
    images: Annotated[SocialImages | None, BeforeValidator(_to_meta)] = None
    createdAt: Timestamp = None
    updatedAt: Timestamp = None
    #: The article a post promotes, when the service names it (field names not shown:
    #: each likely one is read, and only a published article of the site is linked).
    articleId: Text = None
    articleSlug: Text = None
    articleUrl: Text = None
    url: Text = None


class DigestSettings(Record):
    """Digest settings as read from `GET /digest` (tolerant)."""

    workspaceId: Text = None
    enabled: Flag = None
    frequency: Text = None
    subject: Text = None
    previewText: Text = None
    senderName: Text = None
    replyTo: Text = None
    createdAt: Timestamp = None
    updatedAt: Timestamp = None
