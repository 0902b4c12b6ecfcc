"""What each read of a page gives now: the entities' keys and fingerprints.

Role: `Registry` gives every entity of the site model a stable key (`site`,
`article:<id>`, `tag:<slug>`, `page:<path>`, …: the reads `sitegen.render.reads` records
are these bare keys, plus `T`, `C` and `I` reads); `Fingerprints` turns each read into a
16-byte fingerprint of what it gives in one Site — an entity whole (its fields, the
entities among them by key: each is a read of its own; the site's lists are the reads
`site.<name>`, apart from the site's other fields), a template by its source, a
fragment by its page's context, an image by what this build made of it — so the next build
compares each distinct read once. This module must never render, write files, or read the
wall clock.
"""

from __future__ import annotations

import dataclasses
import hashlib
import marshal
import sys
from collections.abc import Callable
from datetime import date, datetime
from typing import Any

from pydantic import BaseModel

from sitegen.errors import BuildError
from sitegen.model.kinds import view_keys
from sitegen.model.views import Page, Site

#: How the site and its pages are keyed; each page kind's view is keyed as the page kinds
#: registry declares it (`sitegen.model.kinds.view_keys`). Stable from one build to the next.
_KEYS: dict[type, Callable[[Any], str]] = {
    Site: lambda _: "site",
    Page: lambda p: "page:" + p.path,
}
#: The site's lists (and mappings) of entities, each its own read `site.<name>`: every page
#: reads the site (its title, its URL), and an article added or gone changes only these.
SITE_PARTS = frozenset(f.name for f in dataclasses.fields(Site)
                       if str(f.type).startswith(("list[", "dict[")))


def site_read(attribute: str) -> str:
    """The read an attribute of the site is: `site.<name>` for its lists, else `site`."""
    return "site." + attribute if attribute in SITE_PARTS else "site"


class Registry:
    """The entities of one Site by key, and each entity's key by identity."""

    def __init__(self, site: Site) -> None:
        self.objects: dict[str, object] = {}
        self.keys: dict[int, str] = {}
        self._keyers = {**view_keys(), **_KEYS}
        self._add(site)
        for group in (site.articles, site.agents, site.clusters, site.authors, site.tags,
                      site.languages, site.social_posts, site.own_pages, site.pages,
                      site.files):
            for entity in group:
                self._add(entity)
        for page in (*site.pages, *site.files):
            if page.obj is not None and id(page.obj) not in self.keys:
                self._add(page.obj, page)

    def _add(self, entity: object, page: Page | None = None) -> None:
        keyer = self._keyers.get(type(entity))
        if keyer is None:  # a view no page kind declares: its reads could not be recorded
            shown = f"the page {page.path} ({page.kind}) shows" if page else "the site holds"
            raise BuildError(
                f"{shown} a {type(entity).__name__}, which no page kind declares as its view: "
                "name it as the kind's `view` in the page kinds registry (sitegen.model.kinds)")
        key = keyer(entity)
        self.objects.setdefault(key, entity)
        self.keys[id(entity)] = key


#: Values that `marshal` writes as they are (exact types: a subclass, like Markup, is tagged).
_RAW = frozenset({str, int, float, bool, type(None), bytes})
#: marshal's format 2 has no references between objects: the same values give the same
#: bytes whatever objects they share (format 3+ follows reference counts).
_MARSHAL_VERSION = 2
#: The fingerprints' own version and the interpreter's (marshal's), keying every digest.
_KEY = hashlib.blake2b(
    f"sitegen fingerprints 2; python {sys.version_info[0]}.{sys.version_info[1]}".encode(),
    digest_size=32).digest()


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16, key=_KEY).digest()


def _field_names(cls: type) -> tuple[str, ...]:
    found = _FIELDS.get(cls)
    if found is None:
        found = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return found


_FIELDS: dict[type, tuple[str, ...]] = {}


