"""Markdown: safe links and images, renumbered anchored headings, TOC, tables, code."""

from __future__ import annotations

import re

import pytest
from render_safety import problems

from sitegen.render.markdown import HeadingIds, MarkdownRenderer

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


def test_unsafe_images_become_alt_text_and_safe_ones_are_lazy_but_the_first() -> None:
    html, _ = md.render("![bad](javascript:alert(1)) ![good](/a.png) ![m](mailto:x@y.z) "
                        "![next](/b.png)")
    assert html.count("<img") == 2
    assert '<img src="/a.png" alt="good" decoding="async" fetchpriority="high">' in html
    assert '<img src="/b.png" alt="next" loading="lazy" decoding="async">' in html
    assert "bad" in html


def test_an_image_with_no_alt_has_an_empty_one_never_its_sections_heading() -> None:
    """Issue 53, 10: a guess from the section's heading misled screen readers."""
    source = ("![](https://i.test/a.png)\n\n## Where to sleep\n\n![](https://i.test/b.png)\n\n"
              "![A bunk, made](https://i.test/c.png)\n\n## Later\n")
    html, _ = MarkdownRenderer().render(source, title="Night trains")
    assert 'src="https://i.test/a.png" alt=""' in html
    assert 'src="https://i.test/b.png" alt=""' in html
    assert 'src="https://i.test/c.png" alt="A bunk, made"' in html
    dropped = MarkdownRenderer(image=lambda src, alt, index: "")
    html, _ = dropped.render("![](https://i.test/a.png)", title="Night trains")
    assert "Night trains" not in html


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
    assert '<h4 id="deep">Deep</h4>' in html  # one below its parent, not h7
    assert '<h2 id="main-2">Main</h2>' in html  # "main" is a theme landmark id
    assert "<h1" not in html
    assert [(h.level, h.id, h.text) for h in toc] == [
        (2, "intro", "Intro"), (3, "intro-2", "Intro"), (4, "deep", "Deep"),
        (2, "main-2", "Main")]


def levels(html: str) -> list[int]:
    return [int(n) for n in re.findall(r"<h([1-6])", html)]


def test_the_body_top_level_is_h2_and_levels_never_skip() -> None:
    # The usual LLM body: sections at `##` (not `#`) become <h2>, straight under the title.
    html, toc = md.render("Intro\n\n## One\n\n### One.a\n\n## Two\n\n#### Deep\n")
    assert levels(html) == [2, 3, 2, 3]
    assert [h.level for h in toc] == [2, 3, 2, 3]
    # A shallower heading after deeper ones closes them; the first heading is h2 anyway.
    assert levels(md.render("### a\n\n## b\n\n### c\n\n# d\n\n###### e\n")[0]) == [
        2, 2, 3, 2, 3]
    for source in ["#### x\n\n## y\n\n##### z\n\n###### w\n", "# a\n" * 3]:
        found = levels(md.render(source)[0])
        assert found[0] == 2
        assert all(b <= a + 1 for a, b in zip(found, found[1:], strict=False))


def test_headings_never_go_past_h6() -> None:
    ids = HeadingIds()
    assert [ids.level(n) for n in (0, 1, 2, 3, 4, 5, 6, 9)] == [2, 2, 3, 4, 5, 6, 6, 6]


def test_tables_strikethrough_and_fences() -> None:
    html, _ = md.render("|a|b|\n|-|-|\n|1|~~2~~|\n\n```python\nx = 1\n```\n")
    assert "<table>" in html and "<s>2</s>" in html
    assert "<pre>python</pre>" in html


def test_inline_fast_path_matches_the_parser() -> None:
    for text in ["plain words here", "it's \"quoted\"", "a *b* c", "x & y", "line\nnext"]:
        assert md.inline(text).replace("&#34;", "&quot;").replace("&#39;", "'") == (
            md.md.renderInline(text.strip()))
