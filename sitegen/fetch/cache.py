"""The content cache: the last complete `Workspace`, kept beside site.toml.

Role: load and save the workspace as JSON in `config.cache_path`: a base file
(`content.json`), stamped with a cache-format version, the sitegen version, the
API url, the workspace id, the API version that produced it and a random
*generation*, and beside it an optional changes file (`content-changes.json`)
that names that generation and holds the workspace with only the articles that
differ from the base, plus the ids the base has and the workspace no longer
does. A sync that changed a few articles rewrites only the changes file (a
scheduled rebuild after one edit writes kilobytes, not the whole cache); once
the changes grow past an eighth of the articles, the base is rewritten with a
new generation and the changes file removed. Loading is one `model_validate_json`
per file (fast: thousands of articles in a fraction of a second). Each article's
blocks are stored packed, as their count and one JSON text (`[3, "[{...},...]"]`),
and become block objects only when something reads them (`PackedBlocks`): a load
makes one string per article instead of thousands of dicts (caches written before
hold plain block lists, still read, as `LazyBlocks`). A corrupt,
foreign (other url or workspace) or old-format base is discarded with a warning,
never trusted; a changes file of another generation is a leftover (ignored), and
an unreadable one is a warning (the base alone is an older, consistent snapshot
that the next sync brings up to date). Saving is atomic (temporary file, fsync,
`os.replace`), so a reader sees the old file or the new one, never half of one.
`state` tells what the files hold after a load or save (`CacheState`: the base file's
identity and the changes file's records by fingerprint), and `read_changes` reads the
changes file alone: the model memo (`sitegen.sitememo`) is keyed by the one and
resumed from the other, without reading the base. Every save also writes the cache's
index (`sitegen.fetch.cacheindex`), and `save_changes` applies a re-sync planned from
that index to the changes file without reading the base either.
It must never make requests, and never be written by anything but a sync that
completed (the sync decides; this module only writes what it is given).
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    Tag,
    TypeAdapter,
    ValidationError,
    field_serializer,
    field_validator,
)

from sitegen import __version__
from sitegen.atomicfile import replace_atomically
from sitegen.errors import CacheError
from sitegen.fetch.cacheindex import (
    INDEX_FILE,
    CacheIndex,
    Stat,
    file_stat,
    listing_values,
    load_index,
    rows_of,
    save_index,
)
from sitegen.fetch.records import (
    Article,
    Block,
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
from sitegen.lazylist import LazyList
from sitegen.workspace import ApiVersion, Workspace

if TYPE_CHECKING:
    from sitegen.config import Config

log = logging.getLogger("sitegen.fetch")

CACHE_FORMAT = 1
CACHE_FILE = "content.json"
CHANGES_FILE = "content-changes.json"
#: The changes file is kept while it holds at most this many articles, or an eighth of
#: the base's, whichever is more; past that the base is rewritten.
MIN_CHANGES = 64


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


_CACHED_BLOCKS: TypeAdapter[list[Block]] = TypeAdapter(list[_CachedBlock])  # type: ignore[arg-type]


class LazyBlocks(LazyList[Block]):
    """A cached article's blocks, made into block objects the first time they are read.

    A rebuild after one change renders a handful of articles; building the other
    thousands of articles' ~19,000 block objects at every load was a third of it. The
    stand-ins are the blocks' plain JSON values, as the cache file has them. Blocks
    that do not validate (an edited or damaged file) are a `CacheError` then, with
    the way out.
    """

    __slots__ = ()

    def _produce(self, stand_ins: list[Any]) -> list[Block]:
        try:
            with collector_paused():
                return _CACHED_BLOCKS.validate_python(stand_ins)
        except ValidationError:
            raise CacheError(
                "the content cache holds an article whose blocks do not match the cache "
                "format (edited or damaged): run `sitegen build --refresh` to fetch "
                "everything again"
            ) from None


class PackedBlocks(LazyBlocks):
    """Blocks stored packed (their JSON text), parsed and made objects when first read.

    The text may itself be deferred (the model memo reads its article bodies only when
    one is asked for): *packed* is then what reads it.
    """

    __slots__ = ("_packed",)

    def __init__(self, count: int, packed: str | Callable[[], str]) -> None:
        super().__init__([None] * count)
        self._packed = packed

    @property
    def packed(self) -> str:
        """The JSON text of the blocks as the cache holds it."""
        packed = self._packed
        if not isinstance(packed, str):
            packed = self._packed = packed()
        return packed

    def _produce(self, stand_ins: list[Any]) -> list[Block]:
        try:
            values = json.loads(self.packed)
        except ValueError:
            values = None
        if not isinstance(values, list) or len(values) != len(stand_ins):
            raise CacheError(
                "the content cache holds an article whose blocks are damaged: run "
                "`sitegen build --refresh` to fetch everything again"
            )
        return super()._produce(values)


def _lazy_blocks(value: Any) -> list[Block] | None:
    """The blocks of a cached article, packed (this format) or a list of objects (earlier)."""
    if value is None:
        return None
    if type(value) is list:
        if len(value) == 2 and type(value[0]) is int and type(value[1]) is str:
            count, packed = value
            if 0 <= count <= len(packed) // 2:  # each block takes "{}" at least
                return PackedBlocks(count, packed)
        elif all(type(item) is dict for item in value):
            return LazyBlocks(value)
    raise ValueError("the blocks are neither packed nor a list of objects")


def pack_blocks(value: Any) -> list[Any] | None:
    """Blocks as the cache stores them: [count, JSON text] (unread ones as they were read)."""
    if value is None:
        return None
    if isinstance(value, PackedBlocks) and not value.loaded:
        return [len(value), value.packed]
    if isinstance(value, LazyBlocks) and not value.loaded:  # an earlier cache's plain values
        unread: list[Any] = list(list.__iter__(value))  # the stand-ins: plain JSON values
        return [len(unread), json.dumps(unread, separators=(",", ":"))]
    blocks = value.load() if isinstance(value, LazyList) else value
    values = [b.model_dump(mode="json") if isinstance(b, BaseModel) else b for b in blocks]
    return [len(values), json.dumps(values, separators=(",", ":"))]  # ASCII: no lone surrogate


#: The serialization context that writes blocks packed (see `Article._loaded_blocks`).
PACKED = {"pack_blocks": pack_blocks}


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
    # Packed (or, from earlier caches, plain JSON values) when read; block objects on first
    # use (see PackedBlocks).
    blocks: Any = None
    meta: _Meta | None = None
    createdBy: str | None = None
    updatedBy: str | None = None
    createdAt: datetime | None = None
    updatedAt: datetime | None = None

    @field_validator("blocks", mode="after")
    @classmethod
    def _lazy(cls, value: Any) -> list[Block] | None:
        return _lazy_blocks(value)

    @field_serializer("blocks", mode="wrap")
    def _loaded_blocks(self, value: Any, handler: SerializerFunctionWrapHandler,
                       info: SerializationInfo) -> Any:
        """As `Article`'s, for this class's untyped field: each block as JSON values.

        (The cache writes through the `Workspace` type: `Article`'s serializer packs.)
        """
        if value is None:
            return handler(None)
        blocks = value.load() if isinstance(value, LazyList) else value
        return handler([b.model_dump(mode="json") if isinstance(b, BaseModel) else b
                        for b in blocks])


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
    #: A random name of this base, changed at every rewrite; a changes file names it.
    generation: str = ""


class ChangesFile(CacheFile):
    """The on-disk shape of the changes file: `workspace.articles` holds only the changes."""

    base: str
    removed: list[str] = []


class _CachedFile(CacheFile):
    workspace: _Workspace


class _CachedChanges(ChangesFile):
    workspace: _Workspace


_ARTICLE: TypeAdapter[Article] = TypeAdapter(Article)


def record_fingerprint(article: Article) -> str:
    """A hash of *article* as the cache stores it (its blocks stay packed)."""
    return hashlib.sha256(_ARTICLE.dump_json(article, context=PACKED)).hexdigest()[:32]


def rest_fingerprint(workspace: Workspace) -> str:
    """A hash of everything in *workspace* but its articles."""
    return hashlib.sha256(workspace.model_dump_json(exclude={"articles"}).encode()).hexdigest()[:32]


@dataclass(frozen=True)
class CacheState:
    """Which content the cache holds, as far as its changes file tells (memo keys).

    `base` is the base file's (size, mtime in ns, inode) and `generation` the name of
    the base a changes file applies to; `changes` maps each article of the changes
    file to its `record_fingerprint`; `removed` are the ids the changes drop; `rest`
    fingerprints the workspace besides its articles (the base's, or the changes
    file's when there is one: `has_changes`).
    """

    base: tuple[int, int, int]
    generation: str
    has_changes: bool
    changes: dict[str, str]
    removed: tuple[str, ...]
    rest: str


@dataclass(frozen=True)
class ChangedContent:
    """The cache's changes file as it stands, read without its base (`read_changes`)."""

    base: tuple[int, int, int]
    #: None when there is no changes file for the base (absent, or left over from another).
    generation: str | None
    articles: dict[str, Article]
    removed: tuple[str, ...]
    rest: str


class ContentCache:
    """The cache of one (API url, workspace) pair in one folder."""

    def __init__(self, folder: Path, api_url: str, workspace_id: str) -> None:
        self.folder = folder
        self.api_url = api_url.rstrip("/")
        self.workspace_id = workspace_id
        #: The generation and articles (by id) of the base the last `load` or `save` saw.
        self._base: tuple[str, dict[str, Article]] | None = None
        #: What the files hold after the last `load` or `save` (None when unknown).
        self.state: CacheState | None = None
        #: The changes file's stat as the last `load` or `save` left it (for the index).
        self._changes_stat: Stat | None = None

    @classmethod
    def for_config(cls, config: Config) -> ContentCache:
        """The cache of *config*'s service and workspace, in its cache folder."""
        return cls(config.cache_path, config.api.base_url, config.api.workspace)

    @property
    def path(self) -> Path:
        return self.folder / CACHE_FILE

    def exists(self) -> bool:
        return self.path.is_file()

    @property
    def changes_path(self) -> Path:
        return self.folder / CHANGES_FILE

    def load_index(self) -> CacheIndex | None:
        """The cache's index (`sitegen.fetch.cacheindex`) if it describes the files as they are."""
        return load_index(self.folder, self.path, self.changes_path, self.api_url,
                          self.workspace_id)

    def drop_index(self) -> None:
        """Remove the index (one that misled a sync): the next sync reads the whole cache."""
        try:
            (self.folder / INDEX_FILE).unlink(missing_ok=True)
        except OSError:
            pass

    def save_index(self, workspace: Workspace) -> bool:
        """Index the files the last `load` or `save` of *workspace* (that very content) saw."""
        state, base = self.state, self._base
        if state is None or base is None or not state.generation:
            return False
        index = CacheIndex(state, self._changes_stat, workspace.api_version,
                           workspace.articles_exact, len(base[1]),
                           rows_of(workspace.articles, base[1]))
        return save_index(self.folder, index, self.api_url, self.workspace_id)

    def load(self) -> Workspace | None:
        """The cached workspace, or None (with a warning when a file was there but unusable)."""
        self._base = None
        self.state = None
        base = file_stat(self.path)  # before reading: a base replaced meanwhile looks changed
        self._changes_stat = file_stat(self.changes_path)
        cached = self._read_base()
        if cached is None:
            return None
        workspace = cached.workspace
        self._base = (cached.generation, {a.id: a for a in workspace.articles})
        changes = self._read_changes(cached.generation) if cached.generation else None
        if changes is None:
            if base is not None:
                self.state = CacheState(base, cached.generation, False, {}, (),
                                        rest_fingerprint(workspace))
            return workspace
        removed = set(changes.removed)
        fresh = {a.id: a for a in changes.workspace.articles}
        if base is not None:
            self.state = CacheState(
                base, cached.generation, True,
                {key: record_fingerprint(a) for key, a in fresh.items()},
                tuple(changes.removed), rest_fingerprint(changes.workspace))
        articles = [fresh.pop(a.id, a) for a in workspace.articles if a.id not in removed]
        articles.extend(fresh.values())
        return changes.workspace.model_copy(update={"articles": articles})

    def read_changes(self, generation: str) -> ChangedContent | None:
        """The changes file over the base of *generation*, without reading the base.

        None when the base is missing or the changes file cannot be read (`load` then
        tells why). A changes file of another base is a leftover: `generation` None.
        """
        base = file_stat(self.path)
        if base is None:
            return None
        changes, why = self._parse_changes(generation)
        if why:
            return None
        if changes is None:
            return ChangedContent(base, None, {}, (), "")
        return ChangedContent(base, generation, {a.id: a for a in changes.workspace.articles},
                              tuple(changes.removed), rest_fingerprint(changes.workspace))

    def _read_base(self) -> _CachedFile | None:
        data = self._read(self.path)
        if data is None:
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
        if not self._ours(cached):
            log.warning("discarded the content cache %s: it holds another workspace or service; "
                        "fetching everything", self.path)
            return None
        return cached

    def _read_changes(self, generation: str) -> _CachedChanges | None:
        """The changes file made over the base of *generation*, or None."""
        changes, why = self._parse_changes(generation)
        if why:
            log.warning("ignored the content cache's changes file %s (%s): the content is the "
                        "last full save's, which the next sync brings up to date",
                        self.changes_path, why)
        return changes

    def _parse_changes(self, generation: str) -> tuple[_CachedChanges | None, str]:
        """(changes, "") when usable, (None, "") when absent or left over, else (None, why)."""
        try:
            data = self.changes_path.read_bytes()
        except FileNotFoundError:
            return None, ""
        except OSError as error:
            return None, error.strerror or type(error).__name__
        try:
            changes = _CachedChanges.model_validate_json(data)
        except ValidationError:
            return None, _why_unreadable(data)
        if changes.base != generation:
            return None, ""  # left over from before the base was rewritten
        if changes.format != CACHE_FORMAT or not self._ours(changes):
            return None, "it belongs to another cache format, workspace or service"
        return changes, ""

    def _read(self, path: Path) -> bytes | None:
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as error:
            log.warning("cannot read the content cache %s (%s); fetching everything",
                        path, error.strerror or type(error).__name__)
            return None

    def _ours(self, cached: CacheFile) -> bool:
        return (cached.api_url.rstrip("/") == self.api_url
                and cached.workspace_id == self.workspace_id
                and cached.workspace.info.id == self.workspace_id)

    def save(self, workspace: Workspace) -> bool:
        """Save *workspace* atomically; a failure is a warning (the build can go on).

        After a `load` of this same cache, only the articles that are not the very
        objects it loaded from the base go to the changes file, when they are few;
        otherwise the base is rewritten (and the changes file, now stale, removed).
        """
        changed, removed = self._changes(workspace.articles)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            ignore = self.folder / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# the sitegen content cache: never commit it\n*\n",
                                  encoding="utf-8")
            self.state = None
            if changed is not None and self._base is not None:
                changes = ChangesFile(
                    base=self._base[0], removed=removed, **self._header(workspace),
                    workspace=workspace.model_copy(update={"articles": changed}))
                replace_atomically(self.changes_path, _dumped(changes), durable=True)
                self._changes_stat = file_stat(self.changes_path)
                base = file_stat(self.path)
                if base is not None:
                    self.state = CacheState(
                        base, self._base[0], True,
                        {a.id: record_fingerprint(a) for a in changed}, tuple(removed),
                        rest_fingerprint(workspace))
            else:
                generation = secrets.token_hex(16)
                record = CacheFile(generation=generation, **self._header(workspace),
                                   workspace=workspace)
                replace_atomically(self.path, _dumped(record), durable=True)
                self._base = (generation, {a.id: a for a in workspace.articles})
                self.changes_path.unlink(missing_ok=True)
                self._changes_stat = None
                base = file_stat(self.path)
                if base is not None:
                    self.state = CacheState(base, generation, False, {}, (),
                                            rest_fingerprint(workspace))
        except OSError as error:
            log.warning("could not write the content cache %s (%s); the next build fetches "
                        "again", self.path, error.strerror or type(error).__name__)
            return False
        self.save_index(workspace)
        return True

    def save_changes(self, rest: Workspace, changed: Sequence[Article], dropped: set[str],
                     index: CacheIndex) -> bool:
        """Save a re-sync's changes to the cache *index* describes, in the changes file alone.

        *rest* is the new workspace without its articles, *changed* its articles that are
        new or differ from the cache's (new ones in the order they follow the others),
        *dropped* the ids it no longer has. The base is not read. False when this cannot
        be done so (the changes would outgrow the changes file, or it cannot be read or
        written): the caller then loads the cache and saves the workspace in full.
        """
        state = index.state
        current: dict[str, Article] = {}
        if state.has_changes:
            changes, _ = self._parse_changes(state.generation)
            if changes is None:
                return False
            current = {a.id: a for a in changes.workspace.articles}
        removed = set(state.removed)
        rows = dict(index.rows)
        fingerprints = dict(state.changes)
        for article in changed:
            key = article.id
            current[key] = article  # a changed one keeps its place, a new one goes last
            row = rows.get(key)
            rows[key] = (row[0] if row is not None else key in removed, listing_values(article))
            removed.discard(key)
            fingerprints[key] = record_fingerprint(article)
        for key in dropped:
            row = rows.pop(key, None)
            current.pop(key, None)
            fingerprints.pop(key, None)
            if row is not None and row[0]:
                removed.add(key)
        if _too_many(len(current), len(removed), index.base_count):
            return False
        if file_stat(self.path) != state.base:
            return False  # rewritten since the index was read: the full save reads it again
        gone = sorted(removed)
        record = ChangesFile(base=state.generation, removed=gone, **self._header(rest),
                             workspace=rest.model_copy(update={"articles": list(current.values())}))
        self.state = None
        try:
            replace_atomically(self.changes_path, _dumped(record), durable=True)
        except OSError:
            return False  # the full save tries again, and tells
        self._changes_stat = file_stat(self.changes_path)
        base = file_stat(self.path)
        if base is None or base != state.base:
            return True  # moved this very moment (another sync): no state, no index
        self.state = CacheState(base, state.generation, True, fingerprints, tuple(gone),
                                rest_fingerprint(rest))
        save_index(self.folder, CacheIndex(self.state, self._changes_stat, rest.api_version,
                                           rest.articles_exact, index.base_count, rows),
                   self.api_url, self.workspace_id)
        return True

    def _header(self, workspace: Workspace) -> dict[str, Any]:
        return {"format": CACHE_FORMAT, "sitegen": __version__, "api_url": self.api_url,
                "workspace_id": self.workspace_id, "api_version": workspace.api_version}

    def _changes(self, articles: Sequence[Article]) -> tuple[list[Article] | None, list[str]]:
        """The articles that differ from the loaded base and the ids gone from it.

        None when the base was not loaded here or the changes are too many to keep apart.
        """
        if self._base is None or not self._base[0]:
            return None, []
        base = self._base[1]
        changed = [a for a in articles if base.get(a.id) is not a]
        present = {a.id for a in articles}
        removed = sorted(set(base) - present)
        if _too_many(len(changed), len(removed), len(base)):
            return None, []
        return changed, removed


def _too_many(changed: int, removed: int, base: int) -> bool:
    """True when a changes file would hold too much of a base of *base* articles to pay."""
    return max(changed, removed) > max(MIN_CHANGES, base // 8)


def _dumped(record: CacheFile) -> bytes:
    return record.model_dump_json(exclude_none=False, context=PACKED).encode("utf-8")


def _why_unreadable(data: bytes) -> str:
    try:
        raw = json.loads(data)
    except ValueError:
        return "it is not valid JSON (corrupt or cut short)"
    if isinstance(raw, dict) and raw.get("format") != CACHE_FORMAT:
        return f"it was written in another cache format ({raw.get('format')!r})"
    return "its content does not match the cache format (corrupt or from another version)"
