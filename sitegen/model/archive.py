"""The archive by month: a listing of each month's articles, and an index of the months.

Role: the views and layout functions of two page kinds `sitegen.model.kinds` declares —
`month`, /archive/YYYY/MM/ (that month's articles, newest first, paginated like every list),
and `archive`, /archive/ (the months, newest first, even with none, so a link to it never
breaks). Like the search pages, a site in several languages has them again under each
language's section, /lang/<slug>/archive/…, listing that language's articles in it. A month
is named by Babel's standalone month name and year in the page's language (CLDR pattern
"LLLL y": "Januar 2026", "Janvier 2026"), capitalised as a heading starts. Everything else a
kind has (SEO, beacon type, reserved slugs, sitemap, reads) comes from the registry. Must
never do I/O, log, or render.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache

from babel import Locale, UnknownLocaleError
from babel.dates import format_date

from sitegen.model.layout import newest, paginated
from sitegen.model.registry import Kind
from sitegen.model.slugs import url_to_path
from sitegen.model.views import ArticleView, Page, Section, Site

#: The archive's interface messages in the built-in themes' languages (a theme's own
#: `messages.toml` wins over them).
MESSAGES: dict[str, dict[str, str]] = {
    language: dict(zip(("Archive", "{n} month", "{n} months", "By language:", "All languages"),
                       words, strict=True))
    for language, words in {
        "fr": ("Archives", "{n} mois", "{n} mois", "Par langue :", "Toutes les langues"),
        "de": ("Archiv", "{n} Monat", "{n} Monate", "Nach Sprache:", "Alle Sprachen"),
        "es": ("Archivo", "{n} mes", "{n} meses", "Por idioma:", "Todos los idiomas"),
        "it": ("Archivio", "{n} mese", "{n} mesi", "Per lingua:", "Tutte le lingue"),
        "pt": ("Arquivo", "{n} mês", "{n} meses", "Por idioma:", "Todos os idiomas"),
        "nl": ("Archief", "{n} maand", "{n} maanden", "Per taal:", "Alle talen"),
    }.items()}


@dataclass(eq=False, slots=True)
class MonthView(Section):
    """One month of one archive: `id` is its URL, `name` the month and year in the
    archive's language ("Janvier 2026"), `label` the month alone ("Janvier"), `language`
    the archive's ("" for the site's archive of every language), `index_url` its index."""

    year: int = 0
    month: int = 0
    label: str = ""
    language: str = ""
    index_url: str = ""


@dataclass(eq=False, slots=True)
class ArchiveView:
    """The index of one archive: its months, newest first; `others` the other archives of
    the site as (language code, its own name, URL) — the site's own archive, of every
    language, has the code ""."""

    id: str
    url: str
    language: str
    months: list[MonthView] = field(default_factory=list)
    others: list[tuple[str, str, str]] = field(default_factory=list)


@lru_cache(maxsize=256)
def _month_names(language: str, year: int, month: int) -> tuple[str, str]:
    """("Janvier 2026", "Janvier"): the standalone month name, with its year, in *language*
    (English when Babel does not know it), capitalised."""
    try:
        locale = Locale.parse(language.replace("-", "_") or "en")
    except (UnknownLocaleError, ValueError, TypeError):
        locale = Locale.parse("en")
    first = date(year, month, 1)
    name = str(format_date(first, "LLLL y", locale=locale))
    label = str(format_date(first, "LLLL", locale=locale))
    return name[:1].upper() + name[1:], label[:1].upper() + label[1:]


def _months(base: str, language: str, code: str,
            articles: Sequence[ArticleView]) -> list[MonthView]:
    """The months of *articles* under *base* (newest first), each with its articles in their
    order, named in *language*; *code* is the archive's language ("" for every language)."""
    found: dict[tuple[int, int], MonthView] = {}
    for article in articles:
        key = (article.published.year, article.published.month)
        month = found.get(key)
        if month is None:
            name, label = _month_names(language, *key)
            url = f"{base}{key[0]:04d}/{key[1]:02d}/"
            month = found[key] = MonthView(id=url, name=name, slug=f"{key[0]:04d}/{key[1]:02d}",
                                           url=url, year=key[0], month=key[1], label=label,
                                           language=code, index_url=base)
        month.articles.append(article)
    return sorted(found.values(), key=lambda m: (m.year, m.month), reverse=True)


def archives(kind: Kind, site: Site) -> list[ArchiveView]:
    """The site's archive (every article, in its language) and, on a site in several
    languages, each language's (its articles): at the first literal part of *kind*'s URL
    ("/archive/"), and under each language's section."""
    base = kind.url.split("{", 1)[0]
    made = [(base, site.language, "", site.articles)]
    made += [(f"{lang.url}{base.lstrip('/')}", lang.id, lang.id, lang.articles)
             for lang in site.languages]
    shown = [ArchiveView(id=url, url=url, language=code,
                         months=_months(url, language, code, articles))
             for url, language, code, articles in made]
    names = {lang.id: lang.name for lang in site.languages}
    for archive in shown:
        archive.others = [(other.language, names.get(other.language, ""), other.url)
                          for other in shown if other is not archive]
    return shown


def month_pages(kind: Kind, site: Site, laid: Sequence[Page]) -> list[Page]:
    """Each month of each archive: its articles, newest first, paginated."""
    pages: list[Page] = []
    for archive in archives(kind, site):
        for month in archive.months:
            pages += paginated(site, kind, month.url, month.name, month, site.feed_url,
                               archive.language or site.language, month.articles)
    return pages


def archive_pages(kind: Kind, site: Site, laid: Sequence[Page]) -> list[Page]:
    """The index of each archive (the site's even with no article yet)."""
    return [Page(kind=kind.name, path=url_to_path(archive.url), url=archive.url,
                 template=kind.template, title="Archive", obj=archive,
                 language=archive.language or site.language, feed_url=site.feed_url,
                 updated=newest([a for m in archive.months for a in m.articles]))
            for archive in archives(kind, site)]

