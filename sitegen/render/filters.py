"""Jinja filters and tests every theme can use (registered before templates compile).

Role: small, pure helpers for templates — dates in a fixed, locale-free format, ISO and
Atom timestamps, a URL's host, JSON that is safe inside `<script
type="application/ld+json">`, reading-time words, and a readable (WCAG AA) text colour for
a background colour. They must never return unescaped content from their input (only
`jsonld` returns Markup, and it escapes `<`, `>`, `&`, U+2028/9) and never do I/O.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TypeVar
from urllib.parse import urlsplit

from jinja2 import Environment
from markupsafe import Markup

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")


F = TypeVar("F", bound=Callable[..., str])


def plain_values(function: F) -> F:
    """Mark a filter that takes only plain values (a date, a string): handed an entity it
    fails, so it can never show one, and the recording environment need not wrap it."""
    function.plain_values = True  # type: ignore[attr-defined]
    return function


@plain_values
def human_date(value: datetime | None) -> str:
    """"7 March 2024" (English month names, no locale dependence); "" for None."""
    if value is None:
        return ""
    return f"{value.day} {MONTHS[value.month - 1]} {value.year}"


@plain_values
def iso_date(value: datetime | None) -> str:
    """RFC 3339 / ISO 8601 in UTC with a Z ("2024-03-07T10:00:00Z"); "" for None."""
    if value is None:
        return ""
    return value.isoformat(timespec="seconds").replace("+00:00", "Z")


@plain_values
def atom_date(value: datetime | None) -> str:
    """RFC 3339 in UTC with a Z, seconds precision, four-digit years (Atom and sitemap
    dates; a naive value is taken as UTC); "" for None."""
    if value is None:
        return ""
    moment = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="seconds")[:19] + "Z"


@plain_values
def hostname(url: str) -> str:
    """The host of *url* ("localhost" when it has none): a feed's tag URIs name it."""
    return urlsplit(url).hostname or "localhost"


def jsonld(value: object) -> Markup:
    """JSON for a `<script type="application/ld+json">` element, safe against `</script>`."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    text = (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    return Markup(text)


def minutes(value: int) -> str:
    """"1 min read" / "7 min read"."""
    return f"{value} min read"


#: The two text colours `contrast_text` chooses between: black and white, the only pair
#: for which one of them reaches 4.5:1 on every background.
DARK_TEXT = "#000000"
LIGHT_TEXT = "#ffffff"


def _luminance(colour: str) -> float:
    """WCAG relative luminance of a `#rgb`/`#rrggbb` colour (anything else counts as grey)."""
    digits = colour.lstrip("#")
    if len(digits) == 3:
        digits = "".join(c * 2 for c in digits)
    try:
        channels = [int(digits[i:i + 2], 16) / 255 for i in (0, 2, 4)] if len(digits) == 6 else []
    except ValueError:
        channels = []
    if not channels:
        channels = [0.42, 0.45, 0.5]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast_ratio(first: str, second: str) -> float:
    """The WCAG contrast ratio (1–21) of two hex colours."""
    a, b = sorted((_luminance(first), _luminance(second)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def contrast_text(background: str) -> str:
    """The more readable of black and white on *background* (always ≥ 4.5:1, WCAG AA)."""
    dark = contrast_ratio(background, DARK_TEXT)
    light = contrast_ratio(background, LIGHT_TEXT)
    return LIGHT_TEXT if light >= dark else DARK_TEXT


def install(env: Environment) -> None:
    """Register sitegen's filters on *env* (before any template is compiled)."""
    env.filters["human_date"] = human_date
    env.filters["iso_date"] = iso_date
    env.filters["atom_date"] = atom_date
    env.filters["hostname"] = hostname
    env.filters["jsonld"] = jsonld
    env.filters["minutes"] = minutes
    env.filters["contrast_text"] = contrast_text
