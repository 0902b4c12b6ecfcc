"""Markdown → safe HTML (markdown-it-py), with shifted, anchored headings and a TOC.

Role: render untrusted markdown with "commonmark" + tables + strikethrough and
raw HTML off. Links and images keep only http(s), mailto and relative URLs (any
other link becomes its text, any other image its alt text); external links get
rel="noopener noreferrer"; images go through the `image` hook (processed images
as a sized `<picture>`), else load lazily but for the body's first, and an image
with no alt text has an empty one (never a guess from its section); headings are renumbered so the
body's top level is <h2> (the page title is the only <h1>) and each deeper level
is one below its parent, never skipping one; they get ids unique per page; fenced code goes
through a code renderer (the theme's `blocks/code.html`). `ImageFinder` lends this
parse to the images stage, which runs before the render: a body's image URLs, as its HTML
writes them; it keeps each token stream it made until the render takes it
(`MarkdownRenderer(parsed=finder.take)`), so a new body is parsed once per build. It must
never let raw HTML, a script or an unsafe URL through, and never do I/O (but
`ImageFinder.key`'s read of its own code).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from markupsafe import escape

from sitegen.codeprint import code_fingerprint
from sitegen.model.slugs import slugify
from sitegen.urls import is_external, safe_http_url, safe_url

if TYPE_CHECKING:  # markdown-it itself is imported when a document is first parsed
    from markdown_it import MarkdownIt
    from markdown_it.renderer import RendererHTML
    from markdown_it.rules_core import StateCore
    from markdown_it.token import Token
    from markdown_it.utils import EnvType, OptionsDict

#: ids the themes use for their own landmarks; headings never take them.
THEME_IDS = frozenset({
    "top", "main", "content", "site-header", "site-nav", "site-footer", "toc", "related",
    "article", "article-body", "comments", "footnotes", "pagination", "search",
})

INLINE_CACHE_SIZE = 20_000
#: How much markdown source `ImageFinder` keeps the parses of for the render, in characters:
#: a token tree takes ~28 bytes per source character (52 KiB for a 1,800-character body), so
#: at most ~60 MB; a first build of more new bodies with images parses the rest twice.
HELD_CHARACTERS = 2_000_000
# Characters that can start inline markdown (or an entity / autolink), and hard breaks.
_INLINE_SYNTAX = re.compile(r"[\\*_\[\]!`<>&~]| {2,}\n|https?:|\t")
_LINE_SPACE = re.compile(r"[ \t]*\n[ \t]*")

CodeRenderer = Callable[[str, "str | None"], str]
#: (src, alt, index of the image in the body) → its HTML, "" to drop it to its alt text, or
#: None to write it as a plain lazy `<img>` (`Renderer.body_image`).
ImageRenderer = Callable[[str, str, int], "str | None"]
#: A source's tokens as the parse left them, and its headings: `Parsed(source)`, or None.
Parsed = Callable[[str], "tuple[list[Token], HeadingIds] | None"]


@dataclass(frozen=True, slots=True)
class Heading:
    """One entry of a table of contents: the rendered level (2–6), anchor id and text."""

    level: int
    id: str
    text: str


@dataclass(slots=True)
class HeadingIds:
    """One page's headings: ids unique within the page (slug of the text, then -2, -3...)
    and rendered levels without gaps (`level`)."""

    taken: set[str] = field(default_factory=lambda: set(THEME_IDS))
    toc: list[Heading] = field(default_factory=list)
    #: The open sections: (source level, rendered level), outermost first.
    open: list[tuple[int, int]] = field(default_factory=list)
    #: Images rendered so far in this body (the first is not lazy).
    images: int = 0
    #: The title of the page the body is on.
    title: str = ""

    def level(self, source: int) -> int:
        """The rendered level of the next heading of source level *source*.

        The body's first and shallowest headings become <h2>; a heading deeper than the
        one before it becomes one level below that one's rendered level (`##` then `####`
        gives h2, h3), and one as shallow as an open section takes that section's level.
        """
        source = min(6, max(1, source))
        while self.open and self.open[-1][0] >= source:
            self.open.pop()
        rendered = min(6, self.open[-1][1] + 1) if self.open else 2
        self.open.append((source, rendered))
        return rendered

    def add(self, level: int, text: str) -> str:
        """Register a heading; returns its unique id and records it in `toc`."""
        base = slugify(text) or "section"
        anchor, n = base, 2
        while anchor in self.taken:
            anchor, n = f"{base}-{n}", n + 1
        self.taken.add(anchor)
        self.toc.append(Heading(level, anchor, text))
        return anchor


def _plain(children: Sequence[Token] | None) -> str:
    parts: list[str] = []
    for child in children or []:
        if child.type in {"text", "code_inline"}:
            parts.append(child.content)
        elif child.type in {"softbreak", "hardbreak"}:
            parts.append(" ")
        elif child.type == "image":
            parts.append(_plain(child.children))
    return " ".join("".join(parts).split())


class MarkdownRenderer:
    """A configured markdown-it instance; safe to reuse for any number of documents."""

    def __init__(self, base_url: str = "", code: CodeRenderer | None = None,
                 image: ImageRenderer | None = None, parsed: Parsed | None = None) -> None:
        self.base_url = base_url
        self.code = code
        self.image = image
        #: Where a whole document's parse may be waiting already (`ImageFinder.take`).
        self.parsed = parsed
        self._md: MarkdownIt | None = None
        self._inline_cache: dict[str, str] = {}

    @property
    def md(self) -> MarkdownIt:
        """The parser, made on first use: a build whose bodies all come from the render
        cache never imports markdown-it (~40 ms)."""
        if self._md is None:
            self._md = self._parser()
        return self._md

    def _parser(self) -> MarkdownIt:
        from markdown_it import MarkdownIt

        md = MarkdownIt(
            "commonmark",
            {"html": False, "xhtmlOut": False, "linkify": False, "typographer": False},
        )
        md.enable(["table", "strikethrough"])
        # Every destination is parsed as a link; `_sanitize` decides what survives,
        # so a refused link shows its text rather than its markdown source.
        md.validateLink = lambda url: True  # type: ignore[method-assign]
        md.core.ruler.push("sitegen_sanitize", self._sanitize)
        fence = self._fence

        def fence_rule(
            renderer: object, tokens: Sequence[Token], idx: int, options: OptionsDict,
            env: EnvType,
        ) -> str:
            return fence(tokens, idx)

        image = self._image

        def image_rule(
            renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict,
            env: EnvType,
        ) -> str:
            return image(renderer, tokens, idx, options, env)

        md.add_render_rule("image", image_rule)
        md.add_render_rule("fence", fence_rule)
        md.add_render_rule("code_block", fence_rule)
        return md

    # --- public ---------------------------------------------------------------

    def parse(self, source: str, ids: HeadingIds) -> list[Token]:
        """*source*'s tokens, sanitized, its headings noted in *ids* (markdown-it's `parse`)."""
        return self.md.parse(source, {"ids": ids})

    def render(self, source: str, ids: HeadingIds | None = None,
               title: str = "") -> tuple[str, list[Heading]]:
        """A whole document: (HTML, table of contents). A document of its own (no *ids*)
        is rendered from the tokens `parsed` holds for it, when it holds them; *title* is
        its page's (`HeadingIds.title`)."""
        held = self.parsed(source) if ids is None and self.parsed is not None else None
        if held is not None:
            (tokens, ids), start = held, 0
        else:
            ids = ids if ids is not None else HeadingIds()
            start = len(ids.toc)
            tokens = self.parse(source, ids)
        if title:
            ids.title = title
        html = self.md.renderer.render(tokens, self.md.options, {"ids": ids})
        return html, ids.toc[start:]

    def inline(self, source: str) -> str:
        """Inline markdown only (emphasis, code, links): for text blocks, list items.

        Plain text (no markdown punctuation, entities or hard breaks) skips the parser:
        escaping it gives the same HTML. Other results are cached by source text.
        """
        if not _INLINE_SYNTAX.search(source):
            return str(escape(_LINE_SPACE.sub("\n", source.strip())))
        return self._inline_cached(source)

    def _inline_cached(self, source: str) -> str:
        found = self._inline_cache.get(source)
        if found is None:
            found = str(self.md.renderInline(source, {"ids": HeadingIds(images=1)}))
            if len(self._inline_cache) >= INLINE_CACHE_SIZE:
                self._inline_cache.clear()
            self._inline_cache[source] = found
        return found

    # --- rules ----------------------------------------------------------------

    def _sanitize(self, state: StateCore) -> None:
        ids: HeadingIds = state.env.get("ids") or HeadingIds()
        tokens = state.tokens
        for index, token in enumerate(tokens):
            if token.type == "inline" and token.children:
                token.children = self._clean_inline(token.children)
                for child in token.children:  # (the heading an image is under: its context)
                    if child.type == "image":
                        child.meta["section"] = ids.toc[-1].text if ids.toc else ""
            elif token.type == "heading_open":
                level = ids.level(int(token.tag[1]))
                inline = tokens[index + 1] if index + 1 < len(tokens) else None
                text = _plain(inline.children if inline is not None else None)
                token.attrSet("id", ids.add(level, text))
                token.tag = f"h{level}"
                for close in tokens[index + 1:]:
                    if close.type == "heading_close":
                        close.tag = f"h{level}"
                        break

    def _clean_inline(self, children: list[Token]) -> list[Token]:
        out: list[Token] = []
        dropping = 0
        for child in children:
            if child.type == "link_open":
                href = safe_url(str(child.attrGet("href") or ""))
                if href is None:
                    dropping += 1
                    continue
                if is_external(href, self.base_url):
                    child.attrSet("rel", "noopener noreferrer")
            elif child.type == "link_close" and dropping:
                dropping -= 1
                continue
            elif child.type == "image":
                src = safe_http_url(str(child.attrGet("src") or ""))
                if src is None:
                    from markdown_it.token import Token

                    text = Token("text", "", 0)
                    text.content = _plain(child.children)
                    out.append(text)
                    continue
                child.attrSet("loading", "lazy")
                child.attrSet("decoding", "async")
            out.append(child)
        return out

    def _image(self, renderer: RendererHTML, tokens: Sequence[Token], idx: int,
               options: OptionsDict, env: EnvType) -> str:
        """An image: through the `image` hook (processed, or dropped to its alt text), else
        a plain `<img>`; the body's first is not lazy and is fetched first."""
        token = tokens[idx]
        ids: HeadingIds = env.get("ids") or HeadingIds()
        index, ids.images = ids.images, ids.images + 1
        own = renderer.renderInlineAsText(token.children or [], options, env).strip()
        if self.image is not None:
            alt = renderer.renderInlineAsText(token.children or [], options, env)
            html = self.image(str(token.attrGet("src") or ""), alt, index)
            if html is not None:  # (dropped: its own alt text stays)
                return html or (str(escape(alt)) if own else "")
        if index == 0:
            token.attrs.pop("loading", None)
            token.attrSet("fetchpriority", "high")
        return str(renderer.image(list(tokens), idx, options, env))

    def _fence(self, tokens: Sequence[Token], idx: int) -> str:
        token = tokens[idx]
        info = token.info.strip().split()[0] if token.info.strip() else None
        if self.code is not None:
            return self.code(token.content, info)
        return "<pre><code>" + str(escape(token.content)) + "</code></pre>\n"


