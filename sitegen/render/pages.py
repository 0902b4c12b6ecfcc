"""Pages → HTML bytes: the Renderer every build and preview uses.

Role: render each `Page` of a Site through its theme template with one shared
context (site, page, SEO values, feeds, `asset()`, the beacon tag's settings),
render article bodies once per content hash (blocks through `blocks/*.html`,
else markdown), hash what decides a page's bytes without rendering it, and
spread many pages over a fork-based process pool in a deterministic order. It
must never write files (the emit stage does), never log from workers, and never
put an inline script or anything executable from content into a page.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from jinja2 import Template, TemplateError, pass_context
from jinja2.runtime import Context as JinjaContext
from markupsafe import Markup

from sitegen.config import Config
from sitegen.errors import BuildError
from sitegen.heap import frozen_heap
from sitegen.model.views import ArticleView, Page, Site
from sitegen.render.blocks import BlockRenderer
from sitegen.render.bodies import Body, BodyStore
from sitegen.render.markdown import Heading, HeadingIds, MarkdownRenderer
from sitegen.render.seo import page_meta
from sitegen.render.themes import ThemeSet

if TYPE_CHECKING:  # multiprocessing is imported when a pool is needed
    import multiprocessing.pool

#: Below this many pages, rendering stays in-process (a pool costs more than it saves).
PARALLEL_THRESHOLD = 200
CHUNK_SIZE = 48
_OBJECT_ID = re.compile(r"^[0-9a-fA-F]{24}$")

PAGE_TYPES = {"home": "workspace", "article": "article", "agent": "agent"}


@dataclass(frozen=True, slots=True)
class BeaconSettings:
    """What the page-view beacon tag needs (the script itself is written by the emit stage)."""

    endpoint: str
    key: str
    site_slug: str
    script_url: str

    def __repr__(self) -> str:  # never show the key, even a public one, in logs
        return f"BeaconSettings(endpoint={self.endpoint!r}, site_slug={self.site_slug!r})"


def static_asset_url(name: str) -> str:
    """The default asset mapping: a theme static file is served from `/static/<name>`."""
    return "/static/" + name.lstrip("/")


class TemplateHelper:
    """A function templates call (`link`, `asset`, `card`, `absolute`), marked context-free.

    Jinja asks every callable it calls whether it wants the context (`jinja_pass_arg`);
    on a bound method both lookups fail through AttributeError. Here they succeed at once.
    """

    __slots__ = ("function",)
    jinja_pass_arg = None

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)

    __call__.jinja_pass_arg = None  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Job:
    """Extra work for the pool beside pages (feeds, sitemaps): makes (path, bytes) files.

    *articles* are those whose bodies it reads (`Renderer.article_html`): bodies the
    workers did not inherit (rendered during this build, by either worker) are sent
    along with the job, so no body is rendered twice.
    """

    run: Callable[[], list[tuple[str, bytes]]]
    articles: Sequence[ArticleView] = ()

    def __call__(self) -> list[tuple[str, bytes]]:
        return self.run()


class Stager(Protocol):
    """The emit stage's hook for workers (`sitegen.emit.tree.FreshStager`)."""

    def stage(self, path: str, data: bytes, digest: str) -> bool:
        """Put a rendered file into the output's staging; False: send the bytes back."""
        ...


# The renderer, pages, jobs and stager a forked worker works on (set just before fork).
_FORK_STATE: tuple[Renderer, Sequence[Page], Sequence[Job], Stager | None] | None = None


#: A rendered file: output path, bytes, and the bytes' sha256 hex digest.
HashedFile = tuple[str, bytes, str]
#: `HashedFile`, with None for bytes a worker already staged through a `Stager`.
StagedFile = tuple[str, bytes | None, str]


def _hashed(files: Iterable[tuple[str, bytes]]) -> list[HashedFile]:
    return [(path, data, hashlib.sha256(data).hexdigest()) for path, data in files]


def _render_chunk(task: tuple[int, int]) -> tuple[list[StagedFile], dict[str, Body]]:
    """One task in a worker: pages[start:end], and the bodies it rendered.

    The files' sha256 is taken here, in the worker, and pages the stager accepts are
    written here too, so the parent only records them.
    """
    assert _FORK_STATE is not None
    renderer, pages, _, stager = _FORK_STATE
    start, end = task
    done: list[StagedFile] = []
    for page in pages[start:end]:
        data = renderer.render(page)
        digest = hashlib.sha256(data).hexdigest()
        if stager is not None and stager.stage(page.path, data, digest):
            done.append((page.path, None, digest))
        else:
            done.append((page.path, data, digest))
    fresh, renderer.fresh_bodies = renderer.fresh_bodies, {}
    return done, fresh


