"""What each page read while it rendered: the observed dependencies of incremental builds.

Role: a page is rendered again exactly when something it read changed, whatever its
templates are (a user's own as much as the built-in themes). The Jinja environment
(`RecordingEnvironment`) observes every read a template makes of the site model, by
*entity* (the site, an article, a section, a tag, a page: `sitegen.render.fingerprints.Registry`
gives each a stable key) — a read is the bare key, `article:<id>`, and gives the entity whole:

- `obj.attr` and `obj["attr"]` on an entity → a read of that entity;
- an entity handed to Python code that may look inside it (a filter, a test, `{{ entity }}`
  printed, a format string of `t()` or `str.format`) → a read of that entity, and of every
  entity its text shows (`repr` of a page or the site shows their entities) or a format
  field walks through (`{a.author.name}` reads `a` and its author);
- a template loaded (the page's own, `extends`, `include`, `import`) → `T name`;
- a fragment (a cached partial) rendered with another page's context → `C key`;
- an image shown (`picture()`, `image()`, a body's images) → `I url`, whose fingerprint is
  what this build made of that image (`sitegen.images.picture.ImageMap`).

That is sound with no hook on calls (`Context.call` is Jinja's own): a template reaches an
entity only through its context, an attribute of another entity, a list's items or what a
filter returns, and it sees the entity's fields only by reading an attribute of it or by
handing it to Python code. The code it can hand it to is Jinja's and sitegen's: filters and
tests (wrapped once, `observe_filters`), entity methods (reached by an attribute read, and
taking plain values: `tests/render` checks the model for it), `t()` (its `observe` hook),
`str.format` (wrapped where the template reads it) and the context's helpers, which take
strings or record their own reads (`card`: its card's). Only `~` and `%` on an entity
never otherwise read, or compared, escape this (they print a dataclass's `repr`: no theme
does). Reads per entity are a superset of reads per attribute: exact, and about a tenth
as many as per field.

Each read is a string; `sitegen.render.fingerprints.Fingerprints` turns one into the
fingerprint of what it gives now, so the next build compares each distinct read once and
re-renders the pages whose reads changed. What a page's context is made of (the page, the
site, its `obj`, what its SEO values read) is among its reads too (`Renderer.context_reads`);
the rest is its template and the build's settings (`Renderer.context_fingerprint`). This
module must never render, write files, or read the wall clock.
"""

from __future__ import annotations

import dataclasses
import re
import string
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, cast

from jinja2 import Environment, Template
from markupsafe import Markup

from sitegen.render.fingerprints import SITE_PARTS, site_read

#: Jinja's own filters that reach inside entities only through the environment's
#: `getattr`/`getitem` (so their reads are observed) or not at all.
_OBSERVED_FILTERS = frozenset({
    "attr", "batch", "count", "d", "default", "first", "groupby", "last", "length", "list",
    "map", "max", "min", "reject", "rejectattr", "reverse", "select", "selectattr", "slice",
    "sort", "sum", "unique", "items",
})
#: (A filter of sitegen's marked `plain_values` takes only a date or a string, never an
#: entity, so it is not wrapped either: `sitegen.render.filters.plain_values`.)
#: Jinja's own tests that see an entity only by identity or type (`lower`, `upper` and any
#: other test are wrapped like filters: they may print it).
_OBSERVED_TESTS = frozenset({
    "defined", "undefined", "none", "boolean", "false", "true", "integer", "float", "number",
    "string", "mapping", "sequence", "iterable", "callable", "sameas", "escaped", "in",
    "filter", "test", "odd", "even", "divisibleby", "==", "eq", "equalto", "!=", "ne", ">",
    "gt", "greaterthan", ">=", "ge", "<", "lt", "lessthan", "<=", "le",
})
#: Methods of a string a template may call with entities whose fields the format walks.
_FORMATS = frozenset({"format", "format_map"})
#: A format field's attribute (`.name`) or index (`[key]`) after its first name.
_FIELD_PART = re.compile(r"\.([^.\[]+)|\[([^\]]+)\]")

#: Values printed as they are, which never hold an entity.
_PLAIN = frozenset({str, Markup, int, float, bool, type(None)})


_SHOWN: dict[type, tuple[str, ...]] = {}


def _shown_fields(kind: type) -> tuple[str, ...]:
    """The fields of a dataclass its `repr` (so `str`, so a printed value) shows."""
    found = _SHOWN.get(kind)
    if found is None:
        found = _SHOWN[kind] = tuple(f.name for f in dataclasses.fields(kind) if f.repr) \
            if dataclasses.is_dataclass(kind) else ()
    return found


