"""What the site files' templates need beyond a page's: a feed entry's HTML, XML text.

Role: the `feed_html(article)` helper of `feed.xml` templates — the theme's AI disclosure
(`partials/disclosure.html`, rendered once per article, its reads replayed into each feed
that shows it), then the article's sanitized body, adjusted for feed readers
(`sitegen.render.feedhtml`). It returns plain text, which the template's autoescape
escapes into `<content type="html">`; it records what it shows (the article, its body's
images) like any read of a template. Also the build date of an empty feed
(`SOURCE_DATE_EPOCH`, else the epoch) and `clean_xml`, which drops the characters XML 1.0
cannot carry from an XML site file's text. This module must never write files, log, or
read the wall clock.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Protocol

from markupsafe import Markup

from sitegen.images.picture import ImageMap
from sitegen.model.views import ArticleView, Site
from sitegen.render.feedhtml import feed_html
from sitegen.render.fingerprints import Registry
from sitegen.render.i18n import Translator
from sitegen.render.reads import RecordingEnvironment


class FeedRenderer(Protocol):
    """What a feed entry needs of the page renderer (`sitegen.render.pages.Renderer`)."""

    env: RecordingEnvironment
    registry: Registry
    images: ImageMap
    site: Site
    helpers: dict[str, Callable[..., Any]]

    def body(self, article: ArticleView) -> tuple[Markup, list[Any]]: ...

    def translator(self, language: str = "") -> Translator: ...

_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def clean_xml(text: str) -> str:
    """*text* without the characters XML 1.0 cannot carry (control characters, lone
    surrogates): what an XML site file's template made, before it is written."""
    return _INVALID_XML.sub("", text)


def build_date() -> datetime:
    """The one build date sitegen ever uses: SOURCE_DATE_EPOCH when set, else the epoch."""
    raw = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    try:
        return datetime.fromtimestamp(int(raw), UTC)
    except (ValueError, OverflowError, OSError):
        return datetime.fromtimestamp(0, UTC)


#: A fragment rendered once per article: its text and what it read.
_Fragment = tuple[str, frozenset[str]]


class FeedContent:
    """`feed_html(article)`: what an Atom entry of *article* holds (see the docstring)."""

    def __init__(self, renderer: FeedRenderer) -> None:
        self.renderer = renderer
        self._disclosures: dict[str, _Fragment] = {}
        self._html: dict[str, str] = {}

    def __call__(self, article: ArticleView) -> str:
        renderer = self.renderer
        recorder = renderer.env.recorder
        if recorder is not None:
            key = renderer.registry.keys.get(id(article))
            if key is not None:
                recorder.reads.add(key)
            recorder.reads.add("site")  # (`site.ai_disclosure`)
            recorder.reads.update("I\x00" + url
                                  for url in renderer.images.bodies.get(article.body_hash, ()))
        disclosure = self.disclosure(article)
        found = self._html.get(article.id)
        if found is None:  # (an article is in its site's, sections' and tags' feeds)
            body = str(renderer.body(article)[0])
            html = disclosure + "\n" + body if disclosure else body
            found = self._html[article.id] = feed_html(html, renderer.site.absolute(article.url))
        return found

    def disclosure(self, article: ArticleView) -> str:
        """The theme's AI disclosure of *article*, or "" (`[site] ai_disclosure` off)."""
        renderer = self.renderer
        if not renderer.site.ai_disclosure:
            return ""
        found = self._disclosures.get(article.id)
        if found is None:
            env = renderer.env
            with env.recording(renderer.registry.keys) as recorder:
                helpers = renderer.helpers
                text = env.get_template("partials/disclosure.html").render({
                    "site": renderer.site, "article": article, "link": helpers["link"],
                    "asset": helpers["asset"], "absolute": helpers["absolute"],
                    "t": renderer.translator(article.language),
                }).strip()
            found = self._disclosures[article.id] = (text, frozenset(recorder.reads))
        if renderer.env.recorder is not None:
            renderer.env.recorder.reads.update(found[1])
        return found[0]


__all__ = ["FeedContent", "build_date", "clean_xml"]
