"""Internal links of built pages: which `href`/`src` values point inside the site, and
which of those are broken.

Role: pure decisions for the link check (`sitegen.emit.linkcheck` runs it in the build).
`LinkScanner.scan` reads one page's bytes and keeps what the next steps need: the links
that point to *other* files of the site (root-relative, relative, or absolute under
`[site] url`) as (output path, fragment, link), and the links the page alone shows broken
(a `#fragment` of its own with no such `id`/`name`, a root-relative path outside the
site's base path). `find_broken` then checks those against every output path of the
build, and a fragment against the target page's ids (its bytes asked for once, only when
a link needs them). A path ending in `/` means its `index.html`. External links (another
host, `mailto:`, `data:`...) are never followed.

Pages are scanned with two literal-prefix regular expressions over the bytes instead of
an HTML parser: sitegen's own output always double-quotes attributes and escapes `"` and
`<` in text, and `html.parser` takes ~10 s over the 60 MB of a 4,000-article site where
this takes ~0.25 s (benchmarks/bench_links.py). Single-quoted or unquoted attributes a
site's own template writes are not seen. This module must never do I/O or log.
"""

from __future__ import annotations

import html
import json
import posixpath
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from markupsafe import escape

_HREF = re.compile(rb' href="([^"]*)"')
_SRC = re.compile(rb' src="([^"]*)"')
_ANCHOR_FORMS = (b' id="', b' name="')

#: What a link resolves to: None (not the site's), a reason it is broken, or
#: (output path, fragment).
Resolved = tuple[str, str] | str | None


@dataclass(frozen=True, slots=True)
class PageLinks:
    """What one page's bytes say about its links (see the module docstring)."""

    targets: tuple[tuple[str, str, str], ...] = ()  #: (output path, fragment, link)
    broken: tuple[tuple[str, str], ...] = ()  #: (link, why)

    def to_bytes(self) -> bytes:
        """A compact JSON form (stored as derived data, keyed by the page's sha256)."""
        return json.dumps([self.targets, self.broken], ensure_ascii=False,
                          separators=(",", ":")).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> PageLinks:
        """The form `to_bytes` wrote."""
        targets, broken = json.loads(data)
        return cls(tuple((t, f, r) for t, f, r in targets), tuple((r, w) for r, w in broken))


@dataclass(frozen=True, slots=True)
class Broken:
    """One broken link: the page it is on (output path), the link as written, and why."""

    page: str
    link: str
    why: str


def has_anchor(data: bytes, fragment: str) -> bool:
    """True when *data* (a page) has an element with `id` or `name` *fragment*."""
    if fragment in ("", "top"):  # "#top" scrolls to the top in every browser
        return True
    escaped = str(escape(fragment)).encode()
    return any(form + escaped + b'"' in data for form in _ANCHOR_FORMS)


class LinkScanner:
    """Scans pages of one site (its base URL decides which absolute links are its own)."""

    def __init__(self, base_url: str) -> None:
        parts = urlsplit(base_url)
        self.netloc = parts.netloc.lower()
        self.base_path = parts.path.rstrip("/")
        self._cache: dict[str, Resolved] = {}  # page-independent links: root-relative, absolute

    def resolve(self, page: str, link: str) -> Resolved:
        """What *link* (as written in an attribute of the output page *page*) points to."""
        if link.startswith("#"):
            return None if link == "#" else (page, unquote(html.unescape(link[1:])))
        absolute = link.startswith(("/", "http:", "https:", "HTTP"))
        if absolute:
            found = self._cache.get(link, False)
            if found is not False:
                return found  # type: ignore[return-value]
        found = self._resolve(page, html.unescape(link).strip())
        if absolute:
            self._cache[link] = found
        return found

    def _resolve(self, page: str, value: str) -> Resolved:
        try:
            parts = urlsplit(value)
        except ValueError:
            return None
        if parts.scheme or parts.netloc:
            if parts.scheme.lower() not in ("", "http", "https") or \
                    parts.netloc.lower() != self.netloc:
                return None  # another site, mailto:, data:, ...
            path = parts.path or "/"
            if path != self.base_path and not path.startswith(self.base_path + "/"):
                return None  # the same host, but not this site
        elif value.startswith("/"):
            path = parts.path
            if self.base_path and path != self.base_path and \
                    not path.startswith(self.base_path + "/"):
                return f"it is outside the site's base path {self.base_path}/"
        elif not parts.path:  # "?query" or "": this page
            return (page, unquote(parts.fragment))
        else:
            folder = posixpath.dirname("/" + page)
            path = self.base_path + posixpath.join(folder, parts.path)
        rel = unquote(path[len(self.base_path):]) or "/"
        target = posixpath.normpath(rel).lstrip("/")  # ("/../x" is "/x", as in a browser)
        if rel.endswith("/"):
            target = target + "/index.html" if target else "index.html"
        return (target, unquote(parts.fragment))

    def scan(self, page: str, data: bytes) -> PageLinks:
        """The internal links of the page *page* (output path) with bytes *data*."""
        seen = set(_HREF.findall(data))
        seen.update(_SRC.findall(data))
        targets: list[tuple[str, str, str]] = []
        broken: list[tuple[str, str]] = []
        for raw in seen:
            link = raw.decode("utf-8", "replace")
            found = self.resolve(page, link)
            if found is None:
                continue
            if isinstance(found, str):
                broken.append((link, found))
                continue
            target, fragment = found
            if target == page:
                if not has_anchor(data, fragment):
                    broken.append((link, f"this page has no id {fragment!r}"))
                continue
            targets.append((target, fragment, link))
        return PageLinks(tuple(sorted(targets)), tuple(sorted(broken)))


def find_broken(pages: Mapping[str, PageLinks], paths: Collection[str],
                page_bytes: Callable[[str], bytes | None]) -> list[Broken]:
    """Every broken link of *pages*, by page then link.

    *paths* are all the output's files; *page_bytes* gives a file's bytes when a link asks
    for one of its fragments (each file asked at most once).
    """
    found: list[Broken] = []
    anchors: dict[str, bytes | None] = {}
    for page in sorted(pages):
        links = pages[page]
        found.extend(Broken(page, link, why) for link, why in links.broken)
        for target, fragment, link in links.targets:
            if target not in paths:
                folder = target + "/index.html"
                if folder not in paths:
                    found.append(Broken(page, link, "no such file in the site"))
                    continue
                target = folder
            if fragment in ("", "top"):
                continue
            if target not in anchors:
                anchors[target] = page_bytes(target)
            data = anchors[target]
            if data is None or not has_anchor(data, fragment):
                found.append(Broken(page, link, f"{target} has no id {fragment!r}"))
    return found


def in_content(link: str, body_html: str) -> bool:
    """True when *link* (as written in a page) is written in an article's body HTML."""
    return any(f'{name}="{link}"' in body_html for name in ("href", "src"))


def unique(items: Iterable[Broken]) -> list[Broken]:
    """*items* without repeats, in order."""
    return list(dict.fromkeys(items))
