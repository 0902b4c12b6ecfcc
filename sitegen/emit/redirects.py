"""Redirects for moved articles and by hand: small redirect pages and `_redirects`.

Role: from every URL each article has had (the store's `urls`), its current URL, and
`[site] redirects` (old path → new path, by hand), decide which old URLs redirect
where: each to the *final* URL (chains followed, so two renames give two redirects to
the newest URL), never to itself, never in a loop (a cycle is dropped with a warning),
never outside the site (the configuration checks hand-made paths; the model makes
article URLs). An old URL now taken by a page or a file of the site gives way to it,
with a warning. Deleted and unpublished articles get none. For each redirect it makes
a page (meta refresh to the absolute new URL, `rel=canonical`, `noindex`, a visible
link) and one line `old new 301` of `_redirects` (the format Netlify and Cloudflare
Pages read). An owner's `static/_redirects` is merged, from the first build on: its lines
first, as written (both hosts take the first rule that matches), then sitegen's, leaving
out every old URL the owner's file already redirects (the owner wins: no line and no page,
which would hide the owner's rule on Netlify). It must never write files (the writer
does) and never build HTML by hand.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Collection, Iterator, Mapping
from urllib.parse import urlsplit

from jinja2 import Environment, Template

from sitegen.errors import ConfigError
from sitegen.model.slugs import url_to_path
from sitegen.model.views import Site

log = logging.getLogger("sitegen.build")

REDIRECTS_FILE = "_redirects"
_PAGE_SOURCE = """<!doctype html>
<html lang="{{ lang }}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ t("Moved to {target}", target=target) }}</title>
<meta name="robots" content="noindex">
<link rel="canonical" href="{{ target }}">
<meta http-equiv="refresh" content="0; url={{ target }}">
</head>
<body>
<main>
<h1>{{ t("This page has moved") }}</h1>
<p>{{ t("It is now at") }} <a href="{{ target }}">{{ target }}</a></p>
</main>
</body>
</html>
"""


@functools.cache
def _page() -> Template:
    """The redirect page's template, compiled when a build first writes one (Jinja's
    compiler is loaded by no other step of a build whose templates are cached)."""
    return Environment(autoescape=True).from_string(_PAGE_SOURCE)


def output_path(url: str) -> str:
    """The output file answering *url* ("/a/" → "a/index.html", "/a.html" → "a.html")."""
    last = url.rstrip("/").rpartition("/")[2]
    if url.endswith("/") or "." not in last:
        return url_to_path(url.rstrip("/") + "/")
    return url.lstrip("/")


def _source_key(path: str) -> str:
    """A redirect source as both hosts match it: `/a` and `/a/` are one."""
    return path.rstrip("/") or "/"


def owner_sources(text: bytes | None, base_url: str) -> frozenset[str]:
    """The site paths (`[site] url`'s path left out) an owner's `_redirects` redirects.

    Comments, blank lines and sources on another host are left out; a file that is not
    UTF-8 text is a configuration error.
    """
    if text is None:
        return frozenset()
    try:
        lines = text.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise ConfigError("static/_redirects is not UTF-8 text, which Netlify and Cloudflare "
                          "Pages read: save it as UTF-8") from None
    base = urlsplit(base_url).path.rstrip("/")
    found = set()
    for line in lines:
        fields = line.split()
        if not fields or fields[0].startswith("#") or not fields[0].startswith("/"):
            continue
        source = fields[0]
        if base and (source == base or source.startswith(base + "/")):
            source = source[len(base):] or "/"
        found.add(_source_key(source))
    return frozenset(found)


def plan_redirects(site: Site, history: Mapping[str, list[str]],
                   taken: Collection[str], owned: Collection[str] = ()) -> dict[str, str]:
    """old URL → final URL, for the moved articles in *history* and `[site] redirects`.

    *taken* holds the output paths of this build's pages and files (they win); *owned* the
    sources of the owner's `_redirects` (`owner_sources`: the owner's rule wins).
    """
    wanted: dict[str, str] = {}
    for article in sorted(site.articles, key=lambda a: a.id):
        for old in history.get(article.id, []):
            if old != article.url:
                wanted.setdefault(old, article.url)
    wanted.update(site.config.site.redirects)
    final: dict[str, str] = {}
    for old in sorted(wanted):
        if _source_key(old) in owned:
            if old in site.config.site.redirects:
                log.warning("[site] redirects has %s, which static/_redirects redirects "
                            "too and wins: remove it from one of them", old)
            continue
        if output_path(old) in taken:
            log.warning("the old URL %s now belongs to another page of the site, which keeps "
                        "it: no redirect to %s was made", old, wanted[old])
            continue
        target, seen = wanted[old], {old}
        while target in wanted and target not in seen and output_path(target) not in taken:
            seen.add(target)
            target = wanted[target]
        if target in seen:
            log.warning("the redirects from %s lead back to it: it was left out (fix "
                        "[site] redirects)", old)
            continue
        final[old] = target
    return final


def redirect_files(site: Site, redirects: Mapping[str, str],
                   translator: Callable[[str], Callable[..., str]],
                   owner: bytes | None = None) -> Iterator[tuple[str, bytes]]:
    """A redirect page per old URL, and the `_redirects` file: the *owner*'s lines (the
    bytes of `static/_redirects`), then sitegen's (none without either).

    A page speaks the language of the article it leads to (the site's otherwise), through
    *translator* (the theme's messages for a language: `Renderer.translator`).
    """
    head = owner or b""
    if head and not head.endswith(b"\n"):
        head += b"\n"  # (else sitegen's first line would continue the owner's last)
    if not redirects:
        if owner is not None:
            yield REDIRECTS_FILE, head
        return
    base = urlsplit(site.base_url).path.rstrip("/")
    languages = {article.url: article.language for article in site.articles}
    lines = []
    for old, new in sorted(redirects.items()):
        target = site.absolute(new)
        lang = languages.get(new) or site.language
        page = _page().render(lang=lang, target=target, t=translator(lang))
        yield output_path(old), page.encode("utf-8")
        lines.append(f"{base}{old} {base}{new} 301\n")
    yield REDIRECTS_FILE, head + "".join(lines).encode("utf-8")
