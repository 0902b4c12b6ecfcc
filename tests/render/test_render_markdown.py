"""Markdown: safe links and images, shifted anchored headings, TOC, tables, code."""

from __future__ import annotations

import pytest
from render_safety import problems

from sitegen.render.markdown import HeadingIds, MarkdownRenderer, shift_level

md = MarkdownRenderer("https://site.example.test", code=lambda code, lang: f"<pre>{lang}</pre>")


@pytest.mark.parametrize("source", [
    "[x](javascript:alert(1))", "[x](JAVASCRIPT:alert(1))", "[x](java\tscript:alert(1))",
    "[x](&#106;avascript:alert(1))", "[x](data:text/html,hi)", "[x](vbscript:x)",
    "<javascript:alert(1)>", "[x](file:///etc/passwd)",
])
def test_unsafe_links_become_their_text(source: str) -> None:
    html, _ = md.render(source)
    assert "<a" not in html
    assert problems(html) == []


def test_unsafe_images_become_alt_text_and_safe_ones_are_lazy() -> None:
    html, _ = md.render("![bad](javascript:alert(1)) ![good](/a.png) ![m](mailto:x@y.z)")
    assert html.count("<img") == 1
    assert '<img src="/a.png" alt="good" loading="lazy" decoding="async">' in html
    assert "bad" in html


def test_allowed_links_and_rel_on_external_only() -> None:
    html, _ = md.render("[a](https://other.test/) [b](/local/) [c](mailto:a@b.c) "
                        "[d](https://site.example.test/x/)")
    assert '<a href="https://other.test/" rel="noopener noreferrer">a</a>' in html
    assert '<a href="/local/">b</a>' in html
    assert '<a href="mailto:a@b.c">c</a>' in html
    assert '<a href="https://site.example.test/x/">d</a>' in html


def test_raw_html_is_escaped() -> None:
    html, _ = md.render("<script>alert(1)</script>\n\n<div onclick=x>hi</div>")
    assert "<script" not in html and "<div" not in html
    assert "&lt;script&gt;" in html


def test_headings_shift_get_unique_ids_and_a_toc() -> None:
    ids = HeadingIds()
    html, toc = md.render("# Intro\n\n## Intro\n\n###### Deep\n\n# Main\n", ids)
    assert '<h2 id="intro">Intro</h2>' in html
    assert '<h3 id="intro-2">Intro</h3>' in html
    assert '<h6 id="deep">Deep</h6>' in html
    assert '<h2 id="main-2">Main</h2>' in html  # "main" is a theme landmark id
    assert "<h1" not in html
    assert [(h.level, h.id, h.text) for h in toc] == [
        (2, "intro", "Intro"), (3, "intro-2", "Intro"), (6, "deep", "Deep"),
        (2, "main-2", "Main")]
    assert [shift_level(n) for n in (0, 1, 2, 5, 6, 9)] == [2, 2, 3, 6, 6, 6]


def test_tables_strikethrough_and_fences() -> None:
    html, _ = md.render("|a|b|\n|-|-|\n|1|~~2~~|\n\n```python\nx = 1\n```\n")
    assert "<table>" in html and "<s>2</s>" in html
    assert "<pre>python</pre>" in html


def test_inline_fast_path_matches_the_parser() -> None:
    for text in ["plain words here", "it's \"quoted\"", "a *b* c", "x & y", "line\nnext"]:
        assert md.inline(text).replace("&#34;", "&quot;").replace("&#39;", "'") == (
            md.md.renderInline(text.strip()))
