"""The quote block: a quotation with its attribution, declared once in the block registry and
drawn by one template that both built-in themes use — semantic HTML, its inline markdown
sanitised, its source link http(s) only, its words counted and searched like any block's."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from sitegen.blocktypes import QuoteBlock, parse_block, plain_text
from sitegen.build import BuildOptions, run_build
from sitegen.fetch.records import Article
from sitegen.model.body import article_body
from sitegen.render.blocks import BlockRenderer
from sitegen.render.markdown import HeadingIds, MarkdownRenderer
from sitegen.render.themes import ThemeSet
from tests.render.render_factory import article, make_config, make_workspace

QUOTE = {"type": "quote", "text": "Trains are *slow* on purpose <b>always</b>",
         "attribution": "Ada Quotewright", "source": "Notes from the Platform",
         "url": "https://books.example.test/platform"}
QUOTED = article(1, content=None, blocks=[{"type": "text", "content": "Plain words first."},
                                          QUOTE])
FIGURE = (
    '<figure class="quote">\n'
    '  <blockquote cite="https://books.example.test/platform"><p>Trains are <em>slow</em> on '
    'purpose &lt;b&gt;always&lt;/b&gt;</p></blockquote>\n'
    '  <figcaption>— Ada Quotewright, <cite><a href="https://books.example.test/platform" '
    'rel="noopener noreferrer">Notes from the Platform</a></cite></figcaption>\n'
    '</figure>')


@pytest.mark.parametrize("theme", ["default", "magazine"])
def test_a_quote_is_a_figure_in_both_themes_counted_and_searched(
        tmp_path: Path, theme: str) -> None:
    config = make_config(tmp_path / "site", theme=theme)
    output = tmp_path / "out"
    run_build(config, BuildOptions(output=output, workspace=make_workspace(
        [QUOTED, article(2)])))
    page = (output / "article-1" / "index.html").read_text()
    assert FIGURE in page and "block-unknown" not in page
    # its words are the registry's plain text: the quote, who said it and the work
    body = article_body(Article.model_validate(QUOTED))
    assert body.words == 3 + 6 + 2 + 4
    searched = "".join(gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
                       for path in (output / "pagefind").glob("*/fragment/*.pf_fragment"))
    assert "Quotewright" in searched and "Notes from the Platform" in searched


def _drawn(*blocks: dict[str, object]) -> list[str]:
    renderer = BlockRenderer(ThemeSet(make_config(Path("/nonexistent"))).environment(),
                             MarkdownRenderer())
    return renderer.render([parse_block(b) for b in blocks], HeadingIds()).split("</figure>")


def test_an_unsafe_or_non_web_source_is_dropped_and_the_quote_kept() -> None:
    unsafe, relative, mailto = (parse_block({**QUOTE, "url": url}) for url in (
        "javascript:alert(1)", "/local/page/", "mailto:ada@example.test"))
    assert all(isinstance(b, QuoteBlock) and b.url is None for b in (unsafe, relative, mailto))
    first, *_ = _drawn({**QUOTE, "url": "javascript:alert(1)",
                        "text": "[x](javascript:alert(2)) <script>y</script>"})
    assert "javascript" not in first and "<script>" not in first and "<a " not in first
    assert "<figcaption>— Ada Quotewright, <cite>Notes from the Platform</cite></figcaption>" \
        in first


def test_a_quote_with_only_some_of_its_parts_shows_those() -> None:
    only_url, only_who, bare, empty = _drawn(
        {"type": "quote", "text": "One", "url": "https://ex.example.test/a"},
        {"type": "quote", "text": "Two", "attribution": "Bo"},
        {"type": "quote", "text": "Three"},
        {"type": "quote", "text": "  ", "attribution": "Nobody"})[:4]
    assert ('<figcaption>— <cite><a href="https://ex.example.test/a" rel="noopener noreferrer">'
            'ex.example.test</a></cite></figcaption>') in only_url
    assert "<figcaption>— Bo</figcaption>" in only_who
    assert "<blockquote><p>Three</p></blockquote>" in bare and "figcaption" not in bare
    assert "Nobody" not in empty  # no quotation, no figure
    assert plain_text(parse_block({"type": "quote", "text": "a b", "attribution": "c"})) == "a b c"
