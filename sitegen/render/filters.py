"""Jinja filters and tests every theme can use (registered before templates compile).

Role: small, pure helpers for templates — dates in a fixed, locale-free
format, ISO timestamps, JSON that is safe inside `<script type="application/ld+json">`,
and reading-time words. They must never return unescaped content from their
input (only `jsonld` returns Markup, and it escapes `<`, `>`, `&`, U+2028/9)
and never do I/O.
"""

from __future__ import annotations

import json
from datetime import datetime

from jinja2 import Environment
from markupsafe import Markup

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")


def human_date(value: datetime | None) -> str:
    """"7 March 2024" (English month names, no locale dependence); "" for None."""
    if value is None:
        return ""
    return f"{value.day} {MONTHS[value.month - 1]} {value.year}"


def iso_date(value: datetime | None) -> str:
    """RFC 3339 / ISO 8601 in UTC with a Z ("2024-03-07T10:00:00Z"); "" for None."""
    if value is None:
        return ""
    text = value.isoformat(timespec="seconds")
    return text.replace("+00:00", "Z")


def jsonld(value: object) -> Markup:
    """JSON for a `<script type="application/ld+json">` element, safe against `</script>`."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    text = (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    return Markup(text)


def minutes(value: int) -> str:
    """"1 min read" / "7 min read"."""
    return f"{value} min read"


def install(env: Environment) -> None:
    """Register sitegen's filters on *env* (before any template is compiled)."""
    env.filters["human_date"] = human_date
    env.filters["iso_date"] = iso_date
    env.filters["jsonld"] = jsonld
    env.filters["minutes"] = minutes
