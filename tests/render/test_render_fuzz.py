"""Property tests: any block JSON and any markdown render without executable markup."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from render_factory import make_config
from render_safety import problems

from sitegen.blocktypes import block_types, parse_block
from sitegen.fetch.records import Article
from sitegen.model.body import article_body
from sitegen.render.blocks import BlockRenderer
from sitegen.render.markdown import HeadingIds, MarkdownRenderer
from sitegen.render.themes import ThemeSet

# A site folder of its own: the theme set keeps compiled templates in the site's cache
# folder, which must not land in the source tree.
_ROOT = Path(tempfile.mkdtemp(prefix="sitegen-fuzz-"))
atexit.register(shutil.rmtree, _ROOT, ignore_errors=True)
_THEMES = ThemeSet(make_config(_ROOT))
_MD = MarkdownRenderer("https://site.example.test")
_BLOCKS = BlockRenderer(_THEMES.environment(), _MD)
_MD.code = _BLOCKS.code

NASTY = st.sampled_from([
    "javascript:alert(1)", "JaVaScRiPt:x", "java\tscript:x", "data:text/html,<script>",
    "vbscript:x", "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "\" onload=\"x",
    "' onmouseover='x", "&#106;avascript:x", "https://ok.test/a.png", "/rel/a.mp4",
    "https://youtu.be/dQw4w9WgXcQ", "[x](javascript:y)", "![i](data:x)", "<javascript:x>",
    "`code`", "**b**", "# h", "```\n<script>\n```", "\n", "|a|\n|-|\n|<b>|",
])
TEXT = st.one_of(st.text(max_size=80), NASTY,
                 st.lists(NASTY, max_size=4).map(" ".join))
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
# Every field a registered type's record has (from the registry), hostile or of the wrong type.
FIELDS = {name: JSON | TEXT for block in block_types() for name in block.record.model_fields
          if name != "type"}
BLOCK = st.fixed_dictionaries(
    {"type": st.sampled_from([*(block.name for block in block_types()), "x", 3])},
    optional={**FIELDS, "level": JSON, "items": JSON | st.lists(TEXT, max_size=4),
              "ordered": JSON},
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(BLOCK | JSON, max_size=6))
def test_any_blocks_render_safely(raw: list[object]) -> None:
    blocks = [parse_block(item) for item in raw]
    record = Article(id="x" * 24, title="t", blocks=blocks)  # type: ignore[arg-type]
    body = article_body(record)
    html = _BLOCKS.render(body.blocks, HeadingIds())  # unknown ones too
    assert problems(html) == [], html


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(TEXT, max_size=8).map("\n".join))
def test_any_markdown_renders_safely(source: str) -> None:
    html, toc = _MD.render(source)
    assert problems(html) == [], html
    assert "<h1" not in html
    assert len({h.id for h in toc}) == len(toc)
    assert problems(_MD.inline(source)) == []


def test_the_scanner_itself_finds_executable_markup() -> None:
    assert problems('<a href=" JavaScript:x">a</a>')
    assert problems('<img src="data:image/png;base64,AA">')
    assert problems('<p onclick="x">a</p>')
    assert problems("<script>alert(1)</script>")
    assert problems('<iframe src="https://evil.test/"></iframe>')
    assert not problems('<a href="https://ok.test/">ok</a><img src="/a.png" alt="">')
