"""Feed entry HTML: video iframes become titled links; same-document references absolute."""

from __future__ import annotations

from sitegen.render.feedhtml import feed_html

URL = "https://site.test/a-post/"


def test_video_iframes_become_links_named_by_the_video_title() -> None:
    body = ('<p>Intro</p>\n<figure class="video">\n  <iframe src="https://www.youtube-nocookie.com/'
            'embed/dQw4w9WgXcQ" title="Fish &amp; &lt;chips&gt;" loading="lazy" allowfullscreen>'
            '</iframe>\n</figure>\n<iframe src="https://player.vimeo.com/video/123?dnt=1" '
            'title="Clouds"></iframe>')
    out = feed_html(body, URL)
    assert "<iframe" not in out and "<figure" not in out
    assert ('<p><a href="https://www.youtube.com/watch?v=dQw4w9WgXcQ">▶ Fish &amp; &lt;chips&gt;'
            "</a></p>") in out
    assert '<a href="https://vimeo.com/123">▶ Clouds</a>' in out
    assert out.startswith("<p>Intro</p>")


def test_video_stand_ins_become_links_named_by_the_video_title() -> None:
    body = ('<p>Intro</p>\n<figure class="video video--facade video--youtube" data-player="'
            'https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ" data-title="Fish &amp; chips">\n'
            '  <div class="video__frame">\n    <p class="video__title">Fish &amp; chips</p>\n'
            '    <button class="video__play" type="button" hidden>Play</button>\n  </div>\n'
            '  <figcaption class="video__caption"><a class="video__link" href="https://www.'
            'youtube.com/watch?v=dQw4w9WgXcQ">Watch on YouTube</a></figcaption>\n</figure>\n'
            '<figure class="video video--facade video--vimeo" data-player="https://player.vimeo.'
            'com/video/123?dnt=1" data-title="Clouds"><div class="video__frame"></div></figure>'
            '<figure class="figure"><img src="/a.png" alt=""></figure>')
    out = feed_html(body, URL)
    assert "<button" not in out and "video__" not in out
    assert out == ('<p>Intro</p>\n<p><a href="https://www.youtube.com/watch?v=dQw4w9WgXcQ">▶ '
                   'Fish &amp; chips</a></p>\n<p><a href="https://vimeo.com/123">▶ Clouds</a></p>'
                   '<figure class="figure"><img src="https://site.test/a.png" alt=""></figure>')


def test_same_document_references_point_at_the_article() -> None:
    out = feed_html('<a href="#part-2">Part 2</a> <a href="other/">x</a>', URL)
    assert out == '<a href="https://site.test/a-post/#part-2">Part 2</a> <a href="other/">x</a>'
    assert feed_html("<p>plain</p>", URL) == "<p>plain</p>"


def test_root_relative_urls_become_absolute_on_the_site_s_origin() -> None:
    body = ('<picture><source type="image/webp" srcset="/blog/media/a-480.webp 480w, '
            '/blog/media/a-960.webp 960w"><img src="/blog/media/a.jpg" srcset="/blog/media/'
            'a-480.jpg 480w,/blog/media/a-960.jpg 960w" alt="A"></picture> <a href="/blog/tags/'
            'x/">x</a> <a href="//cdn.test/y">y</a> <a href="https://e.test/">e</a>')
    out = feed_html(body, "https://site.test/blog/a-post/")
    assert ('srcset="https://site.test/blog/media/a-480.webp 480w, '
            'https://site.test/blog/media/a-960.webp 960w"') in out
    assert ('<img src="https://site.test/blog/media/a.jpg" srcset="https://site.test/blog/'
            'media/a-480.jpg 480w,https://site.test/blog/media/a-960.jpg 960w"') in out
    assert '<a href="https://site.test/blog/tags/x/">' in out
    assert '<a href="//cdn.test/y">' in out and '<a href="https://e.test/">' in out
