"""One registry of block types: a type declared once renders, counts and is searchable;
an unknown or unhandled one is the unknown block with a warning, never nothing."""

from __future__ import annotations

import gzip
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest

from sitegen.blocktypes import (
    BlockRecord,
    InlineMarkdown,
    LinkUrl,
    SafeUrl,
    UnknownBlock,
    block_types,
    parse_block,
    register,
    unregister,
)
from sitegen.build import BuildOptions, run_build
from sitegen.config import Config
from sitegen.fetch.fields import Text
from sitegen.fetch.records import Article
from sitegen.model import build_site
from sitegen.model.body import article_body
from sitegen.render.blocks import BlockRenderer
from sitegen.render.markdown import HeadingIds, MarkdownRenderer
from sitegen.render.pages import Renderer
from sitegen.render.themes import ThemeSet
from tests.render.render_factory import article, make_config, make_workspace

CALLOUT_TEMPLATE = (
    "{#- blocks/callout.html: `block.content`, `block.cite` (plain text, escaped). -#}\n"
    '<figure class="callout"><blockquote><p>{{ block.content }}</p></blockquote>'
    "{% if block.cite %}<figcaption>{{ block.cite }}</figcaption>{% endif %}</figure>\n")


class CalloutBlock(BlockRecord):
    type: Literal["callout"] = "callout"
    content: str = ""
    cite: Text = None


@pytest.fixture
def callout() -> Iterator[None]:
    """The fixture theme's block type: one registry entry (its template is written below)."""
    register("callout", CalloutBlock, lambda b: f"{b.content} {b.cite or ''}")
    yield
    unregister("callout")


def _site(root: Path, theme: str) -> Config:
    (root / "templates" / "blocks").mkdir(parents=True)
    (root / "templates" / "blocks" / "callout.html").write_text(CALLOUT_TEMPLATE)
    return make_config(root, theme=theme)


CALLED_OUT = article(1, content=None, blocks=[
    {"type": "text", "content": "Plain words first."},
    {"type": "callout", "content": "Zanzibar marmalade <b>never</b> sleeps",
     "cite": "Ada Quotewright"}])


def _search_text(output: Path) -> str:
    """What the Pagefind index holds of the pages' text (its shards' fragments, decompressed)."""
    return "".join(gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
                   for path in (output / "pagefind").glob("*/fragment/*.pf_fragment"))


@pytest.mark.parametrize("theme", ["default", "magazine"])
def test_a_block_type_a_theme_adds_renders_counts_and_is_searched(
        callout: None, tmp_path: Path, theme: str, caplog: pytest.LogCaptureFixture) -> None:
    config = _site(tmp_path / "site", theme)
    workspace = make_workspace([CALLED_OUT, article(2)])
    output = tmp_path / "out"
    with caplog.at_level(logging.WARNING):
        run_build(config, BuildOptions(output=output, workspace=workspace))
    page = next(output.glob("**/article-1/index.html")).read_text()
    assert ('<figure class="callout"><blockquote><p>Zanzibar marmalade &lt;b&gt;never&lt;/b&gt; '
            'sleeps</p></blockquote><figcaption>Ada Quotewright</figcaption></figure>') in page
    assert "block-unknown" not in page
    assert not [r for r in caplog.records if "callout" in r.getMessage()]
    body = article_body(Article.model_validate(CALLED_OUT))
    assert body.words == 3 + 4 + 2  # the text block's, the callout's and its citation's
    searched = _search_text(output)
    assert "Zanzibar marmalade" in searched and "Quotewright" in searched


def test_an_unknown_block_type_is_the_unknown_block_with_a_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    config = make_config(tmp_path)
    workspace = make_workspace([article(1, content=None, blocks=[
        {"type": "text", "content": "Before."},
        {"type": "carousel", "content": "Slides about <i>otters</i>"}])])
    with caplog.at_level(logging.WARNING):
        site = build_site(config, workspace, [])
    (shown,) = site.articles
    html = Renderer(config, site, ThemeSet(config)).article_html(shown)
    assert ('<div class="block-unknown" data-block-type="carousel"><p>Slides about '
            '&lt;i&gt;otters&lt;/i&gt;</p></div>') in html
    warned = [r.getMessage() for r in caplog.records if "carousel" in r.getMessage()]
    assert len(warned) == 1 and shown.id in warned[0]
    assert article_body(Article.model_validate(workspace.articles[0])).words == 1 + 3


