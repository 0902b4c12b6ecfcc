"""Blocks: each type through its template, video classification, URL checks."""

from __future__ import annotations

import pytest

from sitegen.config import Config
from sitegen.fetch.records import parse_block
from sitegen.render.blocks import BlockRenderer, classify_video
from sitegen.render.markdown import HeadingIds, MarkdownRenderer
from sitegen.render.themes import ThemeSet


@pytest.fixture
def blocks(config: Config) -> BlockRenderer:
    renderer = BlockRenderer(ThemeSet(config).environment(), MarkdownRenderer())
    renderer.markdown = MarkdownRenderer(code=renderer.code)
    return renderer


def render(blocks: BlockRenderer, *raw: dict[str, object]) -> str:
    parsed = [parse_block(r) for r in raw]
    return blocks.render(parsed, HeadingIds())  # type: ignore[arg-type]


def test_text_header_list(blocks: BlockRenderer) -> None:
    html = render(blocks, {"type": "text", "content": "Hello *world*"},
                  {"type": "header", "content": "Title", "level": 1},
                  {"type": "header", "content": "Title", "level": 9},
                  {"type": "list", "items": ["a", "**b**"], "ordered": True},
                  {"type": "list", "items": ["c"]})
    assert "<p>Hello <em>world</em></p>" in html
    assert '<h2 id="title">Title</h2>' in html
    assert '<h3 id="title-2">Title</h3>' in html  # level 9 under level 1: h3, no gap
    assert "<ol>" in html and "<li><strong>b</strong></li>" in html and "<ul>" in html


def test_image_figure(blocks: BlockRenderer) -> None:
    html = render(blocks, {"type": "image", "url": "https://i.test/a.png", "caption": "A cat"},
                  {"type": "image", "url": "https://i.test/b.png", "caption": "A dog"})
    # the caption names the picture (read once: no alt repeats it); the body's first image
    # is the largest in view: fetched first, never lazy
    assert ('<img src="https://i.test/a.png" alt="" fetchpriority="high" '
            'decoding="async">') in html
    assert '<img src="https://i.test/b.png" alt="" loading="lazy" decoding="async">' in html
    assert "<figcaption>A cat</figcaption>" in html
    assert render(blocks, {"type": "image", "url": "javascript:alert(1)"}) == ""


def test_an_image_s_alt_is_its_own_never_a_guess_nor_its_caption_again(
        blocks: BlockRenderer) -> None:
    """Issue 53, 10: a heading as alt misled; a caption as alt was read twice."""
    own = render(blocks, {"type": "image", "url": "https://i.test/a.png", "caption": "Fig. 1",
                          "alt": "A cat asleep on a keyboard"})
    assert 'alt="A cat asleep on a keyboard"' in own and "<figcaption>Fig. 1</figcaption>" in own
    raw = [{"type": "image", "url": "https://i.test/a.png"},
           {"type": "header", "content": "Where to sleep", "level": 2},
           {"type": "image", "url": "https://i.test/b.png"}]
    html = blocks.render([parse_block(r) for r in raw],  # type: ignore[misc]
                         HeadingIds(title="Night trains"))
    assert 'src="https://i.test/a.png" alt=""' in html  # before any heading
    assert 'src="https://i.test/b.png" alt=""' in html
    same = render(blocks, {"type": "image", "url": "https://i.test/a.png", "caption": "A cat",
                           "alt": "A cat"})
    assert 'alt=""' in same and "<figcaption>A cat</figcaption>" in same


def test_code_is_highlighted_or_escaped(blocks: BlockRenderer) -> None:
    html = render(blocks, {"type": "code", "content": "print('<x>')", "language": "python"})
    assert '<span class="nb">print</span>' in html and "Python" in html
    plain = render(blocks, {"type": "code", "content": "<b>x</b>", "language": "nosuchlang"})
    assert "&lt;b&gt;x&lt;/b&gt;" in plain and "<span" not in plain


@pytest.mark.parametrize("url, kind, src", [
    ("https://www.youtube.com/watch?v=dQw4w9WgXcQ", "youtube",
     "https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ"),
    ("https://youtu.be/dQw4w9WgXcQ?t=3", "youtube",
     "https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ"),
    ("https://www.youtube.com/shorts/dQw4w9WgXcQ", "youtube",
     "https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ"),
    ("https://vimeo.com/123456", "vimeo", "https://player.vimeo.com/video/123456?dnt=1"),
    ("https://player.vimeo.com/video/42", "vimeo", "https://player.vimeo.com/video/42?dnt=1"),
    ("https://cdn.test/clip.MP4", "file", "https://cdn.test/clip.MP4"),
    ("/media/clip.webm", "file", "/media/clip.webm"),
    ("https://www.youtube.com/watch?v=bad", "link", "https://www.youtube.com/watch?v=bad"),
    ("https://example.test/page", "link", "https://example.test/page"),
])
def test_classify_video(url: str, kind: str, src: str) -> None:
    video = classify_video(url)
    assert video is not None and (video.kind, video.src) == (kind, src)


def test_video_markup(blocks: BlockRenderer) -> None:
    html = render(blocks, {"type": "video", "url": "https://youtu.be/dQw4w9WgXcQ", "title": "T"})
    # a stand-in: the player's address for the theme's script, no frame before a click
    assert 'data-player="https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ"' in html
    assert "<iframe" not in html and 'data-title="T"' in html
    assert '<p class="video__title">T</p>' in html
    assert '<a class="video__link" href="https://www.youtube.com/watch?v=dQw4w9WgXcQ"' in html
    vimeo = render(blocks, {"type": "video", "url": "https://vimeo.com/42", "title": "V"})
    assert 'href="https://vimeo.com/42"' in vimeo and "Watch on Vimeo" in vimeo
    file = render(blocks, {"type": "video", "url": "https://cdn.test/a.ogg"})
    assert '<video controls preload="none"' in file and 'type="video/ogg"' in file
    assert classify_video("javascript:alert(1)") is None


