"""The site owner's own pages: Markdown files in `pages/` beside site.toml.

Role: read each `pages/**/*.md` file and its front matter — TOML between `+++` lines or
YAML between `---` lines, as Hugo and Eleventy users write them — into a `PageSource`
for `sitegen.model.build_site`. Allowed keys: `title` (required), `description`,
`slug` (default: from the file name), `menu` (a position in the navigation), `template`
(default `page.html`), `draft`, and `date` or `updated` (a TOML or YAML date or date-time:
when its content last changed, the sitemap's `lastmod`; `updated` wins; a date-time without
an offset is UTC; none: no `lastmod`, as a file's mtime says nothing once a CI cache restores
it). Every problem is a configuration error of one line
naming the file and the line (`pages/about.md:3: …`). Hidden files and drafts are left
out; a symbolic link out of `pages/` is refused (`sitegen.sitefolder`). It must never
render (the body stays Markdown, rendered as an article's is) and never trust a value:
slugs and templates are checked here or by the model.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sitegen.errors import ConfigError
from sitegen.sitefolder import source_files

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from sitegen.model.views import OwnPage

PAGES_DIR = "pages"
SUFFIXES = (".md", ".markdown")
_ALLOWED = {"title": str, "description": str, "slug": str, "menu": int, "template": str,
            "draft": bool, "date": date, "updated": date}
_TEMPLATE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*(?:/[A-Za-z0-9_][A-Za-z0-9_-]*)*\.html$")
_KINDS = {int: "an integer", bool: "true or false", str: "a string",
          date: "a date or date-time written bare (updated = 2026-03-01, not in quotes)"}
_TOML_LINE = re.compile(r"\s*\(at (?:line (\d+), column \d+|end of document)\)\s*$")


@dataclass(frozen=True, slots=True)
class PageSource:
    """One page file as read: where it is (`pages/…`), its front matter and its Markdown."""

    name: str
    title: str
    description: str
    slug: str
    menu: int | None
    template: str
    draft: bool
    content: str
    #: When its content last changed (`updated`, else `date`; UTC): None when neither is set.
    updated: datetime | None = None


def _fail(name: str, line: int, what: str) -> ConfigError:
    return ConfigError(f"{name}:{line}: {what}")


def _key_line(lines: list[str], key: str) -> int:
    """The file line where front matter *key* is set (2 = the first line after `+++`)."""
    pattern = re.compile(r"^\s*[\"']?" + re.escape(key) + r"[\"']?\s*[=:]")
    for number, text in enumerate(lines, start=2):
        if pattern.match(text):
            return number
    return 1


def _split(name: str, text: str) -> tuple[str, list[str], str]:
    """(delimiter, front matter lines, body) of a page file's text."""
    lines = text.removeprefix("\ufeff").split("\n")
    fence = lines[0].rstrip()
    if fence not in ("+++", "---"):
        raise _fail(name, 1, "no front matter: start the file with a +++ (TOML) or --- (YAML) "
                    "line, then title = \"…\", then the same line again")
    for number, line in enumerate(lines[1:], start=1):
        if line.rstrip() == fence:
            return fence, lines[1:number], "\n".join(lines[number + 1:])
    raise _fail(name, 1, f"the front matter opened by {fence} is never closed: add a {fence} "
                "line after it")


def _parse(name: str, fence: str, lines: list[str]) -> dict[str, Any]:
    source = "\n".join(lines)
    if fence == "+++":
        try:
            return tomllib.loads(source)
        except tomllib.TOMLDecodeError as error:
            message = str(error)
            found = _TOML_LINE.search(message)
            line = 1 + (int(found.group(1)) if found and found.group(1) else len(lines))
            reason = _TOML_LINE.sub("", message).rstrip(".") or "invalid TOML"
            raise _fail(name, line, f"invalid TOML front matter ({reason}): fix that "
                        "line") from None
    import yaml

    try:
        data = yaml.safe_load(source)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = 2 + int(mark.line) if mark is not None else 1
        reason = " ".join(str(getattr(error, "problem", None) or "invalid YAML").split())
        raise _fail(name, line, f"invalid YAML front matter ({reason}): fix that line") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise _fail(name, 2, "the YAML front matter is not a mapping: write key: value lines")
    return data


def parse_page(name: str, text: str) -> PageSource:
    """The page of file *name* (shown in errors, e.g. `pages/about.md`) holding *text*."""
    fence, lines, body = _split(name, text)
    data = _parse(name, fence, lines)
    for key, value in data.items():
        wanted = _ALLOWED.get(str(key))
        if wanted is None:
            raise _fail(name, _key_line(lines, str(key)), f"unknown front matter key "
                        f"{str(key)[:40]!r}: use title, description, slug, menu, template, "
                        "draft, date or updated")
        if type(value) is not wanted and not (wanted is date and isinstance(value, date)):
            raise _fail(name, _key_line(lines, key), f"front matter key {key!r} must be "
                        f"{_KINDS[wanted]}, not {type(value).__name__}")
    title = " ".join(str(data.get("title", "")).split())
    if not title:
        raise _fail(name, 1, "the front matter has no title: add title = \"…\" (TOML) or "
                    "title: … (YAML)")
    template = data.get("template", "page.html")
    if not _TEMPLATE.match(template):
        raise _fail(name, _key_line(lines, "template"), f"template {template[:60]!r} is not a "
                    "template name: use a name like page.html from templates/")
    return PageSource(
        name=name, title=title, description=" ".join(data.get("description", "").split()),
        slug=data.get("slug", ""), menu=data.get("menu"), template=template,
        draft=data.get("draft", False), content=body,
        updated=_utc(data.get("updated", data.get("date"))))


def _utc(value: date | None) -> datetime | None:
    """*value* (a front matter date or date-time) as a UTC date-time: a date at midnight, a
    date-time without an offset taken as UTC."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _hidden(rel: str) -> bool:
    return rel.rpartition("/")[2].startswith(".")


def load_pages(root: Path) -> list[PageSource]:
    """Every page of *root*/pages/ that is not a draft, in file name order."""
    pages: list[PageSource] = []
    for rel, path in source_files(root, PAGES_DIR, skip=_hidden):
        if path.suffix.lower() not in SUFFIXES:
            continue
        name = f"{PAGES_DIR}/{rel}"
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise _fail(name, 1, "is not UTF-8 text: save it as UTF-8") from None
        except OSError as error:
            raise ConfigError(f"cannot read {name} ({error.strerror}): check its "
                              "permissions") from None
        page = parse_page(name, text.replace("\r\n", "\n"))
        if not page.draft:
            pages.append(page)
    return pages


def check_templates(pages: Iterable[OwnPage], source: Callable[[str], str | None]) -> None:
    """Refuse a page whose `template` no template folder holds (*source* gives None)."""
    for page in pages:
        if source(page.template) is None:
            raise ConfigError(f"{page.source}: the template {page.template!r} is in none of the "
                              "template folders: add it to templates/, or remove the "
                              "template line")