class ImageFinder:
    """The image URLs of a markdown body, as its rendered HTML writes them: the render's
    own parse (`MarkdownRenderer`: the same rules, its images' URLs checked as the render
    checks them), handed to the images stage (`sitegen.images.collect.FindImages`), which
    must know them before any body is rendered.

    Each parse is kept (by source) until the render takes it (`take`, the renderer's
    `parsed`) or `drop` is called: only bodies with image syntax are parsed, only those
    the store had no URLs for (new ones), up to `HELD_CHARACTERS` of source, and render
    workers inherit them at the fork.
    """

    def __init__(self, base_url: str = "") -> None:
        self.markdown = MarkdownRenderer(base_url)
        self._held: dict[str, tuple[list[Token], HeadingIds]] = {}
        self._room = HELD_CHARACTERS

    @property
    def key(self) -> str:
        """What decides a body's image URLs besides its source (this parser's code and
        markdown-it's version: the code fingerprint, `sitegen.codeprint`): the images stage
        keeps the URLs it was given under it."""
        return code_fingerprint()[:12]

    def __call__(self, source: str) -> tuple[str, ...]:
        """The image URLs of the markdown *source*, each once, in order."""
        if "![" not in source:  # no image syntax at all: nothing to parse
            return ()
        urls: dict[str, None] = {}
        ids = HeadingIds()
        tokens = self.markdown.parse(source, ids)
        if len(source) <= self._room:
            self._held[source], self._room = (tokens, ids), self._room - len(source)
        for token in tokens:
            for child in token.children or ():
                src = str(child.attrGet("src") or "") if child.type == "image" else ""
                if src:
                    urls[src] = None
        return tuple(urls)

    def take(self, source: str) -> tuple[list[Token], HeadingIds] | None:
        """The parse kept for *source*, once (it is dropped): for a renderer of the same
        base URL only (links are sanitized against it as they are parsed)."""
        return self._held.pop(source, None)

    def drop(self) -> None:
        """Forget every parse kept (the render is over)."""
        self._held.clear()
        self._room = HELD_CHARACTERS
