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

Pages are scanned with one literal-prefix regular expression over the bytes instead of
an HTML parser: sitegen's own output always double-quotes attributes and escapes `"` and
`<` in text, and `html.parser` takes ~10 s over the 60 MB of a 4,000-article site where
this takes ~0.25 s (benchmarks/bench_links.py). Single-quoted or unquoted attributes a
site's own template writes are not seen. This module must never do I/O or log.
"""

from __future__ import annotations

import html
import posixpath
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from markupsafe import escape

#: Every link, in one pass over the page; those starting with `#` are the page's own
#: fragments (a link with a newline, which a browser would drop, is not seen: the stored
#: form is one link a line).
_LINK = re.compile(rb' (?:href|src)="([^"\n]+)"')
_ANCHOR_FORMS = (b' id="', b' name="')

@dataclass(frozen=True, slots=True)
class PageLinks:
    """What one page's bytes say about its links (see the module docstring).

    Links are kept as written (bytes of the attribute value): resolving them is left to
    `LinkScanner.find_broken`, which resolves each distinct link once per build.
    """

    links: tuple[bytes, ...] = ()  #: every `href`/`src` but the page's own `#fragment`s
    missing: tuple[bytes, ...] = ()  #: its own `#fragment`s with no such id on the page

    def to_bytes(self) -> bytes:
        """A compact form (stored as derived data, keyed by the page's sha256)."""
        return b"\n".join(self.links) + b"\x00" + b"\n".join(self.missing)

    @classmethod
    def from_bytes(cls, data: bytes) -> PageLinks:
        """The form `to_bytes` wrote."""
        links, _, missing = data.partition(b"\x00")
        return cls(tuple(links.split(b"\n")) if links else (),
                   tuple(missing.split(b"\n")) if missing else ())


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


def _fragment(raw: bytes) -> str:
    return unquote(html.unescape(raw.decode("utf-8", "replace")))


#: What a link resolves to: None (not the site's), a reason it is broken, or
#: (output path, fragment).
Resolved = tuple[str, str] | str | None
_PLAIN = re.compile(rb"/[A-Za-z0-9_./-]*\Z")
_PAGE_FREE = (b"/", b"http:", b"https:", b"HTTP", b"mailto:", b"data:", b"tel:")


class LinkScanner:
    """Scans pages of one site (its base URL decides which absolute links are its own)."""

    def __init__(self, base_url: str) -> None:
        parts = urlsplit(base_url)
        self.netloc = parts.netloc.lower()
        self.base_path = parts.path.rstrip("/")

    def scan(self, page: str, data: bytes) -> PageLinks:
        """The links of the page *page* (output path) with bytes *data*."""
        links = set(_LINK.findall(data))
        own = {raw for raw in links if raw.startswith(b"#")}
        missing = [raw for raw in own if not has_anchor(data, _fragment(raw[1:]))]
        return PageLinks(tuple(links - own), tuple(sorted(missing)))

    def resolve(self, page: str, link: str) -> Resolved:
        """What *link* (as written in an attribute of the output page *page*) points to."""
        if link.startswith("#"):
            return None if link == "#" else (page, unquote(html.unescape(link[1:])))
        value = html.unescape(link).strip()
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

    def _simple(self, raw: bytes) -> tuple[str, str] | None:
        """`resolve` of a plain root-relative link under the base path (most of a site's
        links: nothing to unescape, decode or normalise), else None."""
        if not _PLAIN.match(raw) or b"/." in raw or b"//" in raw:
            return None
        path = raw.decode("ascii")
        base = self.base_path
        if base:
            if not path.startswith(base + "/"):
                return None
            path = path[len(base):]
        target = path[1:]
        return (target + "index.html" if not target or target.endswith("/") else target, "")

    def find_broken(self, pages: Mapping[str, PageLinks | bytes], paths: Collection[str],
                    page_bytes: Callable[[str], bytes | None], *,
                    linked: dict[str, set[str]] | None = None,
                    looked: set[str] | None = None) -> list[Broken]:
        """Every broken link of *pages*, by page then link.

        *pages* maps each page to its scan (or the scan's `to_bytes`); *paths* are all the
        output's files; *page_bytes* gives a file's bytes when a link
        asks for one of its fragments (each file asked at most once). Each distinct link
        is decided once (a relative one once per page). *linked*, when given, gains each
        file whose bytes a page's link was decided by (a fragment of another file) → the
        pages linking so: what a later build must check again when that file changes; and
        *looked*, every output path a link was looked up as (a later build that removes
        none of them leaves every "no such file" verdict as it was).
        """
        found: list[Broken] = []
        decided: dict[bytes, tuple[str | None, str | None]] = {}
        anchors: dict[str, bytes | None] = {}

        def verdict(page: str, raw: bytes) -> tuple[str | None, str | None]:
            """(why the link is broken or None, the file whose bytes decided it or None)."""
            resolved = self._simple(raw) or self.resolve(page, raw.decode("utf-8", "replace"))
            if resolved is None or isinstance(resolved, str):
                return resolved, None
            target, fragment = resolved
            if looked is not None:
                looked.add(target)
            if target not in paths:
                folder = target + "/index.html"
                if looked is not None:
                    looked.add(folder)
                if folder not in paths:
                    return "no such file in the site", None
                target = folder
            if fragment in ("", "top"):
                return None, None
            if target not in anchors:
                anchors[target] = page_bytes(target)
            data = anchors[target]
            if data is None or not has_anchor(data, fragment):
                return f"{target} has no id {fragment!r}", target
            return None, target

        for page in sorted(pages):
            given = pages[page]
            links = PageLinks.from_bytes(given) if isinstance(given, bytes) else given
            for raw in links.missing:
                found.append(Broken(page, raw.decode("utf-8", "replace"),
                                    f"this page has no id {_fragment(raw[1:])!r}"))
            here: list[Broken] = []
            for raw in links.links:
                known = decided.get(raw)
                if known is None:
                    key = raw if raw.startswith(_PAGE_FREE) else page.encode() + b"\x00" + raw
                    known = decided.get(key)
                    if known is None:
                        known = decided[key] = verdict(page, raw)
                why, decider = known
                if decider is not None and linked is not None:
                    linked.setdefault(decider, set()).add(page)
                if why is not None:
                    here.append(Broken(page, raw.decode("utf-8", "replace"), why))
            found.extend(sorted(here, key=lambda item: item.link))
        return found


def in_content(link: str, body_html: str) -> bool:
    """True when *link* (as written in a page) is written in an article's body HTML."""
    return any(f'{name}="{link}"' in body_html for name in ("href", "src"))
