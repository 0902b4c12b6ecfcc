"""The autoescape step of every compiled template, without markupsafe's Python overhead.

Role: Jinja's compiled templates call `escape` on every `{{ ... }}` output. markupsafe's
`escape` builds each result through `Markup.__new__` (a Python-level constructor that
checks for `__html__` again), and re-wraps values that are already Markup; together that
was ~10% of a build's CPU. `escape` here returns exactly what markupsafe's does (same
characters, same Markup type) by calling markupsafe's own C escaper and `str.__new__`;
`EscapingTemplate` makes compiled templates use it. This module must never return
anything that markupsafe would have escaped differently, nor touch a template's
source or compiled code (the bytecode cache stays valid).
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import Any

from jinja2 import Environment, Template
from markupsafe import Markup
from markupsafe import escape as markup_escape

_escape_inner: Callable[[str], str] | None
try:  # markupsafe's C escaper; its pure-Python twin when the extension is missing
    from markupsafe._speedups import _escape_inner
except ImportError:  # pragma: no cover - depends on the installed wheel
    try:
        from markupsafe._native import _escape_inner
    except ImportError:
        _escape_inner = None

_new_str = str.__new__


def escape(value: object) -> Markup:
    """`markupsafe.escape(value)`: the same Markup, made without a Python constructor."""
    kind = type(value)
    if kind is str and _escape_inner is not None:
        return _new_str(Markup, _escape_inner(value))  # type: ignore[arg-type]
    if kind is Markup:
        return value  # type: ignore[return-value]  # immutable: already its own escape
    return markup_escape(value)


class EscapingTemplate(Template):
    """A Template whose compiled code escapes output with `escape` above."""

    @classmethod
    def _from_namespace(
        cls, environment: Environment, namespace: MutableMapping[str, Any],
        globals: MutableMapping[str, Any],
    ) -> Template:
        # The compiled module imports `escape` from jinja2.runtime into this namespace,
        # which its render functions (root, blocks, macros) use as their globals.
        if namespace.get("escape") is markup_escape:
            namespace["escape"] = escape
        return super()._from_namespace(environment, namespace, globals)
