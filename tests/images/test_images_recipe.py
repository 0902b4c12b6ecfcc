"""The images stage as a recipe of its own: below the render and the emitter, `[images]`
read in one place, small steps, and each markdown body parsed for its images once."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from sitegen.render import pool
from sitegen.render.markdown import HeadingIds, MarkdownRenderer
from tests.images.imagehost import ImageHost
from tests.images.sites import build, config, page_of, workspace

PACKAGE = Path(__file__).resolve().parents[2] / "sitegen"
STAGE = sorted((PACKAGE / "images").glob("*.py"))


def imported(path: Path) -> set[str]:
    """Every module *path* imports, at any depth (`TYPE_CHECKING` blocks and functions too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_the_images_stage_imports_neither_the_render_nor_the_emitter() -> None:
    """The images stage runs before the render and hands it the `ImageMap`: an import of
    the render (to parse markdown) or of the emitter (the writer's type) runs back up."""
    upward = {path.name: sorted(name for name in imported(path)
                                if name.startswith(("sitegen.render", "sitegen.emit")))
              for path in STAGE}
    assert {name: found for name, found in upward.items() if found} == {}


def test_only_the_settings_module_reads_the_configuration() -> None:
    """`[images]` (and `[api] url`) are read once, into `ImageSettings`: no other step of
    the stage reaches into the configuration."""
    readers = {path.name for path in STAGE for node in ast.walk(ast.parse(path.read_text()))
               if isinstance(node, ast.Attribute) and node.attr in ("images", "api")
               and isinstance(node.value, ast.Name) and node.value.id == "config"}
    assert readers == {"settings.py"}


def test_no_function_of_the_stage_is_complex() -> None:
    """Each step is a small function with one job (cyclomatic complexity at most 10)."""
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "C901", "--config",
         "lint.mccabe.max-complexity=10", str(PACKAGE / "images"),
         str(PACKAGE / "fetch" / "images.py")],
        capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_new_body_is_parsed_once_in_its_first_build_the_render_takes_that_parse(
        tmp_path: Path, host: ImageHost, monkeypatch: pytest.MonkeyPatch) -> None:
    """The images stage's parse of a new markdown body (an article's, an own page's) is
    the one the render renders from: one parse per new body in the build that first sees
    it, and the same bytes as a build that parses it again (`--force` finds its image
    URLs stored, so only the render parses)."""
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "about.md").write_text(f'+++\ntitle = "About"\n+++\n\n## Who\n\n'
                                    f"![A picture]({host.url('/a.png')})\n")
    data = workspace(f"## First\n\n![One]({host.url('/a.png')})\n\n## First\n\n"
                     f"![Two]({host.url('/wide.png')}) and [a link](https://example.com/).\n\n"
                     "## Last\n")  # (three headings: the page shows its table of contents)
    cfg, out = config(tmp_path, api=host.origin), tmp_path / "_site"
    parses: list[str] = []
    real = MarkdownRenderer.parse

    def counted(self: MarkdownRenderer, source: str, ids: HeadingIds) -> Any:
        parses.append(source)
        return real(self, source, ids)

    monkeypatch.setattr(MarkdownRenderer, "parse", counted)
    monkeypatch.setattr(pool, "PARALLEL_THRESHOLD", 10**9)  # (parses counted in-process)
    first = build(cfg, out, data)
    assert first.images is not None and first.images["failed"] == 0
    assert sum("![One]" in p for p in parses) == 1
    assert sum("![A picture]" in p for p in parses) == 1
    page, about = page_of(out), (out / "about" / "index.html").read_text()
    body = page.split('id="article-body"', 1)[1].split("</div>", 1)[0]
    assert body.count("<picture>") == 2 and 'id="first-2"' in body and "<picture>" in about
    assert 'href="#first-2"' in page  # (the table of contents the parse noted)
    parses.clear()
    again = build(cfg, out, data, force=True)
    assert sum("![One]" in p for p in parses) == 1
    assert again.rendered == first.rendered and page_of(out) == page
    assert (out / "about" / "index.html").read_text() == about


def test_a_body_is_parsed_for_its_images_once_in_its_life_own_pages_too(
        tmp_path: Path, host: ImageHost, monkeypatch: pytest.MonkeyPatch) -> None:
    """The URLs the render's parse found are kept: a build with nothing new parses no
    markdown at all, not even an own page's (whose root-relative images are site files)."""
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "about.md").write_text(f'+++\ntitle = "About"\n+++\n\n![Logo](/logo.png)\n\n'
                                    f"![A picture]({host.url('/a.png')})\n")
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "logo.png").write_bytes(b"a file of the site, copied as it is")
    data = workspace(f"![One]({host.url('/a.png')})\n\n![Two]({host.url('/wide.png')})\n")
    cfg, out = config(tmp_path, api=host.origin), tmp_path / "_site"
    first = build(cfg, out, data)
    assert first.images is not None and first.images["failed"] == 0
    about = (out / "about" / "index.html").read_text()
    assert 'src="/logo.png"' in about and "<picture>" in about
    parses: list[str] = []
    real = MarkdownIt.parse

    def counted(self: MarkdownIt, src: str, env: Any = None) -> Any:
        parses.append(src)
        return real(self, src, env)

    monkeypatch.setattr(MarkdownIt, "parse", counted)
    again = build(cfg, out, data)
    assert again.rendered == 0 and again.images == {**first.images, "requests": 0,
                                                   "downloaded": 0}
    assert parses == []
