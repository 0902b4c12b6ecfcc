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
        kind, tagged, rest = read.partition("\x00")
        if not tagged:  # an entity's key: the entity whole
            if read.startswith("site."):
                site = self.registry.objects["site"]
                return _digest(self.encode(getattr(site, read[5:], None)))
            entity = self.registry.objects.get(read)
            if entity is None:
                return b""
            return _digest(self.whole(entity, SITE_PARTS if isinstance(entity, Site) else ()))
        if kind == "T":
            source = self._source(rest)
            return _digest("absent" if source is None else "source:" + source)
        if kind == "I":
            return _digest(self._image(rest) if self._image is not None else "")
        page = self.registry.objects.get(rest)
        if kind != "C" or not isinstance(page, Page):
            return b""
        return self._page_context(page)  # a fragment rendered with that page's context

    def whole(self, entity: object, parts: frozenset[str] | tuple[()] = ()) -> str:
        """Every field of *entity* but its *parts*, entities among them by key."""
        assert dataclasses.is_dataclass(entity)
        return type(entity).__name__ + "(" + ",".join(
            self.encode(getattr(entity, f.name)) for f in dataclasses.fields(entity)
            if f.name not in parts) + ")"

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