class Fingerprints:
    """What each read gives in one Site, as a 16-byte fingerprint (memoized per read).

    An entity's fingerprint is the digest of its *plain form* (`plain`): its fields as
    values `marshal` writes at C speed (strings, numbers, lists, tuples), the entities among
    them by key, everything else tagged by a tuple naming its type. A plain form is a tuple
    only where a value was tagged, so two values have the same plain form only when a
    template sees the same in them.
    """

    def __init__(self, registry: Registry, template_source: Callable[[str], str | None],
                 page_context: Callable[[Page], bytes],
                 image: Callable[[str], str] | None = None) -> None:
        self.registry = registry
        self._image = image
        self._source = template_source
        self._page_context = page_context
        self._known: dict[str, bytes] = {}
        #: id → (value, plain form) of immutable values, held so that no id is reused
        self._shared: dict[int, tuple[object, Any]] = {}

    def of(self, read: str) -> bytes:
        """The fingerprint of *read* now (a read whose entity is gone gives b"")."""
        found = self._known.get(read)
        if found is None:
            found = self._known[read] = self._compute(read)
        return found

    def take(self, found: dict[str, bytes]) -> None:
        """Take the fingerprints of reads another process computed (`of` in a forked copy of
        this build: `sitegen.cores`)."""
        self._known.update(found)

    def _compute(self, read: str) -> bytes:
        kind, tagged, rest = read.partition("\x00")
        if not tagged:  # an entity's key: the entity whole
            if read.startswith("site."):
                site = self.registry.objects["site"]
                return _digest(marshal.dumps(self.plain(getattr(site, read[5:], None)),
                                             _MARSHAL_VERSION))
            entity = self.registry.objects.get(read)
            if entity is None:
                return b""
            return _digest(marshal.dumps(
                self.whole(entity, SITE_PARTS if isinstance(entity, Site) else ()),
                _MARSHAL_VERSION))
        if kind == "T":
            source = self._source(rest)
            return _digest(b"absent" if source is None
                           else b"source:" + source.encode("utf-8", "surrogatepass"))
        if kind == "I":
            return _digest((self._image(rest) if self._image is not None else "").encode(
                "utf-8", "surrogatepass"))
        page = self.registry.objects.get(rest)
        if kind != "C" or not isinstance(page, Page):
            return b""
        return self._page_context(page)  # a fragment rendered with that page's context

    def whole(self, entity: object,
              parts: frozenset[str] | tuple[()] = ()) -> tuple[str, list[Any]]:
        """The plain form of every field of *entity* but its *parts*, entities by key."""
        cls = type(entity)
        raw, plain = _RAW, self.plain
        return ("D" + cls.__name__, [value if type(value) in raw else plain(value)
                               for value in [getattr(entity, name) for name in _field_names(cls)
                                             if name not in parts]])

    def plain(self, value: Any) -> Any:
        """The plain form of *value* (see the class docstring): equal forms mean equal values
        for a template."""
        cls = type(value)
        if cls in _RAW:
            return value
        keys = self.registry.keys
        key = keys.get(id(value))
        if key is not None:
            return ("E", key)
        if cls is list:
            refs = [keys.get(id(item)) for item in value]  # (most lists are of entities)
            if None not in refs:
                return ("L", refs)
            return [item if type(item) in _RAW else self.plain(item) for item in value]
        if isinstance(value, BaseModel):
            return ("P" + cls.__name__, cls.__pydantic_serializer__.to_json(value))
        shared = self._shared.get(id(value))  # (a date or frozen view many entities share)
        if shared is not None:
            return shared[1]
        if isinstance(value, (datetime, date)):
            form: Any = ("t" + cls.__name__, value.isoformat())
            self._shared[id(value)] = (value, form)
            return form
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            form = self.whole(value)
            if getattr(cls, "__dataclass_params__").frozen:  # noqa: B009 (its fields stay)
                self._shared[id(value)] = (value, form)
            return form
        return self._collection(value, cls)

    def _collection(self, value: Any, cls: type) -> Any:
        """The plain form of a tuple, dict or set, a subclass of a plain value, a method, or
        anything else (`plain`'s less common values)."""
        if cls is tuple:
            return ("(", [self.plain(item) for item in value])
        if isinstance(value, dict):  # (in its order: a template iterating it sees that order)
            return ("{", [(self.plain(k), self.plain(v)) for k, v in value.items()])
        if isinstance(value, (set, frozenset)):  # (in an order of its own, not the hash's)
            return ("S" + cls.__name__, sorted(marshal.dumps(self.plain(item), _MARSHAL_VERSION)
                                               for item in value))
        if isinstance(value, (str, int, float)):  # a subclass: Markup, an enum
            return ("~" + cls.__name__, repr(value))
        if callable(value):  # a method of an entity: whatever it returns comes from its fields
            owner = getattr(value, "__self__", None)
            return ("M" + getattr(value, "__name__", "?"),
                    self.whole(owner) if dataclasses.is_dataclass(owner) else repr(owner))
        return ("?" + cls.__name__, repr(value))


def context_fingerprint(text: str) -> bytes:
    """The fingerprint of a page's context values (those not read through the model)."""
    return _digest(text.encode("utf-8", "surrogatepass"))
