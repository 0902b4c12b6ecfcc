"""The block types an article's `blocks` may hold: each declared once, in one registry.

Role: an entry (`BlockType`) names a type and gives its record (the pydantic model its
fields are read into, tolerant like every record), its template (`blocks/<type>.html`) and
its plain text (what counts as words, and what the `unknown` block shows when a theme has
no template for it). Everything else derives from the registry: parsing (`parse_block`: a
type with no entry, or fields its record refuses, becomes an `UnknownBlock`), the body's
word count (`sitegen.model.body`), the renderer (`sitegen.render.blocks`: the built-in
types' sanitising views by name; any other registered type shows its fields as text,
escaped) and the stored bodies (this module is part of the code fingerprint). `register`
adds a type: one call and one template, no plugin machinery. A URL field of an added type
is declared `SafeUrl`, so an unsafe one makes the block unknown rather than a link (or
`LinkUrl` when the link is optional: an unsafe one is dropped, the block kept); a text field
that allows inline markdown is declared `InlineMarkdown`, and the renderer hands the template
its sanitised HTML (the way it renders a text block's) instead of the text.
This module must never do I/O, log, or render HTML.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import AfterValidator, BeforeValidator, ConfigDict, SerializeAsAny, ValidationError

from sitegen.fetch.fields import Flag, Record, StrList, Text, to_str
from sitegen.urls import safe_http_url

#: The type name of the block that stands for every block sitegen cannot show as its type.
UNKNOWN = "unknown"
UNKNOWN_TEMPLATE = f"blocks/{UNKNOWN}.html"
_NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")


def _checked_url(value: str) -> str:
    url = safe_http_url(value)
    if url is None:
        raise ValueError("not a safe http(s) or site URL")
    return url


#: A record field holding a URL a template may link to: unsafe ones refuse the block.
SafeUrl = Annotated[str, AfterValidator(_checked_url)]


def _web_url(value: Any) -> str | None:
    url = safe_http_url(value) if isinstance(value, str) else None
    return url if url is not None and url.lower().startswith(("http://", "https://")) else None


#: An optional http(s) link of a block (a source): one that is not a safe absolute http(s)
#: URL is dropped (None), and the block is kept without it.
LinkUrl = Annotated[str | None, BeforeValidator(_web_url)]


class _Inline:
    """The mark of an `InlineMarkdown` field (pydantic keeps it in the field's metadata)."""

    def __repr__(self) -> str:
        return "InlineMarkdown"


_INLINE = _Inline()
#: A text field whose inline markdown (emphasis, code, links) the renderer draws, sanitised
#: like a text block's: the template gets that HTML, never the raw text.
InlineMarkdown = Annotated[str, BeforeValidator(to_str), _INLINE]


class BlockRecord(Record):
    """Base of every block's record: `type` names its registry entry."""

    type: str


class TextBlock(BlockRecord):
    type: Literal["text"] = "text"
    content: str = ""


def _to_level(value: Any) -> Any:
    try:
        return min(6, max(1, int(value)))
    except (TypeError, ValueError, OverflowError):  # OverflowError: an infinite float
        return 2


class HeaderBlock(BlockRecord):
    type: Literal["header"] = "header"
    content: str = ""
    level: Annotated[int, BeforeValidator(_to_level)] = 2


class ImageBlock(BlockRecord):
    type: Literal["image"] = "image"
    url: str
    caption: Text = None
    #: The image's own text alternative (not in the API reference: read when a record has it).
    alt: Text = None


class ListBlock(BlockRecord):
    type: Literal["list"] = "list"
    items: StrList = []
    ordered: Flag = False


class CodeBlock(BlockRecord):
    type: Literal["code"] = "code"
    content: str = ""
    language: Text = None


class VideoBlock(BlockRecord):
    type: Literal["video"] = "video"
    url: str
    title: Text = None


class QuoteBlock(BlockRecord):
    """A quotation: its `text` (inline markdown), who said it, and the work it is from
    (`source`, a title) and that work's address (`url`, http(s) only), each optional."""

    type: Literal["quote"] = "quote"
    text: InlineMarkdown = ""
    attribution: Text = None
    source: Text = None
    url: LinkUrl = None


class UnknownBlock(BlockRecord):
    """A block of a type with no entry, or whose fields its record refused: shown through
    `blocks/unknown.html` (its text, `content`, when the service's block had one)."""

    model_config = ConfigDict(extra="allow")
    type: str = UNKNOWN
    reason: str = "unknown block type"
    content: str = ""


R = TypeVar("R", bound=BlockRecord)


@dataclass(frozen=True, slots=True)
class BlockType(Generic[R]):
    """One block type: its name, its record, and its plain text."""

    name: str
    record: type[R]
    text: Callable[[R], str]
    #: Its record's `InlineMarkdown` fields (the renderer draws them as sanitised HTML).
    inline: frozenset[str] = frozenset()

    @property
    def template(self) -> str:
        """The template that draws it: `blocks/<name>.html`."""
        return f"blocks/{self.name}.html"


_TYPES: dict[str, BlockType[Any]] = {}


def register(name: str, record: type[R], text: Callable[[R], str]) -> BlockType[R]:
    """Declare the block type *name*: blocks of that type are read into *record*, drawn by
    `blocks/<name>.html` and count *text*'s words. A ValueError for a name taken or not
    lowercase letters, digits, `-` and `_`."""
    if not _NAME.fullmatch(name) or name == UNKNOWN or name in _TYPES:
        raise ValueError(f"block type {name!r} is taken or not a valid name")
    inline = frozenset(field for field, info in record.model_fields.items()
                       if any(mark is _INLINE for mark in info.metadata))
    entry = BlockType(name, record, text, inline)
    _TYPES[name] = entry
    return entry


def unregister(name: str) -> None:
    """Forget the block type *name* (a test's fixture cleaning up)."""
    _TYPES.pop(name, None)


def block_type(name: str) -> BlockType[Any] | None:
    """The entry of the type *name*, or None."""
    return _TYPES.get(name)


def block_types() -> list[BlockType[Any]]:
    """Every registered type, in the order they were declared."""
    return list(_TYPES.values())


def plain_text(block: BlockRecord) -> str:
    """The block's plain text (its entry's; an unknown block's `content`)."""
    entry = None if isinstance(block, UnknownBlock) else _TYPES.get(block.type)
    if entry is None:
        return block.content if isinstance(block, UnknownBlock) else ""
    return entry.text(block)


register("text", TextBlock, lambda b: b.content)
register("header", HeaderBlock, lambda b: b.content)
register("image", ImageBlock, lambda b: b.caption or "")
register("list", ListBlock, lambda b: " ".join(b.items))
register("code", CodeBlock, lambda b: b.content)
register("video", VideoBlock, lambda b: "")
register("quote", QuoteBlock,
         lambda b: " ".join(filter(None, (b.text, b.attribution, b.source))))


def _unknown(kind: object, raw: dict[str, Any], reason: str) -> UnknownBlock:
    text = next((v for k in ("content", "text") if isinstance(v := raw.get(k), str)), "")
    return UnknownBlock(type=str(kind)[:40], reason=reason[:200], content=text)


def parse_block(raw: Any) -> BlockRecord:
    """Parse one block; never raises. Unknown or broken blocks become UnknownBlock."""
    if isinstance(raw, BlockRecord):
        return raw
    if not isinstance(raw, dict):
        return UnknownBlock(type="invalid", reason="block is not an object")
    kind = raw.get("type")
    entry = _TYPES.get(kind) if isinstance(kind, str) else None
    if entry is None:  # the reason a stored UnknownBlock gave is kept (it reads back the same)
        reason = raw.get("reason")
        return _unknown(kind, raw, reason if isinstance(reason, str) else "unknown block type")
    try:
        parsed: BlockRecord = entry.record.model_validate(raw)
        return parsed
    except ValidationError:
        return _unknown(kind, raw, f"{kind} block has missing or invalid fields")


def _to_blocks(value: Any) -> Any:
    if value is None:
        return None
    if not isinstance(value, list):
        return [UnknownBlock(type="invalid", reason="blocks is not a list")]
    return [parse_block(item) for item in value]


#: An article's `blocks` field: each item through `parse_block` (serialized as its type).
Blocks = Annotated[list[SerializeAsAny[BlockRecord]] | None, BeforeValidator(_to_blocks)]
