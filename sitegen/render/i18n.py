"""A page's language: interface strings from the theme's catalogue, dates and numbers by Babel.

Role: each theme may ship `messages.toml`, a small table of its interface strings
by language (`[fr] "Contents" = "Sommaire"`); the catalogue of a site merges the
tables of its theme chain (site-local theme, built-in theme, default), highest
priority first, over the translations the page kinds registry declares for its kinds'
messages (`defaults`, `sitegen.model.kinds.messages`). A `Translator` is that catalogue
in one language: templates get it
as the context value `t` of each page, keyed by the page's language, and call
`t("Contents")`, `t("{n} min read", n=3)`, `t.date(value)`, `t.number(value)`; a
card gets the translator of its article's language (`i18n(article.language)`).
Dates and numbers come from Babel's CLDR data for the locale. What a page shows
of it therefore depends only on its language and on the catalogue, which the
page's context fingerprint holds (`Catalogue.fingerprint`, the language in
`lang`), and on the values a message is formatted with, which the catalogue's `observe`
hook is told of (a field such as `{a.title}` shows an entity's field), so incremental
builds see every change.

A message missing in a language falls back to English (the message itself) without
a word; `Catalogue.missing` lists the gaps for the languages a site uses, which the
build logs as warnings only under `--strict`. This module must never log (it runs
in render workers), never write, and never return markup: its strings are escaped
by the templates like any other text.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Callable, Iterable, Mapping
from datetime import date, datetime
from functools import lru_cache
from pathlib import Path

from babel import Locale, UnknownLocaleError
from babel.core import LOCALE_ALIASES
from babel.dates import format_date
from babel.numbers import format_decimal

from sitegen.errors import ConfigError

#: The languages the built-in themes ship.
SHIPPED = ("en", "fr", "de", "es", "it", "pt", "nl")
CATALOGUE_FILE = "messages.toml"
FALLBACK = "en"

Messages = Mapping[str, Mapping[str, str]]
#: Told what a message's format (its text, its values) sees, as it is formatted.
Observe = Callable[[str, Mapping[str, object]], None]


@lru_cache(maxsize=64)
def locale_of(language: str) -> Locale:
    """The Babel locale of a language tag ("fr", "pt-BR", "en_GB"); English when unknown."""
    try:
        return Locale.parse(language.replace("-", "_") or FALLBACK)
    except (UnknownLocaleError, ValueError, TypeError):
        return Locale.parse(FALLBACK)


def og_locale(language: str) -> str:
    """The `og:locale` form of a language tag: language_TERRITORY ("fr" → "fr_FR")."""
    locale = locale_of(language)
    if locale.territory:
        return f"{locale.language}_{locale.territory}"
    alias = LOCALE_ALIASES.get(locale.language, "")
    return alias if "_" in alias else f"{locale.language}_{locale.language.upper()}"


def base_language(language: str) -> str:
    """The catalogue key of a language tag: its primary subtag, lower case ("pt-BR" → "pt")."""
    return language.replace("_", "-").split("-")[0].lower() or FALLBACK


class Translator:
    """The catalogue in one language: the `t` every page template sees (see the docstring)."""

    __slots__ = ("language", "_messages", "_locale", "_formatted", "_observe")
    #: The language is in the page's context fingerprint (the context fingerprint leaves
    #: the translator out); what a message's format sees of its values goes to `observe`.
    sitegen_observed = True

    def __init__(self, language: str, messages: Mapping[str, str],
                 observe: Observe | None = None) -> None:
        self.language = language
        self._messages = messages
        #: Told each message formatted with values (the recording environment's
        #: `observe_format`: `{a.title}` shows a field of whatever `a` is).
        self._observe = observe
        self._locale = locale_of(language)
        #: Dates and numbers already formatted (a site repeats them on many pages).
        self._formatted: dict[object, str] = {}

    def __call__(self, message: str, **values: object) -> str:
        """*message* in this language (English when it has no translation), formatted."""
        text = self._messages.get(message, message)
        if not values:
            return text
        if self._observe is not None:
            self._observe(text, values)
        return text.format(**values)

    def date(self, value: date | datetime | None) -> str:
        """A date in the locale's long form ("3 juin 2026", "June 3, 2026"); "" for None."""
        if value is None:
            return ""
        key = ("date", value)
        found = self._formatted.get(key)
        if found is None:
            found = self._formatted[key] = str(format_date(value, "long", locale=self._locale))
        return found

    def number(self, value: float) -> str:
        """A number with the locale's separators ("1 234,5" in French)."""
        found = self._formatted.get(value)
        if found is None:
            found = self._formatted[value] = str(format_decimal(value, locale=self._locale))
        return found

    def count(self, value: int, one: str, other: str, **values: object) -> str:
        """*value* with the message for its CLDR plural category: `t.count(n, "{n} article",
        "{n} articles")` ("1 article", "3 articles"; the locale decides what "one" is);
        *values* fill the message's other fields."""
        message = one if self._locale.plural_form(value) == "one" else other
        return self(message, n=self.number(value), **values)

    def minutes(self, value: int) -> str:
        """Reading time: "3 min read" in this language."""
        return self("{n} min read", n=self.number(value))

    @property
    def og_locale(self) -> str:
        """`og:locale` of this language ("en_US")."""
        return og_locale(self.language)

    def __repr__(self) -> str:
        return f"Translator({self.language!r})"


