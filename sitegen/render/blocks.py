"""Structured blocks → safe HTML, each through the theme's `blocks/<type>.html`.

Role: turn an article's checked blocks into HTML. Each block becomes a small,
already-sanitized view (inline markdown rendered safely, heading levels
renumbered without gaps and anchored, URLs re-checked, video URLs turned into
privacy-friendly embeds, code highlighted) and is drawn by `blocks/<type>.html`, falling back to
`blocks/unknown.html`, so a theme can restyle any block. It must never let an
unsafe URL or raw HTML through, never log (the model already warned about
every repair: this runs in worker processes), and never do I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Literal
from urllib.parse import parse_qs, urlsplit

from jinja2 import Environment, Template, TemplateError
from markupsafe import Markup

from sitegen.errors import BuildError
from sitegen.fetch.records import (
    CodeBlock,
    HeaderBlock,
    ImageBlock,
    KnownBlock,
    ListBlock,
    TextBlock,
    VideoBlock,
)
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
    """How a video URL is shown: an embed (youtube/vimeo), a <video> file, or a plain link."""

    kind: Literal["youtube", "vimeo", "file", "link"]
    src: str
    mime: str = ""


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
        return Video("youtube", f"https://www.youtube-nocookie.com/embed/{youtube}")
    if host in {"vimeo.com", "www.vimeo.com", "player.vimeo.com"}:
        segments = [s for s in path.split("/") if s]
        if segments[:1] == ["video"]:
            segments = segments[1:]
        if segments and _VIMEO_ID.match(segments[0]):
            return Video("vimeo", f"https://player.vimeo.com/video/{segments[0]}?dnt=1")
    for ext, mime in _VIDEO_TYPES.items():
        if path.endswith(ext):
            return Video("file", url, mime)
    return Video("link", url)


class BlockView(SimpleNamespace):
    """What `blocks/<type>.html` sees as `block`: sanitized fields by attribute (THEMES.md)."""

    type: str


class BlockRenderer:
    """Renders block lists through one theme environment; reusable across articles."""

    def __init__(self, env: Environment, markdown: MarkdownRenderer,
                 image: ImageRenderer | None = None) -> None:
        self.env = env
        self.markdown = markdown
        self.image = image
        self._templates: dict[str, Template] = {}

    def template(self, kind: str) -> Template:
        """`blocks/<kind>.html`, or `blocks/unknown.html` when the theme has none."""
        found = self._templates.get(kind)
        if found is None:
            found = self.env.select_template([f"blocks/{kind}.html", "blocks/unknown.html"])
            self._templates[kind] = found
        return found

    def fill(self, view: BlockView) -> str:
        """The block *view* through its template; an error in it names that template."""
        template = self.template(view.type)
        try:
            return template.render(block=view)
        except (TemplateError, RecursionError) as error:
            cause = ("it extends or includes itself" if isinstance(error, RecursionError)
                     else f"{type(error).__name__}: {error}")
            raise BuildError(f"rendering a {view.type} block with template {template.name} "
                             f"failed ({cause}): fix the template") from None

    def code(self, content: str, language: str | None) -> str:
        """A code listing (blocks and markdown fences share `blocks/code.html`)."""
        result = highlight_code(content, language)
        view = BlockView(type="code", html=result.html, label=result.label,
                         language=result.language, highlighted=result.highlighted,
                         content=content)
        return self.fill(view)

    def render(self, blocks: Sequence[KnownBlock], ids: HeadingIds) -> str:
        """The HTML of *blocks*, in order; heading ids are allocated in *ids*."""
        out: list[str] = []
        for block in blocks:
            html = self._one(block, ids)
            if html:
                out.append(html)
        return "\n".join(out) + ("\n" if out else "")

    def _one(self, block: KnownBlock, ids: HeadingIds) -> str:
        inline = self.markdown.inline
        view: BlockView
        if isinstance(block, TextBlock):
            if not block.content.strip():
                return ""
            view = BlockView(type="text", html=Markup(inline(block.content)))
        elif isinstance(block, HeaderBlock):
            html = Markup(inline(block.content))
            text = " ".join(html.striptags().split())
            if not text:
                return ""
            level = ids.level(block.level)
            view = BlockView(type="header", level=level, id=ids.add(level, text), text=text,
                             html=html)
        elif isinstance(block, ImageBlock):
            src = safe_http_url(block.url)
            if src is None:
                return ""
            caption = " ".join((block.caption or "").split())
            index, ids.images = ids.images, ids.images + 1
            # The caption beside the image is its text alternative (WAI: an image with an
            # adjacent text alternative gets alt=""), so screen readers read it once.
            shown = self.image(src, "", index) if self.image is not None else None
            if shown == "":  # it could not be used and has no URL of its own: the caption
                src = ""
            view = BlockView(type="image", src=src, caption=caption, alt="",
                             picture=Markup(shown or ""), eager=index == 0)
        elif isinstance(block, ListBlock):
            items = [Markup(inline(item)) for item in block.items if item.strip()]
            if not items:
                return ""
            view = BlockView(type="list", ordered=bool(block.ordered), items=items)
        elif isinstance(block, CodeBlock):
            return self.code(block.content, block.language)
        elif isinstance(block, VideoBlock):
            video = classify_video(block.url)
            if video is None:
                return ""
            title = " ".join((block.title or "").split()) or "Video"
            view = BlockView(type="video", kind=video.kind, src=video.src, mime=video.mime,
                             title=title)
        else:  # pragma: no cover - the model drops UnknownBlock before rendering
            return ""
        return self.fill(view)
