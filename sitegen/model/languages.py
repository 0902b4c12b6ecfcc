"""A language's own name for itself: "Français", "Deutsch", "English" (Babel's CLDR data).

Role: name each language section of the site graph once per build, in that language, as
a label starts in it (first letter capitalised: CLDR writes "français" for running text),
so the language page's heading and title and the footer's switcher read as a French or
German visitor reads them. A code Babel does not know keeps its code, upper-cased. Pure:
it must never log, render, or do I/O beyond Babel's own look-up of its locale data.
"""

from __future__ import annotations

from functools import lru_cache

from babel import Locale, UnknownLocaleError


@lru_cache(maxsize=256)
def native_name(code: str) -> str:
    """*code*'s name in its own language, capitalised ("fr" → "Français"); the code in
    capitals when Babel knows no such language ("xx" → "XX")."""
    if code.split("-", 1)[0].lower() in ("", "und", "mul", "zxx"):  # (Babel: "und" → en_US)
        return code.upper()
    try:
        locale = Locale.parse(code, sep="-")
    except (UnknownLocaleError, ValueError, TypeError):
        return code.upper()
    name = locale.get_display_name(locale) or ""
    if not name:
        return code.upper()
    return name[:1].upper() + name[1:]
