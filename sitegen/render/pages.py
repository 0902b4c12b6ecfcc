"""Pages → HTML bytes: the Renderer every build and preview uses.

Role: render each `Page` of a Site (its HTML pages and its site files: feeds, sitemaps,
robots.txt) through its theme template with one shared context (site, page, SEO values,
feeds, `asset()`, `feed_html()`, the beacon's settings), article bodies once per content hash
(blocks through `blocks/*.html`, else markdown), and record what each page read
(`sitegen.render.reads`) for the next build. Cards and cached partials are rendered once,
their reads added to each page showing them (many pages: `sitegen.render.pool`). It must
never write files nor put an inline script or anything executable from content in a page.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Template, TemplateError, pass_context
from jinja2.runtime import Context as JinjaContext
from markupsafe import Markup

from sitegen.config import Config
from sitegen.errors import BuildError
from sitegen.images.picture import ImageMap
from sitegen.model.kinds import kind_of
from sitegen.model.kinds import messages as kind_messages
from sitegen.model.views import ArticleView, OwnPage, Page, Site
from sitegen.render.beacon import BeaconSettings, beacon_attrs
from sitegen.render.blocks import BlockRenderer, unshown
from sitegen.render.bodies import BodyCache, RenderedBody
from sitegen.render.contextprint import context_reads, settings_fingerprint, values_fingerprint
from sitegen.render.feeds import FeedContent, build_date, clean_xml
from sitegen.render.fingerprints import Fingerprints, Registry
from sitegen.render.i18n import Catalogue, Translator
from sitegen.render.images import ShownImages
from sitegen.render.markdown import Heading, HeadingIds, ImageFinder, MarkdownRenderer
from sitegen.render.reads import Recorder
from sitegen.render.seo import page_meta, site_warnings
from sitegen.render.themes import ThemeSet

log = logging.getLogger("sitegen.render")

def static_asset_url(name: str) -> str:
    """The default asset mapping: a theme static file is served from `/static/<name>`."""
    return "/static/" + name.lstrip("/")


class TemplateHelper:
    """A function templates call (`link`, `asset`, `card`, `absolute`), marked context-free.
    Its arguments are strings, or it records its own reads; its settings are fingerprinted."""

    __slots__ = ("function",)
    jinja_pass_arg = None
    sitegen_observed = True

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)

    __call__.jinja_pass_arg = None  # type: ignore[attr-defined]


#: A fragment rendered once (a card, a cached partial): its markup and what it read.
Fragment = tuple[Markup, frozenset[str]]


class Renderer:
    """Renders the pages of one Site through one ThemeSet, recording what each reads."""

    def __init__(
        self, config: Config, site: Site, themes: ThemeSet, *,
        asset_url: Callable[[str], str] = static_asset_url, assets_fingerprint: str = "",
        beacon: BeaconSettings | None = None, bodies: BodyCache | None = None,
        images: ImageMap | None = None, parsed: ImageFinder | None = None,
    ) -> None:
        self.config = config
        self.site = site
        self.themes = themes
        self.asset_url = asset_url
        self.beacon = beacon
        self.images = images if images is not None else ImageMap()
        self.env = themes.environment()
        self._base_path = urlsplit(site.base_url).path.rstrip("/")
        shown = self.shown = ShownImages(self.images, self.env, self._base_path)
        self.registry = Registry(site)
        self.fingerprints = Fingerprints(self.registry, themes.template_source,
                                         self.fragment_fingerprint, self.images.fingerprint)
        #: The images stage's parses of new bodies, rendered from instead of parsing again.
        self.parsed = parsed if parsed and parsed.markdown.base_url == site.base_url else None
        self.markdown = MarkdownRenderer(  # (fences through the blocks' code template)
            site.base_url, code=lambda content, language: self.blocks.code(content, language),
            image=shown.body_image, parsed=self.parsed.take if self.parsed else None)
        self.blocks = BlockRenderer(self.env, self.markdown, image=shown.body_image)
        if bodies is not None:  # a body's HTML holds its images: their entries key it
            bodies.extra = lambda body_hash: self.images.digest(
                self.images.bodies.get(body_hash, ()))
        self._bodies: dict[str, tuple[Markup, list[Heading]]] = {}
        #: Bodies rendered (not found in the store) since the last `save_bodies`.
        self.fresh_bodies: dict[str, RenderedBody] = {}
        self.store = bodies
        self._owner = os.getpid()
        self._templates: dict[str, Template] = {}
        self.catalogue = Catalogue(themes.message_tables(), observe=self.env.observe_format,
                                   defaults=kind_messages())
        #: The publisher's logo in JSON-LD: the theme's page icon as a raster (`logo.png`).
        self.logo = site.absolute(asset_url("logo.png"))
        self.build_date = build_date()  # (an empty feed's date)
        self._settings = {"assets": assets_fingerprint, "base": self._base_path,
                          "bodies": bodies.fingerprint if bodies is not None else "",
                          "messages": self.catalogue.fingerprint, "logo": self.logo,
                          "beacon": dataclasses.astuple(beacon) if beacon is not None else (),
                          "date": self.build_date.isoformat()}
        self._template_fps: dict[str, bytes] = {}
        self._fragment_fps: dict[str, bytes] = {}
        self._cards: dict[tuple[str, str, bool, bool], Fragment] = {}
        self._card_macro: Callable[..., str] | None = None
        self._partials: dict[tuple[str, tuple[object, ...]], Fragment] = {}
        self.helpers: dict[str, Callable[..., Any]] = {
            name: TemplateHelper(function) for name, function in (
                ("asset", self.asset), ("link", self.link), ("card", self.card),
                ("absolute", site.absolute), ("i18n", self.translator),
                ("picture", shown.picture), ("image", shown.image),
                ("feed_html", FeedContent(self)))}

        @pass_context  # a bound method cannot carry Jinja's marker, hence the closure
        def cached_partial(context: JinjaContext, name: str, *variant: object) -> Markup:
            return self._cached_partial(context, name, *variant)

        cached_partial.sitegen_observed = True  # type: ignore[attr-defined]
        self.helpers["cached_partial"] = cached_partial

    # --- bodies ---------------------------------------------------------------------

    def body(self, article: ArticleView) -> tuple[Markup, list[Heading]]:
        """The sanitized body HTML of *article* and its table of contents (cached by hash)."""
        cached = self._bodies.get(article.body_hash)
        if cached is None and self.store is not None and os.getpid() == self._owner:
            self.preload_bodies([article])
            cached = self._bodies.get(article.body_hash)
        if cached is None:
            if article.body_kind == "blocks":
                ids = HeadingIds(title=article.title)
                html, toc = self.blocks.render(article.blocks, ids), ids.toc
            else:
                html, toc = self.markdown.render(article.content, title=article.title)
            cached = (Markup(html), list(toc))
            self._bodies[article.body_hash] = cached
            self.fresh_bodies[article.body_hash] = (html, cached[1])
        return cached

    def preload_bodies(self, articles: Iterable[ArticleView]) -> None:
        """Fetch the stored bodies of *articles* into memory (before forking workers)."""
        if self.store is None or os.getpid() != self._owner:
            return
        missing = {a.body_hash for a in articles} - self._bodies.keys()
        for body_hash, (html, toc) in self.store.get_many(missing).items():
            self._bodies[body_hash] = (Markup(html), toc)

    def take_bodies(self, fresh: dict[str, RenderedBody]) -> None:
        """Bodies a worker rendered: kept here, and stored with `save_bodies`."""
        for body_hash, (html, toc) in fresh.items():
            self._bodies.setdefault(body_hash, (Markup(html), toc))
            self.fresh_bodies[body_hash] = (html, toc)

    def save_bodies(self, keep: Iterable[ArticleView]) -> None:
        """Store the bodies rendered in this build; drop stored bodies of other articles
        (and the parses kept for bodies: the render is over)."""
        if self.store is not None:
            self.store.save(self.fresh_bodies, (a.body_hash for a in keep))
        self.fresh_bodies = {}
        if self.parsed is not None:
            self.parsed.drop()

    def article_html(self, article: ArticleView) -> str:
        """The sanitized body HTML of *article*."""
        return str(self.body(article)[0])

    def shown_articles(self, pages: Iterable[Page]) -> list[ArticleView]:
        """The articles *pages* show whole (article pages, feeds)."""
        return [a for p in pages for a in ([p.article] if p.article is not None
                                           else p.articles if kind_of(p.kind).file else ())]

    def unrendered(self, articles: Iterable[ArticleView]) -> list[ArticleView]:
        """*articles* whose body is not in memory, one article per body."""
        return list({a.body_hash: a for a in articles if a.body_hash not in self._bodies}
                    .values())

    # --- pages ----------------------------------------------------------------------

    def link(self, url: str) -> str:
        """A root-relative site URL made to work under the base URL's path ("/blog" + url)."""
        if url.startswith("/") and not url.startswith("//"):
            return self._base_path + url
        return url

    def translator(self, language: str = "") -> Translator:
        """The theme's catalogue in *language* (the site's language when empty)."""
        return self.catalogue.translator(language or self.site.language)

    def warn_missing_messages(self) -> int:
        """Log, once per language the site uses, the theme messages it has no translation
        of (they show in English). The build calls it under `--strict` only; main process."""
        languages = {self.site.language, *(a.language for a in self.site.articles if a.language)}
        gaps = self.catalogue.missing(languages)
        for language, keys in gaps.items():
            shown = ", ".join(repr(k) for k in keys[:3]) + (", …" if len(keys) > 3 else "")
            log.warning("the theme has no %r translation of %d interface string(s) (%s): "
                        "they are shown in English; add them to the theme's messages.toml",
                        language, len(keys), shown)
        return len(gaps)

    def warn_metadata(self) -> None:
        """Log, once per build, what the metadata lacks and the blocks no template draws."""
        for message in site_warnings(self.site) + unshown(self.site.articles,
                                                          self.themes.template_source):
            log.warning("%s", message)

    def asset(self, name: str) -> str:
        """The URL of a theme static file (through `asset_url`, then `link` unless that
        URL is under the base URL's path already, as an `AssetSet`'s URLs are)."""
        url = self.asset_url(name)
        base = self._base_path
        if base and url.startswith(base + "/"):
            return url
        return self.link(url)

    def card(self, article: ArticleView, heading: str = "h2", eager: bool = False,
             lazy: bool = True) -> Markup:
        """The `card` macro of `partials/card.html` for *article*, rendered once and reused.

        A card sees only its arguments and `site`, `link`, `asset`, `absolute`, `i18n` (not
        the page), so the same article's card is identical on every list it appears on; it
        speaks its article's language (`i18n(article.language)`) and says so with `lang`.
        *eager* (a list's first picture) fetches its picture first and `lazy=False` (the rest
        of the first screen) at once, each passed only to a macro that declares it."""
        key = (article.id, heading, eager, lazy)
        found = self._cards.get(key)
        if found is None:
            with self.env.recording(self.registry.keys) as recorder:
                if self._card_macro is None:
                    helpers = self.helpers
                    module = self.env.get_template("partials/card.html").make_module({
                        "site": self.site, "link": helpers["link"], "asset": helpers["asset"],
                        "absolute": helpers["absolute"], "i18n": helpers["i18n"],
                        "picture": helpers["picture"], "image": helpers["image"],
                    })
                    self._card_macro = getattr(module, "card")  # noqa: B009
                recorder.reads.add("T\x00partials/card.html")
                macro = self._card_macro
                declared = getattr(macro, "arguments", ())
                wanted = {k: v for k, v in {"eager": eager, "lazy": lazy}.items() if k in declared}
                markup = Markup(macro(article, heading, **wanted))
            found = self._cards[key] = (markup, frozenset(recorder.reads))
        self._replay(found)
        return found[0]

    def _cached_partial(self, context: JinjaContext, name: str, *variant: object) -> Markup:
        """`cached_partial(name, *variant)`: the template *name*, rendered once per variant.

        Like Hugo's `partialCached`: the first page asking for (name, variant) renders the
        partial with its own context, and every later page with the same variant gets
        those bytes (and the reads they took). The variant must name everything
        page-specific the partial shows. Values must be hashable. The page's language is
        always part of the variant: a partial's interface strings speak it (`t`).
        """
        key = (name, (context.get("lang"), *variant))
        found = self._partials.get(key)
        if found is None:
            with self.env.recording(self.registry.keys) as recorder:
                rendered = self._template(name).render(context.get_all())
                recorder.reads.add("T\x00" + name)
                page = context.get("page")
                if isinstance(page, Page):
                    recorder.reads.add("C\x00page:" + page.path)
            found = self._partials[key] = (Markup(rendered), frozenset(recorder.reads))
        self._replay(found)
        return found[0]

    def _replay(self, fragment: Fragment) -> None:
        recorder = self.env.recorder
        if recorder is not None:
            recorder.reads.update(fragment[1])

    def context(self, page: Page, *, body: bool = True) -> dict[str, object]:
        """Everything a page template sees (documented in THEMES.md).

        Without *body*, the article's body and table of contents are left empty (the
        fragment fingerprint knows them by the body's key instead).
        """
        site = self.site
        helpers = self.helpers
        context: dict[str, object] = {
            "site": site,
            "page": page,
            "meta": page_meta(site, page, self.logo, self.shown.share_image,
                              self.translator(page.language), self.images.bodies),
            "lang": page.language or site.language,
            "t": self.translator(page.language),
            "i18n": helpers["i18n"],
            "asset": helpers["asset"],
            "link": helpers["link"],
            "card": helpers["card"],
            "absolute": helpers["absolute"],
            "cached_partial": helpers["cached_partial"],
            "picture": helpers["picture"],
            "image": helpers["image"],
            "feed_html": helpers["feed_html"],
            "build_date": self.build_date,
            "feed_url": page.feed_url or site.feed_url,
            "beacon": beacon_attrs(self.beacon, page) if self.beacon is not None else None,
            "beacon_src": self.beacon.script_url if self.beacon is not None else "",
            "articles": page.articles,
            "section": page.obj if page.article is None and page.own_page is None else None,
            "article": page.article,
            "draft": page.kind == "draft",  # (`serve --drafts`: a draft, marked as one)
            "own_page": page.own_page,
            "body": Markup(""),
            "toc": [],
        }
        if page.article is not None and body:
            context["body"], context["toc"] = self.body(page.article)
        elif page.own_page is not None and body:
            context["body"], context["toc"] = self.own_body(page.own_page)
        return context

    def own_body(self, own: OwnPage) -> tuple[Markup, list[Heading]]:
        """The sanitized body of an own page: its Markdown rendered as an article's is."""
        cached = self._bodies.get(own.body_hash)
        if cached is None:
            html, toc = self.markdown.render(own.content, title=own.title)
            cached = self._bodies[own.body_hash] = (Markup(html), list(toc))
        return cached

    def context_reads(self, page: Page) -> list[str]:
        """The reads *page*'s context is made of (`render.contextprint`), recorded with its
        templates' reads, so a page kept costs the plan no context made."""
        return context_reads(self.site, page, self.registry.keys, self.images.bodies)

    def context_fingerprint(self, page: Page) -> bytes:
        """What *page*'s context holds beside its reads: its template and the build's
        settings (assets, base path, bodies' code, messages, logo, beacon, build date)."""
        if (found := self._template_fps.get(page.template)) is None:
            found = self._template_fps[page.template] = settings_fingerprint(
                page.template, self._settings)
        return found

    def fragment_fingerprint(self, page: Page) -> bytes:
        """What a fragment (a cached partial) rendered with *page*'s context can show of it
        beside the reads it records (`render.contextprint.values_fingerprint`): made for the
        few pages a cached partial was rendered with (the read `C page:<path>`)."""
        if (found := self._fragment_fps.get(page.path)) is None:
            helpers = {id(helper) for helper in self.helpers.values()}
            found = self._fragment_fps[page.path] = values_fingerprint(
                page, self.context(page, body=False), self.registry.keys, helpers,
                self._settings)
        return found

    def _template(self, name: str) -> Template:
        """The compiled template *name*, looked up once per renderer."""
        if (template := self._templates.get(name)) is None:
            template = self._templates[name] = self.env.get_template(name)
        return template

    def render(self, page: Page) -> bytes:
        """The HTML bytes of *page*."""
        return self.render_recorded(page)[0]

    def render_recorded(self, page: Page) -> tuple[bytes, frozenset[str]]:
        """The HTML bytes of *page*, and every read its templates made."""
        template = self._template(page.template)
        context = self.context(page)
        try:
            with self.env.recording(self.registry.keys) as recorder:
                recorder.reads.add("T\x00" + page.template)
                recorder.reads.update(self.context_reads(page))
                body = page.article or page.own_page
                for url in self.images.bodies.get(body.body_hash, ()) if body else ():
                    recorder.reads.add("I\x00" + url)
                text = template.render(context)
                data = (clean_xml(text) if page.template.endswith(".xml") else text).encode()
        except TemplateError as error:
            raise BuildError(f"rendering {page.path} with template {page.template} failed "
                             f"({type(error).__name__}: {error}): fix the template") from None
        except RecursionError:
            raise BuildError(f"rendering {page.path} with template {page.template} never ended: "
                             "a template extends or includes itself (an override of x.html "
                             'extends "theme/x.html", not "x.html"): fix the template') from None
        return data, frozenset(recorder.reads)


__all__ = ["BeaconSettings", "Recorder", "Renderer", "TemplateHelper", "static_asset_url"]
