"""What each page read while it rendered: the observed dependencies of incremental builds.

Role: a page is rendered again exactly when something it read changed, whatever its
templates are (a user's own as much as the built-in themes). The Jinja environment
(`RecordingEnvironment`) observes every read a template makes of the site model:

- `obj.attr` and `obj["attr"]` on an *entity* (the site, an article, a section, a tag,
  a page: `Registry` gives each a stable key) → the read `A key attr`;
- an entity handed whole to Python code (a filter that may look inside it, a method of
  it, `{{ entity }}` printed) → the deep read `D key` (every field);
- a template loaded (the page's own, `extends`, `include`, `import`) → `T name`;
- a fragment (a cached partial) rendered with another page's context → `C key`;
- an image shown (`picture()`, `image()`, a body's images) → `I url`, whose fingerprint is
  what this build made of that image (`sitegen.images.picture.ImageMap`).

Each read is a string; `Fingerprints` turns one into the fingerprint of what it gives
now (an entity by its key, a list by its members, a value by its contents), so the
next build compares each distinct read once and re-renders the pages whose reads
changed. Lists, values and config objects reached through an entity are covered by the
read that produced them. Pages read nothing else: the rest of their context is
fingerprinted whole (`context_fingerprint`). This module must never render, write
files, or read the wall clock.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import date, datetime
from typing import Any

from jinja2 import Environment, Template
from jinja2.runtime import Context, Macro
from markupsafe import Markup
from pydantic import BaseModel

from sitegen.model.views import (
    AgentView,
    ArticleView,
    AuthorView,
    ClusterView,
    LanguageView,
    OwnPage,
    Page,
    SectionIndex,
    Site,
    SocialPostView,
    TagView,
)

#: How each kind of entity is keyed (stable from one build to the next).
_KEYS: dict[type, Callable[[Any], str]] = {
    Site: lambda _: "site",
    ArticleView: lambda a: "article:" + a.id,
    AgentView: lambda s: "agent:" + s.id,
    ClusterView: lambda s: "cluster:" + s.id,
    AuthorView: lambda s: "author:" + s.id,
    TagView: lambda s: "tag:" + s.id,
    LanguageView: lambda s: "language:" + s.id,
    SocialPostView: lambda s: "social:" + s.id,
    SectionIndex: lambda s: "index:" + s.kind,
    Page: lambda p: "page:" + p.path,
    OwnPage: lambda p: "own:" + p.slug,
}
#: Jinja's own filters that reach inside entities only through the environment's
#: `getattr`/`getitem` (so their reads are observed) or not at all.
_OBSERVED_FILTERS = frozenset({
    "attr", "batch", "count", "d", "default", "first", "groupby", "last", "length", "list",
    "map", "max", "min", "reject", "rejectattr", "reverse", "select", "selectattr", "slice",
    "sort", "sum", "unique", "items",
})


#: Values printed as they are, which never hold an entity.
_PLAIN = frozenset({str, Markup, int, float, bool, type(None)})


class Registry:
    """The entities of one Site by key, and each entity's key by identity."""

    def __init__(self, site: Site) -> None:
        self.objects: dict[str, object] = {}
        self.keys: dict[int, str] = {}
        self._add(site)
        for group in (site.articles, site.agents, site.clusters, site.authors, site.tags,
                      site.languages, site.social_posts, site.own_pages, site.pages):
            for entity in group:
                self._add(entity)
        for page in site.pages:
            if page.obj is not None and id(page.obj) not in self.keys:
                self._add(page.obj)

    def _add(self, entity: object) -> None:
        key = _KEYS[type(entity)](entity)
        self.objects.setdefault(key, entity)
        self.keys[id(entity)] = key


class Recorder:
    """The reads of one page (or of one cached fragment) while it renders."""

    __slots__ = ("keys", "reads")

    def __init__(self, keys: dict[int, str]) -> None:
        self.keys = keys
        self.reads: set[str] = set()

    def deep(self, value: object) -> None:
        """Note that Python code saw *value* whole (an entity, or a list of entities)."""
        key = self.keys.get(id(value))
        if key is not None:
            self.reads.add("D\x00" + key)
        elif isinstance(value, (list, tuple)):
            for item in value:
                item_key = self.keys.get(id(item))
                if item_key is not None:
                    self.reads.add("D\x00" + item_key)


