"""Structured blocks → safe HTML, each through the theme's `blocks/<type>.html`.

Role: turn an article's checked blocks into HTML. Each block becomes a small,
already-sanitized view and is drawn by its registry entry's template
(`sitegen.blocktypes`), falling back to `blocks/unknown.html` when the theme has none.
The built-in types have a view here, by type name (inline markdown rendered safely,
heading levels renumbered without gaps and anchored, URLs re-checked, video URLs turned
into privacy-friendly embeds, code highlighted); any other registered type shows its
record's fields, escaped by the template, but for those its record declares
`InlineMarkdown`, which it gets as inline markdown rendered safely (like a text block's);
an unknown block shows through
`blocks/unknown.html`. Every view carries `plain`, the block's plain text. There is no
type-by-type chain that can forget one. It must never let an unsafe URL or raw HTML
through, never log (the model and `Renderer.warn_blocks` warned: this runs in worker
processes), and never do I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from jinja2 import Environment, Template, TemplateError
from markupsafe import Markup

from sitegen.blocktypes import (
    UNKNOWN_TEMPLATE,
    BlockRecord,
    CodeBlock,
    HeaderBlock,
    ImageBlock,
    ListBlock,
    TextBlock,
    UnknownBlock,
    VideoBlock,
    block_type,
    plain_text,
)
from sitegen.errors import BuildError
from sitegen.model.views import ArticleView
from sitegen.render.highlight import highlight_code
from sitegen.render.markdown import HeadingIds, ImageRenderer, MarkdownRenderer
from sitegen.urls import host_of, safe_http_url

_YOUTUBE_ID = re.compile(r"^[A-Za-z0-9_-]{11}$")
_VIMEO_ID = re.compile(r"^[0-9]{1,12}$")
_YOUTUBE_HOSTS = {"youtube.com", "www.youtube.com", "m.youtube.com", "music.youtube.com",
                  "youtube-nocookie.com", "www.youtube-nocookie.com"}
_VIDEO_TYPES = {".mp4": "video/mp4", ".webm": "video/webm", ".ogg": "video/ogg",
                ".ogv": "video/ogg"}


@dataclass(frozen=True, slots=True)
class Video:
    """How a video URL is shown: an embed (youtube/vimeo), a <video> file, or a plain link.

    An embed's `src` is its player's address and `page` the video's page on its platform
    (the link a stand-in offers, which works without JavaScript), `platform` its name.
    """

    kind: Literal["youtube", "vimeo", "file", "link"]
    src: str
    mime: str = ""
    page: str = ""
    platform: str = ""


def _youtube_id(url: str, host: str) -> str | None:
    parts = urlsplit(url)
    if host == "youtu.be":
        candidate = parts.path.strip("/").split("/")[0]
    elif host in _YOUTUBE_HOSTS:
        segments = [s for s in parts.path.split("/") if s]
        if segments[:1] == ["watch"]:
            candidate = (parse_qs(parts.query).get("v") or [""])[0]
        elif len(segments) >= 2 and segments[0] in {"embed", "shorts", "live", "v"}:
            candidate = segments[1]
        else:
            return None
    else:
        return None
    return candidate if _YOUTUBE_ID.match(candidate) else None


def classify_video(raw: str) -> Video | None:
    """Classify a video URL; None when it is not safe to link to at all."""
    url = safe_http_url(raw)
    if url is None:
        return None
    try:
        host = host_of(url) if url.lower().startswith(("http://", "https://")) else ""
        youtube = _youtube_id(url, host) if host else None
        path = urlsplit(url).path.lower()
    except ValueError:
        return Video("link", url)
    if youtube:
        return Video("youtube", f"https://www.youtube-nocookie.com/embed/{youtube}",
                     page=f"https://www.youtube.com/watch?v={youtube}", platform="YouTube")
    if host in {"vimeo.com", "www.vimeo.com", "player.vimeo.com"}:
        segments = [s for s in path.split("/") if s]
        if segments[:1] == ["video"]:
            segments = segments[1:]
        if segments and _VIMEO_ID.match(segments[0]):
            return Video("vimeo", f"https://player.vimeo.com/video/{segments[0]}?dnt=1",
                         page=f"https://vimeo.com/{segments[0]}", platform="Vimeo")
    for ext, mime in _VIDEO_TYPES.items():
        if path.endswith(ext):
            return Video("file", url, mime)
    return Video("link", url)


def unshown(articles: Iterable[ArticleView],
            template_source: Callable[[str], str | None]) -> list[str]:
    """A warning for each article block of a registered type the theme chain has no
    template for (*template_source* answers None): it is drawn by `blocks/unknown.html`."""
    missing: dict[str, bool] = {}
    found: list[str] = []
    for article in articles:
        for kind in dict.fromkeys(b.type for b in article.blocks
                                  if not isinstance(b, UnknownBlock)):
            entry = block_type(kind)
            if entry is None:
                continue
            if kind not in missing:
                missing[kind] = template_source(entry.template) is None
            if missing[kind]:
                found.append(f"article {article.id}: the theme has no template "
                             f"{entry.template} for its {kind!r} block, which is shown "
                             f"through {UNKNOWN_TEMPLATE}: add {entry.template}")
    return found


class BlockView(SimpleNamespace):
    """What `blocks/<type>.html` sees as `block`: sanitized fields by attribute (THEMES.md)."""

    type: str
    plain: str


#: How a built-in type's block becomes its view (None: nothing to show, e.g. an empty text).
ViewMaker = Callable[[Any, "HeadingIds"], BlockView | None]


class BlockRenderer:
    """Renders block lists through one theme environment; reusable across articles."""

    def __init__(self, env: Environment, markdown: MarkdownRenderer,
                 image: ImageRenderer | None = None) -> None:
        self.env = env
        self.markdown = markdown
        self.image = image
        self._templates: dict[str, Template] = {}
        #: The built-in types' views, by registered name; other types show their fields.
        self.views: dict[str, ViewMaker] = {
            "text": self._text, "header": self._header, "image": self._image,
            "list": self._list, "code": self._code, "video": self._video}

    def template(self, name: str) -> Template:
        """The template *name* (`blocks/<type>.html`), or `blocks/unknown.html` when the
        theme has none."""
        found = self._templates.get(name)
        if found is None:
            found = self.env.select_template([name, UNKNOWN_TEMPLATE])
            self._templates[name] = found
        return found

    def fill(self, view: BlockView, name: str = "") -> str:
        """The block *view* through the template *name* (its type's by default); an error
        in it names that template."""
        template = self.template(name or f"blocks/{view.type}.html")
        try:
            return template.render(block=view)
        except (TemplateError, RecursionError) as error:
            cause = ("it extends or includes itself" if isinstance(error, RecursionError)
                     else f"{type(error).__name__}: {error}")
            raise BuildError(f"rendering a {view.type} block with template {template.name} "
                             f"failed ({cause}): fix the template") from None

    def code_view(self, content: str, language: str | None) -> BlockView:
        """The view of a code listing (blocks and markdown fences share `blocks/code.html`)."""
        result = highlight_code(content, language)
        return BlockView(type="code", html=result.html, label=result.label,
                         language=result.language, highlighted=result.highlighted,
                         content=content, plain=content)

    def code(self, content: str, language: str | None) -> str:
        """A code listing through `blocks/code.html` (markdown fences)."""
        return self.fill(self.code_view(content, language))

    def render(self, blocks: Sequence[BlockRecord], ids: HeadingIds) -> str:
        """The HTML of *blocks*, in order; heading ids are allocated in *ids*."""
        out: list[str] = []
        for block in blocks:
            html = self._one(block, ids)
            if html:
                out.append(html)
        return "\n".join(out) + ("\n" if out else "")

    def _one(self, block: BlockRecord, ids: HeadingIds) -> str:
        entry = None if isinstance(block, UnknownBlock) else block_type(block.type)
        if entry is None:  # unknown to the registry: the unknown block, never nothing
            reason = block.reason if isinstance(block, UnknownBlock) else "unknown block type"
            return self.fill(BlockView(type=block.type, reason=reason,
                                       plain=plain_text(block)), UNKNOWN_TEMPLATE)
        make = self.views.get(entry.name)
        if make is None:  # a type added to the registry: its fields, escaped by the template
            fields = block.model_dump(exclude={"type"})
            for name in entry.inline:
                fields[name] = Markup(self.markdown.inline(fields[name] or ""))
            view: BlockView | None = BlockView(**{"plain": entry.text(block), **fields,
                                                  "type": entry.name})
        else:
            view = make(block, ids)
            if view is not None:
                view.plain = entry.text(block)
        return "" if view is None else self.fill(view, entry.template)

    def _text(self, block: TextBlock, ids: HeadingIds) -> BlockView | None:
        if not block.content.strip():
            return None
        return BlockView(type="text", html=Markup(self.markdown.inline(block.content)))

    def _header(self, block: HeaderBlock, ids: HeadingIds) -> BlockView | None:
        html = Markup(self.markdown.inline(block.content))
        text = " ".join(html.striptags().split())
        if not text:
            return None
        level = ids.level(block.level)
        return BlockView(type="header", level=level, id=ids.add(level, text), text=text,
                         html=html)

    def _image(self, block: ImageBlock, ids: HeadingIds) -> BlockView | None:
        src = safe_http_url(block.url)
        if src is None:
            return None
        caption = " ".join((block.caption or "").split())
        index, ids.images = ids.images, ids.images + 1
        # Its own alt; none when it has none (a guess from the section's heading misled a
        # screen reader) or when it only repeats the caption, which the figure reads out.
        alt = " ".join((block.alt or "").split())
        alt = "" if alt == caption else alt
        shown = self.image(src, alt, index) if self.image is not None else None
        if shown == "":  # it could not be used and has no URL of its own: the caption
            src = ""
        return BlockView(type="image", src=src, caption=caption, alt=alt,
                         picture=Markup(shown or ""), eager=index == 0)

    def _list(self, block: ListBlock, ids: HeadingIds) -> BlockView | None:
        items = [Markup(self.markdown.inline(item)) for item in block.items if item.strip()]
        if not items:
            return None
        return BlockView(type="list", ordered=bool(block.ordered), items=items)

    def _code(self, block: CodeBlock, ids: HeadingIds) -> BlockView:
        return self.code_view(block.content, block.language)

    def _video(self, block: VideoBlock, ids: HeadingIds) -> BlockView | None:
        video = classify_video(block.url)
        if video is None:
            return None
        title = " ".join((block.title or "").split()) or "Video"
        return BlockView(type="video", kind=video.kind, src=video.src, mime=video.mime,
                         page=video.page, platform=video.platform, title=title)