class Recorder:
    """The reads of one page (or of one cached fragment) while it renders."""

    __slots__ = ("keys", "reads")

    def __init__(self, keys: dict[int, str]) -> None:
        self.keys = keys
        self.reads: set[str] = set()

    def deep(self, value: object, _seen: set[int] | None = None) -> None:
        """Note that Python code saw *value* whole: each entity in it, and those its text
        shows (a list's items, a dict's values, a page's or the site's entities)."""
        key = self.keys.get(id(value))
        if key is not None:
            self.reads.add(key)
            if key == "site":
                self.reads.update("site." + name for name in SITE_PARTS)
            fields = _shown_fields(type(value))
            if fields:
                seen = _seen if _seen is not None else set()
                if id(value) not in seen:
                    seen.add(id(value))
                    for name in fields:
                        self.deep(getattr(value, name), seen)
        elif isinstance(value, (list, tuple)):
            for item in value:
                if type(item) not in _PLAIN:
                    self.deep(item, _seen)
        elif isinstance(value, dict):
            for item in value.values():
                if type(item) not in _PLAIN:
                    self.deep(item, _seen)

    def attribute(self, key: str, name: str) -> None:
        """Note that an attribute *name* of the entity *key* was read."""
        self.reads.add(key if key != "site" else site_read(name))

    def formatted(self, text: str, args: Sequence[object], values: Mapping[str, object]
                  ) -> None:
        """Note what `text.format(*args, **values)` sees: every entity a field walks
        through (`{a.author.name}`: `a`, its author) and each value it prints."""
        if all(type(v) in _PLAIN for v in (*args, *values.values())):
            return
        try:
            parsed = list(string.Formatter().parse(text))
        except ValueError:  # the format itself fails the same way
            return
        auto = 0
        for _, field, spec, _ in parsed:
            if field is None:
                continue
            first = re.match(r"[^.\[]*", field).group()  # type: ignore[union-attr]
            try:
                if first == "":
                    value, auto = args[auto], auto + 1
                else:
                    value = args[int(first)] if first.isdigit() else values[first]
                for name, index in _FIELD_PART.findall(field[len(first):]):
                    key = self.keys.get(id(value))
                    if key is not None:
                        self.attribute(key, name or index)
                    value = getattr(value, name) if name else value[  # type: ignore[index]
                        int(index) if index.isdigit() else index]
            except (LookupError, AttributeError, TypeError, ValueError):
                continue  # the format itself fails there
            self.deep(value)
            if spec and "{" in spec:
                self.formatted(spec, args, values)


class RecordingEnvironment(Environment):
    """A Jinja environment that notes each read into its current `recorder`."""

    def __init__(self, **options: Any) -> None:
        super().__init__(finalize=self._finalize, **options)
        #: Where reads go while a page renders (None: nothing is recorded).
        self.recorder: Recorder | None = None

    def getattr(self, obj: Any, attribute: str) -> Any:
        recorder = self.recorder
        if recorder is not None:
            key = recorder.keys.get(id(obj))
            if key is not None:
                recorder.reads.add(key if key != "site" else site_read(attribute))
            elif attribute in _FORMATS and isinstance(obj, str):
                return _formatting(self, obj, attribute)
        try:  # Jinja's own rule, inlined: the attribute first, then the item
            return getattr(obj, attribute)
        except AttributeError:
            return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        recorder = self.recorder
        if recorder is not None:
            key = recorder.keys.get(id(obj))
            if key is not None:
                recorder.attribute(key, argument if isinstance(argument, str) else "")
            elif argument in _FORMATS and isinstance(obj, str):
                return _formatting(self, obj, argument)
        return super().getitem(obj, argument)

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
        """Wrap every filter and test that may look inside an entity so it notes a read."""
        for name, function in list(self.filters.items()):
            if name not in _OBSERVED_FILTERS and not getattr(function, "plain_values", False):
                self.filters[name] = _observing(self, function)
        for name, test in list(self.tests.items()):
            if name not in _OBSERVED_TESTS:
                self.tests[name] = _observing(self, cast(Callable[..., Any], test))

    def observe_format(self, text: str, values: Mapping[str, object]) -> None:
        """Note what formatting *text* with *values* sees (`Translator`'s hook)."""
        recorder = self.recorder
        if recorder is not None and values:
            recorder.formatted(text, (), values)

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
                if type(value) not in _PLAIN:
                    recorder.deep(value)
        return function(*args, **kwargs)

    observed.__dict__.update(getattr(function, "__dict__", {}))  # pass_context & co. markers
    observed.__name__ = getattr(function, "__name__", "filter")
    return observed


def _formatting(env: RecordingEnvironment, text: str, method: str) -> Callable[..., str]:
    """`text.format` / `text.format_map` as a template reads them: noting what they see."""
    def format_(*args: Any, **kwargs: Any) -> str:
        if env.recorder is not None:
            if method == "format":
                env.recorder.formatted(text, args, kwargs)
            elif args and isinstance(args[0], Mapping):
                env.recorder.formatted(text, (), args[0])
        return getattr(text, method)(*args, **kwargs)  # type: ignore[no-any-return]

    return format_