def _run_job(task: tuple[int, dict[str, Body]]) -> tuple[list[StagedFile], dict[str, Body]]:
    """One job in a worker, given the bodies it reads that the worker may lack."""
    assert _FORK_STATE is not None
    renderer, _, jobs, _ = _FORK_STATE
    index, bodies = task
    for body_hash, (html, toc) in bodies.items():
        renderer._bodies.setdefault(body_hash, (Markup(html), toc))
    files: list[StagedFile] = list(_hashed(jobs[index]()))
    fresh, renderer.fresh_bodies = renderer.fresh_bodies, {}
    return files, fresh


#: Seconds a render worker may take over one task (48 pages, or one job: well under a
#: second) before the build gives up on the pool instead of waiting forever.
WORKER_TIMEOUT = 120.0

Answer = tuple[list[StagedFile], dict[str, Body]]


def _new_pool(count: int) -> multiprocessing.pool.Pool:
    """A fork pool of *count* render workers that end on SIGTERM, whatever the parent's handler.

    `Pool.terminate` — the end of every pool, `with` block included — ends its workers with
    SIGTERM. A worker that inherited a Python-level handler (the preview's, which stops it
    like Ctrl-C; or an embedding program's) runs it only between bytecodes: one the signal
    reached just before it blocked on the pool's task-queue lock slept on, and the pool
    waited for it forever (seen: a preview build hung in `Pool.terminate`; reproduced
    within 17-114 pools in a row). So SIGTERM stays blocked while the workers are forked, and
    each worker sets the default action (the kernel ends it) before it takes it again.
    """
    import multiprocessing
    import signal

    context = multiprocessing.get_context("fork")
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        return context.Pool(count, initializer=_worker_signals)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _worker_signals() -> None:
    """In a new render worker: SIGTERM ends it at once (see `_new_pool`)."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


def _answers(results: multiprocessing.pool.IMapIterator[Answer]) -> Iterator[Answer]:
    """The pool's answers in order; a worker silent for WORKER_TIMEOUT s fails the build.

    multiprocessing.Pool waits forever for a task whose worker was killed (the OOM killer,
    `kill -9`) or stuck: this turns either into one error line, and the pool (ended by its
    `with` block) takes its workers down.
    """
    from multiprocessing import TimeoutError as WorkerTimeout

    while True:
        try:
            yield results.next(WORKER_TIMEOUT)
        except StopIteration:
            return
        except WorkerTimeout:
            raise BuildError(
                f"a render worker gave no answer for {WORKER_TIMEOUT:.0f} s (it was killed or "
                "is stuck): the previous output was kept; build again, and if it happens again "
                "report it as a sitegen bug"
            ) from None


class Renderer:
    """Renders the pages of one Site through one ThemeSet."""

    def __init__(
        self, config: Config, site: Site, themes: ThemeSet, *,
        asset_url: Callable[[str], str] = static_asset_url,
        beacon: BeaconSettings | None = None, bodies: BodyStore | None = None,
    ) -> None:
        self.config = config
        self.site = site
        self.themes = themes
        self.asset_url = asset_url
        self.beacon = beacon
        self.env = themes.environment()
        self.blocks = BlockRenderer(self.env, MarkdownRenderer(site.base_url))
        self.markdown = MarkdownRenderer(site.base_url, code=self.blocks.code)
        self.blocks.markdown = self.markdown
        self._bodies: dict[str, tuple[Markup, list[Heading]]] = {}
        #: Bodies rendered (not found in the store) since the last `save_bodies`.
        self.fresh_bodies: dict[str, Body] = {}
        self.store = bodies
        self._owner = os.getpid()
        self._templates: dict[str, Template] = {}
        self._base_path = urlsplit(site.base_url).path.rstrip("/")
        self._cards: dict[tuple[str, str], Markup] = {}
        self._card_macro: Callable[..., str] | None = None
        self._fingerprint = self._compute_fingerprint()
        self._helpers: dict[str, Callable[..., Any]] = {
            name: TemplateHelper(function) for name, function in (
                ("asset", self.asset), ("link", self.link), ("card", self.card),
                ("absolute", site.absolute))}

        @pass_context  # a bound method cannot carry Jinja's marker, hence the closure
        def cached_partial(context: JinjaContext, name: str, *variant: object) -> Markup:
            return self._cached_partial(context, name, *variant)

        self._helpers["cached_partial"] = cached_partial
        self._partials: dict[tuple[str, tuple[object, ...]], Markup] = {}

    # --- hashing ----------------------------------------------------------------

    def _compute_fingerprint(self) -> str:
        digest = hashlib.sha256(self.themes.fingerprint().encode())
        digest.update(self.config.model_dump_json().encode())
        for folder in self.themes.static_dirs():
            for path in sorted(p for p in folder.rglob("*") if p.is_file()):
                name = path.relative_to(folder).as_posix()
                digest.update(f"\x00{name}={self.asset_url(name)}".encode())
        if self.beacon is not None:
            b = self.beacon
            digest.update(f"\x00beacon:{b.endpoint}|{b.key}|{b.site_slug}|{b.script_url}".encode())
        return digest.hexdigest()

    def page_hash(self, page: Page) -> str:
        """A hash of everything that decides *page*'s bytes (no rendering involved)."""
        return hashlib.sha256(
            f"{self._fingerprint}\x00{page.template}\x00{page.path}\x00{page.input_digest}"
            .encode()
        ).hexdigest()[:32]

    # --- bodies ---------------------------------------------------------------------

    def body(self, article: ArticleView) -> tuple[Markup, list[Heading]]:
        """The sanitized body HTML of *article* and its table of contents (cached by hash)."""
        cached = self._bodies.get(article.body_hash)
        if cached is None and self.store is not None and os.getpid() == self._owner:
            self.preload_bodies([article])
            cached = self._bodies.get(article.body_hash)
        if cached is None:
            ids = HeadingIds()
            if article.body_kind == "blocks":
                html = self.blocks.render(article.blocks, ids)
            else:
                html, _ = self.markdown.render(article.content, ids)
            cached = (Markup(html), list(ids.toc))
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

    def save_bodies(self, keep: Iterable[ArticleView]) -> None:
        """Store the bodies rendered in this build; drop stored bodies of other articles."""
        if self.store is not None:
            self.store.update(self.fresh_bodies, (a.body_hash for a in keep))
        self.fresh_bodies = {}

    def article_html(self, article: ArticleView) -> str:
        """The sanitized body HTML of *article* (for Atom feeds)."""
        return str(self.body(article)[0])

    # --- pages ----------------------------------------------------------------------

    def _beacon_attrs(self, page: Page) -> dict[str, str] | None:
        if self.beacon is None:
            return None
        attrs = {
            "data-endpoint": self.beacon.endpoint,
            "data-key": self.beacon.key,
            "data-site-slug": self.beacon.site_slug,
            "data-page-type": PAGE_TYPES.get(page.kind, "unknown"),
        }
        article = page.article
        if article is not None:
            if _OBJECT_ID.match(article.id):
                attrs["data-article-id"] = article.id
            if article.agent is not None and _OBJECT_ID.match(article.agent.id):
                attrs["data-agent-id"] = article.agent.id
            attrs["data-article-slug"] = article.slug
        elif page.kind == "agent" and page.obj is not None:
            agent_id = str(getattr(page.obj, "id", ""))
            if _OBJECT_ID.match(agent_id):
                attrs["data-agent-id"] = agent_id
        return {k: v for k, v in attrs.items() if v}

    def link(self, url: str) -> str:
        """A root-relative site URL made to work under the base URL's path ("/blog" + url)."""
        if url.startswith("/") and not url.startswith("//"):
            return self._base_path + url
        return url

    def asset(self, name: str) -> str:
        """The URL of a theme static file (through `asset_url`, then `link`)."""
        return self.link(self.asset_url(name))

    def card(self, article: ArticleView, heading: str = "h2") -> Markup:
        """The `card` macro of `partials/card.html` for *article*, rendered once and reused.

        A card sees only its arguments and `site`, `link`, `asset`, `absolute` (not the
        page), so the same article's card is identical on every list it appears on.
        """
        key = (article.id, heading)
        found = self._cards.get(key)
        if found is None:
            if self._card_macro is None:
                helpers = self._helpers
                module = self.env.get_template("partials/card.html").make_module({
                    "site": self.site, "link": helpers["link"], "asset": helpers["asset"],
                    "absolute": helpers["absolute"],
                })
                self._card_macro = getattr(module, "card")  # noqa: B009
            found = Markup(self._card_macro(article, heading))
            self._cards[key] = found
        return found

    def _cached_partial(self, context: JinjaContext, name: str, *variant: object) -> Markup:
        """`cached_partial(name, *variant)`: the template *name*, rendered once per variant.

        Like Hugo's `partialCached`: the first page asking for (name, variant) renders the
        partial with its own context, and every later page with the same variant gets
        those bytes. The variant must name everything page-specific the partial shows
        (the default theme's navigation: which topic is current). Values must be hashable.
        """
        key = (name, variant)
        found = self._partials.get(key)
        if found is None:
            rendered = self._template(name).render(context.get_all())
            found = self._partials[key] = Markup(rendered)
        return found

    def context(self, page: Page) -> dict[str, object]:
        """Everything a page template sees (documented in THEMES.md)."""
        site = self.site
        helpers = self._helpers
        context: dict[str, object] = {
            "site": site,
            "page": page,
            "meta": page_meta(site, page),
            "lang": page.language or site.language,
            "asset": helpers["asset"],
            "link": helpers["link"],
            "card": helpers["card"],
            "absolute": helpers["absolute"],
            "cached_partial": helpers["cached_partial"],
            "feed_url": page.feed_url or site.feed_url,
            "beacon": self._beacon_attrs(page),
            "beacon_src": self.beacon.script_url if self.beacon is not None else "",
            "articles": page.articles,
            "section": page.obj if page.article is None else None,
            "article": page.article,
            "body": Markup(""),
            "toc": [],
        }
        if page.article is not None:
            body, toc = self.body(page.article)
            context["body"] = body
            context["toc"] = toc
        return context

    def _template(self, name: str) -> Template:
        """The compiled template *name*, looked up once per renderer."""
        template = self._templates.get(name)
        if template is None:
            template = self._templates[name] = self.env.get_template(name)
        return template

    def render(self, page: Page) -> bytes:
        """The HTML bytes of *page*."""
        template = self._template(page.template)
        try:
            return template.render(self.context(page)).encode("utf-8")
        except TemplateError as error:
            raise BuildError(
                f"rendering {page.path} with template {page.template} failed "
                f"({type(error).__name__}: {error}): fix the template"
            ) from None

    def render_pages(
        self, pages: Sequence[Page], workers: int | None = None, jobs: Sequence[Job] = (),
    ) -> Iterator[tuple[str, bytes]]:
        """(page.path, bytes) for every page, in order, then each job's files in job order.

        Many pages use a fork pool; *jobs* (site-wide files such as feeds, which read
        bodies through this renderer) then run in the same workers, after the pages.
        """
        for path, data, _ in self.render_hashed(pages, workers, jobs):
            yield path, data

    def render_hashed(
        self, pages: Sequence[Page], workers: int | None = None, jobs: Sequence[Job] = (),
    ) -> Iterator[HashedFile]:
        """`render_pages` with each file's sha256 hex digest (taken in the pool's workers)."""
        for path, data, digest in self.render_staged(pages, None, workers, jobs):
            assert data is not None  # nothing is staged without a stager
            yield path, data, digest

    def render_staged(
        self, pages: Sequence[Page], stager: Stager | None, workers: int | None = None,
        jobs: Sequence[Job] = (),
    ) -> Generator[StagedFile, None, None]:
        """`render_hashed`, where pool workers may hand a page to *stager* (bytes None then).

        Close the iterator (`contextlib.closing`) when the consumer fails: that stops the
        pool at once, so no worker writes on while the build cleans up.
        """
        pages = list(pages)
        with frozen_heap():
            yield from self._render_pages(pages, workers, list(jobs), stager)

    def _render_pages(
        self, pages: list[Page], workers: int | None, jobs: list[Job], stager: Stager | None,
    ) -> Iterator[StagedFile]:
        count = workers if workers is not None else (os.cpu_count() or 1)
        parallel = count > 1 and len(pages) >= PARALLEL_THRESHOLD
        if parallel:
            import multiprocessing

            parallel = "fork" in multiprocessing.get_all_start_methods()
        if not parallel:
            for page in pages:
                data = self.render(page)
                yield page.path, data, hashlib.sha256(data).hexdigest()
            for job in jobs:
                yield from _hashed(job())
            return
        global _FORK_STATE
        _FORK_STATE = (self, pages, jobs, stager)
        inherited = frozenset(self._bodies)
        try:
            bounds = [(i, min(i + CHUNK_SIZE, len(pages)))
                      for i in range(0, len(pages), CHUNK_SIZE)]
            with _new_pool(count) as pool:
                for results, fresh in _answers(pool.imap(_render_chunk, bounds)):
                    self._take_fresh(fresh)
                    yield from results
                # Jobs go out once every page is in: with the bodies rendered meanwhile.
                tasks = [(n, self._bodies_for(job, inherited)) for n, job in enumerate(jobs)]
                for results, fresh in _answers(pool.imap(_run_job, tasks)):
                    self._take_fresh(fresh)
                    yield from results
        finally:
            _FORK_STATE = None

    def _take_fresh(self, fresh: dict[str, Body]) -> None:
        for body_hash, (html, toc) in fresh.items():
            self._bodies.setdefault(body_hash, (Markup(html), toc))
            self.fresh_bodies[body_hash] = (html, toc)

    def _bodies_for(self, job: Job, inherited: frozenset[str]) -> dict[str, Body]:
        """The bodies *job* reads that workers did not inherit and this process has."""
        wanted: dict[str, Body] = {}
        for article in getattr(job, "articles", ()):  # a plain callable reads no bodies
            found = self._bodies.get(article.body_hash)
            if found is not None and article.body_hash not in inherited:
                wanted[article.body_hash] = (str(found[0]), found[1])
        return wanted
