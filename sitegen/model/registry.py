"""The page kinds registry: what a kind of page is, and the registry's look-ups.

Role: a `Kind` names everything sitegen knows of one kind of page — its URL, its template,
the function that lays out its pages (`sitegen.model.layout`), the view its pages show
(`Page.obj`, keyed for the reads of incremental builds), its SEO type and robots directive,
its beacon page type, the first URL segments it reserves, its interface messages and their
translations, and whether the sitemap lists it. Layout (`layout_pages`, `layout_files`),
SEO (`sitegen.render.seo`), the beacon (`sitegen.render.beacon`), the entity keys
(`sitegen.render.fingerprints`), the reserved slugs (`sitegen.model.slugs.reserved`) and the
catalogue's default messages (`messages`) all derive from `KINDS`, in whose order pages are
laid out. The built-in kinds are declared in `sitegen.model.kinds` (which imports the
layout functions; this module imports none, so layout and slugs can look kinds up). A new kind
is one `register(Kind(...))` and one template. Must never do I/O, log, or render.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from sitegen.errors import BuildError
from sitegen.model.views import Page, Section, Site

#: Lays out a kind's pages: (its Kind, the site, the pages laid out before it) → pages.
Layout = Callable[["Kind", Site, Sequence[Page]], list[Page]]


def _none(site: Site) -> Sequence[Section]:
    return ()


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of page (see the module docstring)."""

    name: str
    #: Its URL: fixed ("/search/"), or a pattern ("/tags/{slug}/"; "" when the content
    #: decides, as an article's permalink). Its first literal segment is reserved.
    url: str
    template: str
    layout: Layout
    #: The entity its pages show (`Page.obj`), keyed `<key>:<view_id attribute>`.
    view: type | None = None
    key: str = ""
    view_id: str = "id"
    #: JSON-LD `@type` ("" for none) and `og:type`; "" robots for none.
    seo: str = "CollectionPage"
    og_type: str = "website"
    robots: str = "index,follow"
    #: Whether its pages have a canonical URL (the 404 page has no address of its own).
    canonical: bool = True
    #: Whether the page's title is interface text, translated (not a name).
    interface_title: bool = False
    beacon: str = "unknown"
    reserved: tuple[str, ...] = ()
    #: Its interface messages' translations: {language: {English: translation}}; the
    #: theme's `messages.toml` wins over them.
    messages: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    sitemap: bool = True
    #: A site file (feed, sitemap, robots.txt), not an HTML page.
    file: bool = False
    #: A page of the drafts preview only (`serve --drafts`): never in the search index.
    preview_only: bool = False
    #: A kind of section: its sections, whether each has a feed (`<url>feed.xml`), whether
    #: its listing links that feed (else the site's), and its index page (URL, title, and
    #: meta description: a message with `{site}`).
    members: Callable[[Site], Sequence[Section]] = _none
    feeds: bool = False
    feed_link: bool = False
    index_url: str = ""
    index_title: str = ""
    index_description: str = ""

    def url_for(self, **values: str) -> str:
        """Its URL with *values* in its pattern ("/tags/{slug}/" → "/tags/x/")."""
        return self.url.format(**values)

    def reserves(self) -> set[str]:
        """The first URL segments it keeps (a segment and its stem: "feed.xml", "feed")."""
        names = set(self.reserved)
        first = self.url.strip("/").split("/", 1)[0]
        if first and "{" not in first:
            names |= {first, first.split(".", 1)[0]}
        return names


KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    """Add *kind* to the registry (after the others, before the 404 page and site files)."""
    if kind.name in KINDS:
        raise ValueError(f"the page kind {kind.name!r} is declared twice")
    last = [k for k in KINDS.values() if k.name == "404" or k.file]
    for k in last:
        del KINDS[k.name]
    KINDS[kind.name] = kind
    for k in last:
        KINDS.setdefault(k.name, k)
    return kind


def unregister(name: str) -> None:
    """Remove the kind *name* (a test's fixture kind)."""
    KINDS.pop(name, None)


def kind_of(name: str) -> Kind:
    """The registered kind *name*; a clear error for one never declared."""
    found = KINDS.get(name)
    if found is None:
        raise BuildError(f"the page kind {name!r} is not declared: register it in the page "
                         "kinds registry (sitegen.model.kinds)")
    return found


def layout_pages(site: Site) -> list[Page]:
    """Every HTML page of *site*, kind by kind in the registry's order."""
    return _laid(site, (k for k in KINDS.values() if not k.file))


def layout_files(site: Site) -> list[Page]:
    """The site files drawn by templates (after `site.pages` are laid out)."""
    return _laid(site, (k for k in KINDS.values() if k.file))


def _laid(site: Site, kinds: Iterator[Kind]) -> list[Page]:
    pages: list[Page] = []
    for kind in kinds:
        pages += kind.layout(kind, site, pages)
    return pages


def indexed_kinds() -> list[Kind]:
    """The kinds of section with an index page, in the registry's order."""
    return [k for k in KINDS.values() if k.index_url]


def feed_kinds() -> list[Kind]:
    """The kinds of section whose sections each have a feed."""
    return [k for k in KINDS.values() if k.feeds]


def view_keys() -> dict[type, Callable[[object], str]]:
    """How each kind's view is keyed (`page:<path>` and `site` are the reads' own)."""
    found: dict[type, Callable[[object], str]] = {}
    for kind in KINDS.values():
        if kind.view is not None:
            found.setdefault(kind.view, _keyer((kind.key or kind.name) + ":", kind.view_id))
    return found


def _keyer(prefix: str, attribute: str) -> Callable[[object], str]:
    def key(entity: object) -> str:
        return prefix + str(getattr(entity, attribute))
    return key


def reserved_segments() -> frozenset[str]:
    """Every first URL segment a kind keeps."""
    return frozenset(name for kind in KINDS.values() for name in kind.reserves())


def messages() -> dict[str, dict[str, str]]:
    """The kinds' translations, merged: {language: {English: translation}}."""
    merged: dict[str, dict[str, str]] = {}
    for kind in KINDS.values():
        for language, table in kind.messages.items():
            merged.setdefault(language, {}).update(table)
    return merged
