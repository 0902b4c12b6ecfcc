"""The content cache: the last complete `Workspace`, kept beside site.toml.

Role: load and save one JSON file (`content.json` in `config.cache_path`),
stamped with a cache-format version, the sitegen version, the API url, the
workspace id and the API version that produced it. Loading is one
`model_validate_json` over the whole file (fast: thousands of articles in a
fraction of a second). A corrupt, foreign (other url or workspace) or
old-format file is discarded with a warning, never trusted. Saving is atomic
(temporary file, fsync, `os.replace`), so a reader sees the old file or the new
one, never half of one. It must never make requests, and never be written by
anything but a sync that completed (the sync decides; this module only
writes what it is given).
"""

from __future__ import annotations

import json
import logging
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Discriminator, Tag, ValidationError

from sitegen import __version__
from sitegen.atomicfile import replace_atomically
from sitegen.fetch.records import (
    Article,
    CodeBlock,
    HeaderBlock,
    ImageBlock,
    ListBlock,
    Meta,
    TextBlock,
    UnknownBlock,
    VideoBlock,
)
from sitegen.heap import collector_paused
from sitegen.workspace import ApiVersion, Workspace

log = logging.getLogger("sitegen.fetch")

CACHE_FORMAT = 1
CACHE_FILE = "content.json"


# --- fast loading ----------------------------------------------------------------
# The cache holds records this sitegen already repaired, so reading it needs none of the
# records' tolerant (Python) validators. These subclasses re-declare the same fields with
# plain types, so pydantic-core validates the whole file natively; the objects are still
# instances of the record classes (and dump to the very same JSON).


class _Text(TextBlock):
    pass


class _Header(HeaderBlock):
    level: int = 2


class _Image(ImageBlock):
    caption: str | None = None


class _List(ListBlock):
    items: list[str] = []
    ordered: bool | None = False


class _Code(CodeBlock):
    language: str | None = None


class _Video(VideoBlock):
    title: str | None = None


_KNOWN_BLOCKS = {"text", "header", "image", "list", "code", "video"}


def _block_kind(value: Any) -> str:
    """The tag of a cached block; only UnknownBlock carries `reason` (e.g. an image sans url)."""
    if isinstance(value, dict):
        kind, unknown = value.get("type"), "reason" in value
    else:
        kind, unknown = getattr(value, "type", None), isinstance(value, UnknownBlock)
    return kind if kind in _KNOWN_BLOCKS and not unknown else "unknown"


_CachedBlock = Annotated[
    Annotated[_Text, Tag("text")] | Annotated[_Header, Tag("header")]
    | Annotated[_Image, Tag("image")] | Annotated[_List, Tag("list")]
    | Annotated[_Code, Tag("code")] | Annotated[_Video, Tag("video")]
    | Annotated[UnknownBlock, Tag("unknown")],
    Discriminator(_block_kind),
]


class _Meta(Meta):
    keywords: str | None = None
    description: str | None = None
    tags: list[str] = []


class _Article(Article):
    id: str
    workspaceId: str | None = None
    agentId: str | None = None
    clusterId: str | None = None
    authorIdentityId: str | None = None
    title: str | None = None
    slug: str | None = None
    description: str | None = None
    content: str | None = None
    status: str | None = None
    language: str | None = None
    model: str | None = None
    tone: str | None = None
    tags: list[str] = []
    blocks: list[_CachedBlock] | None = None  # type: ignore[assignment]
    meta: _Meta | None = None
    createdBy: str | None = None
    updatedBy: str | None = None
    createdAt: datetime | None = None
    updatedAt: datetime | None = None


class _Workspace(Workspace):
    articles: list[_Article] = []  # type: ignore[assignment]


class CacheFile(BaseModel):
    """The on-disk shape of the cache."""

    model_config = ConfigDict(extra="ignore")

    format: int
    sitegen: str
    api_url: str
    workspace_id: str
    api_version: ApiVersion
    workspace: Workspace


class _CachedFile(CacheFile):
    workspace: _Workspace


class ContentCache:
    """The cache of one (API url, workspace) pair in one folder."""

    def __init__(self, folder: Path, api_url: str, workspace_id: str) -> None:
        self.folder = folder
        self.api_url = api_url.rstrip("/")
        self.workspace_id = workspace_id

    @property
    def path(self) -> Path:
        return self.folder / CACHE_FILE

    def exists(self) -> bool:
        return self.path.is_file()

    def load(self) -> Workspace | None:
        """The cached workspace, or None (with a warning when a file was there but unusable)."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as error:
            log.warning("cannot read the content cache %s (%s); fetching everything",
                        self.path, error.strerror or type(error).__name__)
            return None
        # Validation allocates ~10^5 records and no cycles: with the cyclic GC paused it
        # does not re-scan the growing heap every few hundred allocations (~40% of a load).
        try:
            with collector_paused():
                cached = _CachedFile.model_validate_json(data)
        except ValidationError:
            log.warning("discarded the content cache %s: %s; fetching everything",
                        self.path, _why_unreadable(data))
            return None
        if cached.format != CACHE_FORMAT:
            log.warning("discarded the content cache %s: it has format %d, this sitegen uses %d; "
                        "fetching everything", self.path, cached.format, CACHE_FORMAT)
            return None
        if cached.api_url.rstrip("/") != self.api_url or cached.workspace_id != self.workspace_id:
            log.warning("discarded the content cache %s: it holds another workspace or service; "
                        "fetching everything", self.path)
            return None
        if cached.workspace.info.id != self.workspace_id:
            log.warning("discarded the content cache %s: its content belongs to another "
                        "workspace; fetching everything", self.path)
            return None
        return cached.workspace

    def save(self, workspace: Workspace) -> bool:
        """Replace the cache atomically; a failure is a warning (the build can go on)."""
        record = CacheFile(
            format=CACHE_FORMAT,
            sitegen=__version__,
            api_url=self.api_url,
            workspace_id=self.workspace_id,
            api_version=workspace.api_version,
            workspace=workspace,
        )
        payload = record.model_dump_json(exclude_none=False).encode("utf-8")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            ignore = self.folder / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# the sitegen content cache: never commit it\n*\n",
                                  encoding="utf-8")
            replace_atomically(self.path, payload, durable=True)
        except OSError as error:
            log.warning("could not write the content cache %s (%s); the next build fetches "
                        "again", self.path, error.strerror or type(error).__name__)
            return False
        return True


def _why_unreadable(data: bytes) -> str:
    try:
        raw = json.loads(data)
    except ValueError:
        return "it is not valid JSON (corrupt or cut short)"
    if isinstance(raw, dict) and raw.get("format") != CACHE_FORMAT:
        return f"it was written in another cache format ({raw.get('format')!r})"
    return "its content does not match the cache format (corrupt or from another version)"