class RecordingContext(Context):
    """A template context whose calls note what Python code was handed whole."""

    def call(__self, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        recorder = __self.environment.recorder  # type: ignore[attr-defined]
        if recorder is not None and not isinstance(__obj, Macro) and not getattr(
                __obj, "sitegen_observed", False):
            recorder.deep(getattr(__obj, "__self__", None))
            for value in (*args, *kwargs.values()):
                recorder.deep(value)
        return super().call(__obj, *args, **kwargs)


class RecordingEnvironment(Environment):
    """A Jinja environment that notes each read into its current `recorder`."""

    context_class = RecordingContext

    def __init__(self, **options: Any) -> None:
        super().__init__(finalize=self._finalize, **options)
        #: Where reads go while a page renders (None: nothing is recorded).
        self.recorder: Recorder | None = None

    def getattr(self, obj: Any, attribute: str) -> Any:
        recorder = self.recorder
        if recorder is not None:
            key = recorder.keys.get(id(obj))
            if key is not None:
                recorder.reads.add(f"A\x00{key}\x00{attribute}")
        try:  # Jinja's own rule, inlined: the attribute first, then the item
            return getattr(obj, attribute)
        except AttributeError:
            return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        value = super().getitem(obj, argument)
        recorder = self.recorder
        if recorder is not None and isinstance(argument, str):
            key = recorder.keys.get(id(obj))
            if key is not None:
                recorder.reads.add(f"A\x00{key}\x00{argument}")
        return value

    def get_template(self, name: str | Template, parent: str | None = None,
                     globals: Any = None) -> Template:
        template = super().get_template(name, parent, globals)
        if self.recorder is not None:  # the name asked: a prefix loader names it without
            asked = self.join_path(name, parent) if isinstance(name, str) and parent else name
            if isinstance(asked, str):  # its prefix ("default/base.html" → "base.html")
                self.recorder.reads.add("T\x00" + asked)
            elif template.name is not None:
                self.recorder.reads.add("T\x00" + template.name)
        return template

    def select_template(self, names: Iterable[str | Template], parent: str | None = None,
                        globals: Any = None) -> Template:
        names = list(names)
        if self.recorder is not None:  # every candidate: one appearing changes the choice
            for name in names:
                if isinstance(name, str):
                    self.recorder.reads.add("T\x00" + self.join_path(name, parent)
                                            if parent else "T\x00" + name)
        return super().select_template(names, parent, globals)

    def _finalize(self, value: Any) -> Any:
        if self.recorder is not None and type(value) not in _PLAIN:
            self.recorder.deep(value)
        return value

    def observe_filters(self) -> None:
        """Wrap every filter that may look inside an entity so it notes a deep read."""
        for name, function in list(self.filters.items()):
            if name not in _OBSERVED_FILTERS:
                self.filters[name] = _observing(self, function)

    @contextmanager
    def recording(self, keys: dict[int, str]) -> Iterator[Recorder]:
        """Record into a fresh Recorder for the block (nested blocks restore the outer one)."""
        outer = self.recorder
        recorder = self.recorder = Recorder(keys)
        try:
            yield recorder
        finally:
            self.recorder = outer


def _observing(env: RecordingEnvironment, function: Callable[..., Any]) -> Callable[..., Any]:
    def observed(*args: Any, **kwargs: Any) -> Any:
        recorder = env.recorder
        if recorder is not None:
            for value in (*args, *kwargs.values()):
                recorder.deep(value)
        return function(*args, **kwargs)

    observed.__dict__.update(getattr(function, "__dict__", {}))  # pass_context & co. markers
    observed.__name__ = getattr(function, "__name__", "filter")
    return observed


# --- fingerprints ------------------------------------------------------------------


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class Fingerprints:
    """What each read gives in one Site, as a 16-byte fingerprint (memoized per read)."""

    def __init__(self, registry: Registry, template_source: Callable[[str], str | None],
                 page_context: Callable[[Page], bytes],
                 image: Callable[[str], str] | None = None) -> None:
        self.registry = registry
        self._image = image
        self._source = template_source
        self._page_context = page_context
        self._known: dict[str, bytes] = {}

    def of(self, read: str) -> bytes:
        """The fingerprint of *read* now (a read whose entity is gone gives b"")."""
        found = self._known.get(read)
        if found is None:
            found = self._known[read] = self._compute(read)
        return found

    def _compute(self, read: str) -> bytes:
        kind, _, rest = read.partition("\x00")
        if kind == "T":
            source = self._source(rest)
            return _digest("absent" if source is None else "source:" + source)
        if kind == "I":
            return _digest(self._image(rest) if self._image is not None else "")
        key, _, attribute = rest.partition("\x00")
        entity = self.registry.objects.get(key)
        if entity is None:
            return b""
        if kind == "C":  # a fragment rendered with that page's context
            assert isinstance(entity, Page)
            return self._page_context(entity)
        if kind == "D":
            return _digest(self.whole(entity))
        try:
            value = getattr(entity, attribute)
        except AttributeError:
            return _digest("missing")
        return _digest(self.encode(value))

    def whole(self, entity: object) -> str:
        """Every field of *entity*, entities among them by key."""
        assert dataclasses.is_dataclass(entity)
        return type(entity).__name__ + "(" + ",".join(
            self.encode(getattr(entity, f.name)) for f in dataclasses.fields(entity)) + ")"

    def encode(self, value: object) -> str:
        """A canonical text of *value*: equal texts mean equal values for a template."""
        if isinstance(value, (str, int, float, type(None))):  # Markup and bool too
            return type(value).__name__[0] + repr(value)
        key = self.registry.keys.get(id(value))
        if key is not None:
            return "E" + key
        if isinstance(value, (list, tuple)):
            return "[" + ",".join(self.encode(item) for item in value) + "]"
        if isinstance(value, dict):
            return "{" + ",".join(f"{self.encode(k)}:{self.encode(v)}"
                                  for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))
                                  ) + "}"
        if isinstance(value, (datetime, date)):
            return "t" + value.isoformat()
        if isinstance(value, BaseModel):
            return type(value).__name__ + value.model_dump_json()
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return self.whole(value)
        if callable(value):  # a method of an entity: whatever it returns comes from its fields
            owner = getattr(value, "__self__", None)
            return "M" + getattr(value, "__name__", "?") + (
                self.whole(owner) if dataclasses.is_dataclass(owner) else repr(owner))
        return type(value).__name__ + repr(value)


def context_fingerprint(text: str) -> bytes:
    """The fingerprint of a page's context values (those not read through the model)."""
    return _digest(text)