def test_a_registered_type_with_no_template_is_the_unknown_block_with_a_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    class PollBlock(BlockRecord):
        type: Literal["poll"] = "poll"
        question: str = ""

    register("poll", PollBlock, lambda b: b.question)
    try:
        config = make_config(tmp_path)
        workspace = make_workspace([article(1, content=None, blocks=[
            {"type": "text", "content": "Vote."}, {"type": "poll", "question": "Tea?"}])])
        site = build_site(config, workspace, [])
        renderer = Renderer(config, site, ThemeSet(config))
        html = renderer.article_html(site.articles[0])
        with caplog.at_level(logging.WARNING):
            renderer.warn_metadata()
    finally:
        unregister("poll")
    assert '<div class="block-unknown" data-block-type="poll"><p>Tea?</p></div>' in html
    warned = [r.getMessage() for r in caplog.records if "poll" in r.getMessage()]
    assert len(warned) == 1 and site.articles[0].id in warned[0]
    assert "blocks/poll.html" in warned[0]


def test_an_added_types_url_field_refuses_an_unsafe_url() -> None:
    class LinkBlock(BlockRecord):
        type: Literal["linkcard"] = "linkcard"
        url: SafeUrl

    register("linkcard", LinkBlock, lambda b: "")
    try:
        bad = parse_block({"type": "linkcard", "url": "javascript:alert(1)"})
        good = parse_block({"type": "linkcard", "url": "https://ok.test/a"})
    finally:
        unregister("linkcard")
    assert isinstance(bad, UnknownBlock) and isinstance(good, LinkBlock)


def test_the_renderers_views_are_of_registered_types_and_names_are_unique(
        config: Config) -> None:
    renderer = BlockRenderer(ThemeSet(config).environment(), MarkdownRenderer())
    names = [entry.name for entry in block_types()]
    assert set(renderer.views) <= set(names) and len(names) == len(set(names))
    for entry in block_types():  # every built-in type has its template in the default theme
        assert ThemeSet(config).template_source(entry.template) is not None
    with pytest.raises(ValueError):
        register("text", CalloutBlock, lambda b: "")


class NoteBlock(BlockRecord):
    type: Literal["note"] = "note"
    text: InlineMarkdown = ""
    label: Text = None
    more: LinkUrl = None


NOTE_TEMPLATE = ("<aside>{{ block.text }}|{{ block.label }}|{{ block.more }}</aside>")


def test_an_added_types_inline_markdown_is_drawn_sanitised_and_its_link_is_http_only(
        tmp_path: Path) -> None:
    register("note", NoteBlock, lambda b: b.text)
    try:
        (tmp_path / "templates" / "blocks").mkdir(parents=True)
        (tmp_path / "templates" / "blocks" / "note.html").write_text(NOTE_TEMPLATE)
        renderer = BlockRenderer(ThemeSet(make_config(tmp_path)).environment(),
                                 MarkdownRenderer())
        blocks = [parse_block({"type": "note", "label": "*kept* <i>as text</i>",
                               "text": "A *tidy* [link](https://ok.test/) <script>x</script>"
                                       " [bad](javascript:alert(1))",
                               "more": more})
                  for more in ("https://ok.test/src", "javascript:alert(1)", "/local/")]
        html = renderer.render(blocks, HeadingIds())
    finally:
        unregister("note")
    assert all(isinstance(block, NoteBlock) for block in blocks)  # a bad link: the block kept
    first, second, third = html.splitlines()
    assert first == (
        '<aside>A <em>tidy</em> <a href="https://ok.test/" rel="noopener noreferrer">link</a>'
        ' &lt;script&gt;x&lt;/script&gt; bad|*kept* &lt;i&gt;as text&lt;/i&gt;'
        '|https://ok.test/src</aside>')
    assert second.endswith("|None</aside>") and third.endswith("|None</aside>")
