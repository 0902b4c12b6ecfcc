"""Tolerant pydantic models of every record of the service's v1 and v2 APIs.

Role: turn JSON from the API (or the content store) into typed records. Readers are tolerant:
unknown fields are ignored, fields the references mark "not shown" are optional, mistyped
scalars are coerced where the meaning is clear, and an unknown block type becomes `UnknownBlock`
instead of failing. The request bodies sitegen *sends* are strict and live apart
(`sitegen.fetch.payloads`). This module must never do I/O or log; callers decide what a
ValidationError means (usually: skip that one record with a warning).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError


def _to_str(value: Any) -> Any:
    return str(value) if isinstance(value, (bool, int, float)) else value


def _to_str_list(value: Any) -> Any:
    """Tags and list items: accept a list of scalars or one comma-separated string."""
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, (str, int, float)) and str(v).strip()]
    return []


def _to_datetime(value: Any) -> Any:
    """ISO 8601 in, aware UTC datetime out; anything unparseable becomes None."""
    if value is None or isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _to_bool(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip().lower() in {"true", "1", "yes"}
    return value


Text = Annotated[str | None, BeforeValidator(_to_str)]
StrList = Annotated[list[str], BeforeValidator(_to_str_list)]
Timestamp = Annotated[datetime | None, BeforeValidator(_to_datetime)]
Flag = Annotated[bool | None, BeforeValidator(_to_bool)]
RecordId = Annotated[str, BeforeValidator(_to_str), Field(min_length=1)]


class Record(BaseModel):
    """Base of every record read from the API: unknown fields are ignored."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)


# --- blocks -----------------------------------------------------------------


class TextBlock(Record):
    type: Literal["text"] = "text"
    content: str = ""


def _to_level(value: Any) -> Any:
    try:
        return min(6, max(1, int(value)))
    except (TypeError, ValueError, OverflowError):  # OverflowError: an infinite float
        return 2


class HeaderBlock(Record):
    type: Literal["header"] = "header"
    content: str = ""
    level: Annotated[int, BeforeValidator(_to_level)] = 2


class ImageBlock(Record):
    type: Literal["image"] = "image"
    url: str
    caption: Text = None


class ListBlock(Record):
    type: Literal["list"] = "list"
    items: StrList = []
    ordered: Flag = False


class CodeBlock(Record):
    type: Literal["code"] = "code"
    content: str = ""
    language: Text = None


class VideoBlock(Record):
    type: Literal["video"] = "video"
    url: str
    title: Text = None


class UnknownBlock(Record):
    """A block whose type is unknown or whose fields are unusable; renderers skip it."""

    model_config = ConfigDict(extra="allow")
    type: str = "unknown"
    reason: str = "unknown block type"


KnownBlock = TextBlock | HeaderBlock | ImageBlock | ListBlock | CodeBlock | VideoBlock
Block = KnownBlock | UnknownBlock

_BLOCK_TYPES: dict[str, type[Record]] = {
    "text": TextBlock, "header": HeaderBlock, "image": ImageBlock, "list": ListBlock,
    "code": CodeBlock, "video": VideoBlock}


def parse_block(raw: Any) -> Block:
    """Parse one block; never raises. Unknown or broken blocks become UnknownBlock."""
    if isinstance(raw, Record):
        return raw  # type: ignore[return-value]
    if not isinstance(raw, dict):
        return UnknownBlock(type="invalid", reason="block is not an object")
    kind = raw.get("type")
    model = _BLOCK_TYPES.get(kind) if isinstance(kind, str) else None
    if model is None:  # the reason a stored UnknownBlock gave is kept (it reads back the same)
        reason = raw.get("reason")
        return UnknownBlock(type=str(kind)[:40], reason=reason[:200] if isinstance(reason, str)
                            else "unknown block type")
    try:
        return model.model_validate(raw)  # type: ignore[return-value]
    except ValidationError:
        return UnknownBlock(type=str(kind), reason=f"{kind} block has missing or invalid fields")


def _to_blocks(value: Any) -> Any:
    if value is None:
        return None
    if not isinstance(value, list):
        return [UnknownBlock(type="invalid", reason="blocks is not a list")]
    return [parse_block(item) for item in value]


Blocks = Annotated[list[Block] | None, BeforeValidator(_to_blocks)]


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
        lambda v: ", ".join(_to_str_list(v)) if isinstance(v, list) else _to_str(v))] = None
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
