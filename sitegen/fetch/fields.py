"""The tolerant field types every API record is made of, and the records' base class.

Role: the coercions a tolerant reader needs (scalars to text, a comma-separated string to a
list, ISO 8601 to an aware datetime, "true"/"1" to a bool) as annotated pydantic types, and
`Record`, which ignores unknown fields. `sitegen.fetch.records` (the API's records) and
`sitegen.blocktypes` (the block types' records) are built from them. This module must never
do I/O or log.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field


def to_str(value: Any) -> Any:
    return str(value) if isinstance(value, (bool, int, float)) else value


def to_str_list(value: Any) -> Any:
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


def parse_timestamp(value: Any) -> datetime | None:
    """A service timestamp as an aware UTC datetime; None when it is none or unreadable."""
    parsed = _to_datetime(value)
    return parsed if isinstance(parsed, datetime) else None


def _to_bool(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip().lower() in {"true", "1", "yes"}
    return value


Text = Annotated[str | None, BeforeValidator(to_str)]
StrList = Annotated[list[str], BeforeValidator(to_str_list)]
Timestamp = Annotated[datetime | None, BeforeValidator(_to_datetime)]
Flag = Annotated[bool | None, BeforeValidator(_to_bool)]
RecordId = Annotated[str, BeforeValidator(to_str), Field(min_length=1)]


class Record(BaseModel):
    """Base of every record read from the API: unknown fields are ignored."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)