class Catalogue:
    """The merged message tables of a theme chain, and a translator per language."""

    def __init__(self, tables: Iterable[Path], observe: Observe | None = None,
                 defaults: Messages | None = None) -> None:
        self._observe = observe
        merged: dict[str, dict[str, str]] = {}
        digest = hashlib.sha256(b"i18n-1")
        for language, table in sorted((defaults or {}).items()):  # the lowest priority
            digest.update(repr((language, sorted(table.items()))).encode())
            merged.setdefault(base_language(language), {}).update(table)
        for path in reversed(list(tables)):  # lowest priority first; later ones win
            if not path.is_file():
                continue
            data = path.read_bytes()
            digest.update(b"\x00" + data)
            for language, table in _parse(path, data).items():
                merged.setdefault(language, {}).update(table)
        self.messages = merged
        self.fingerprint = digest.hexdigest()[:24]
        self._translators: dict[str, Translator] = {}

    def translator(self, language: str) -> Translator:
        """The translator for *language* (made once)."""
        found = self._translators.get(language)
        if found is None:
            table = self.messages.get(base_language(language), {})
            found = self._translators[language] = Translator(language, table, self._observe)
        return found

    def keys(self) -> set[str]:
        """Every message some language translates (the catalogue's vocabulary)."""
        return {key for table in self.messages.values() for key in table}

    def missing(self, languages: Iterable[str]) -> dict[str, list[str]]:
        """For each non-English language of *languages*, the messages it lacks (sorted)."""
        vocabulary = self.keys()
        gaps: dict[str, list[str]] = {}
        for language in sorted({base_language(lang) for lang in languages}):
            if language == FALLBACK:
                continue
            lacking = sorted(vocabulary - self.messages.get(language, {}).keys())
            if lacking:
                gaps[language] = lacking
        return gaps


def _parse(path: Path, data: bytes) -> dict[str, dict[str, str]]:
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"the message catalogue {path} is not valid TOML ({error}): fix it"
                          ) from None
    tables: dict[str, dict[str, str]] = {}
    for language, table in raw.items():
        if not isinstance(table, dict) or not all(
                isinstance(v, str) for v in table.values()):
            raise ConfigError(f"the message catalogue {path} has a [{language}] that is not "
                              "a table of strings: write `\"English\" = \"translation\"` lines")
        tables[base_language(language)] = {str(k): str(v) for k, v in table.items()}
    return tables


def english(message: str, **values: object) -> str:
    """The untranslated message, formatted (a translator's English fallback)."""
    return message.format(**values) if values else message


__all__ = ["Catalogue", "SHIPPED", "Translator", "base_language", "english", "locale_of",
           "og_locale"]
