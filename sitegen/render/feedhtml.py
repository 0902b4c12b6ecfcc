"""An article's page HTML → the HTML its feed entries carry.

Role: feed readers strip `<iframe>`s and resolve relative references against the
feed's `xml:base` (the site's root), so the sanitized body HTML the pages show is
adjusted for feeds: each video stand-in (the theme's `<figure class="video
video--facade" data-player=… data-title=…>`, whose play button needs the page's script)
and each video `<iframe>` (with its `<figure>`) becomes a plain link to the video's
page, named by its title; each same-document reference (`href="#part"`, which
the W3C feed validator flags, and which would point at the site's home page) becomes
the article's absolute URL with that fragment; and each root-relative `src`, `href` and
`srcset` URL (the site's images and links) becomes absolute on the site's origin, since
many readers ignore `xml:base`. The input is sitegen's own sanitized
HTML (attributes double-quoted and escaped); this module must never add markup from
anything but those escaped attribute values, and never do I/O.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from markupsafe import Markup, escape

_FIGURE = re.compile(r'<figure\b[^>]*>\s*(<iframe\b[^>]*>\s*</iframe>)\s*</figure>', re.S)
_IFRAME = re.compile(r"<iframe\b[^>]*>\s*</iframe>", re.S)
_FACADE = re.compile(r'<figure class="video video--facade\b[^"]*"[^>]*>.*?</figure>', re.S)
_ATTR = re.compile(r'\s([a-z-]+)="([^"]*)"')
_EMBEDS = (
    (re.compile(r"^https://www\.youtube(?:-nocookie)?\.com/embed/([A-Za-z0-9_-]{11})"),
     "https://www.youtube.com/watch?v={}"),
    (re.compile(r"^https://player\.vimeo\.com/video/([0-9]{1,12})"), "https://vimeo.com/{}"),
)
_FRAGMENT = re.compile(r'href="#')
_ROOTED = re.compile(r'\s(src|href)="/(?!/)')
_SRCSET = re.compile(r'\ssrcset="([^"]*)"')
_CANDIDATE = re.compile(r'(^|,\s*)/(?!/)')


def _video_link(iframe: str) -> str:
    attrs = dict(_ATTR.findall(iframe.split(">", 1)[0]))
    if "data-player" in attrs:  # a stand-in (its start tag)
        attrs = {"src": attrs["data-player"], "title": attrs.get("data-title", "")}
    src = Markup(attrs.get("src", "")).unescape()
    if not src.startswith("https://"):
        return ""
    for pattern, page in _EMBEDS:
        found = pattern.match(src)
        if found:
            src = page.format(found.group(1))
            break
    title = Markup(attrs.get("title", "")).unescape() or "Video"
    return str(Markup('<p><a href="{}">▶ {}</a></p>').format(src, title))


def feed_html(html: str, url: str) -> str:
    """*html* (an article body) as a feed entry carries it; *url* is the article's."""
    if "video--facade" in html:
        html = _FACADE.sub(lambda m: _video_link(m.group(0)), html)
    if "<iframe" in html:
        html = _FIGURE.sub(lambda m: _video_link(m.group(1)), html)
        html = _IFRAME.sub(lambda m: _video_link(m.group(0)), html)
    if 'href="#' in html:
        html = _FRAGMENT.sub(lambda m: f'href="{escape(url)}#', html)
    return absolute(html, url)


def absolute(html: str, url: str) -> str:
    """*html* with its root-relative `src`, `href` and `srcset` URLs made absolute on the
    origin of *url* (an absolute http(s) URL; "/blog/x" → "https://host/blog/x")."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return html
    origin = str(escape(f"{parts.scheme}://{parts.netloc}"))
    html = _ROOTED.sub(lambda m: f' {m.group(1)}="{origin}/', html)
    return _SRCSET.sub(lambda m: ' srcset="' + _CANDIDATE.sub(
        lambda c: f"{c.group(1)}{origin}/", m.group(1)) + '"', html)
