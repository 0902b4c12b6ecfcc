"""The preview's real builder on the demo workspace: model reuse and pages rendered first."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

import pytest

from sitegen.config import Config, resolve_config
from sitegen.errors import BuildError
from sitegen.outputnames import MANIFEST_NAME
from sitegen.preview.builder import SiteBuilder, preview_config, preview_output
from sitegen.preview.fresh import FreshPages
from sitegen.preview.reload import ReloadChannel
from sitegen.render.themes import builtin_themes_root

ANCHOR = '<body class="kind-{{ page.kind }}">'


def _config(root: Path) -> Config:
    cwd = os.getcwd()
    os.chdir(root)
    try:
        return preview_config(resolve_config("site.toml", True), "http://127.0.0.1:9/")
    finally:
        os.chdir(cwd)


def _override_base(root: Path, marker: str) -> None:
    original = (builtin_themes_root() / "default" / "templates" / "base.html").read_text("utf-8")
    head, sep, tail = original.partition(ANCHOR)
    assert sep, "the default base.html changed shape: update this test"
    (root / "templates").mkdir(exist_ok=True)
    (root / "templates" / "base.html").write_text(f"{head}{sep}\n<!-- {marker} -->{tail}",
                                                  encoding="utf-8")


def _tree(folder: Path) -> dict[str, bytes]:
    """Every file but the manifest (sitegen's bookkeeping holds the files' mtimes)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != MANIFEST_NAME}


class Preview(NamedTuple):
    site: Path
    config: Config
    channel: ReloadChannel
    fresh: FreshPages
    builder: SiteBuilder


def _built_preview(tmp_path: Path, marker: str) -> Preview:
    """A demo site whose base template carries *marker*, built once by a preview builder."""
    site = tmp_path / "site"
    site.mkdir()
    _override_base(site, marker)
    config = _config(site)
    channel = ReloadChannel()
    fresh = FreshPages(channel)
    builder = SiteBuilder(preview_output(config), demo=True, offline=False, fresh=fresh)
    builder(config, fetch=True)
    return Preview(site, config, channel, fresh, builder)


def test_template_rebuild_serves_open_pages_first_and_matches_a_cold_build(
        tmp_path: Path) -> None:
    site, config, channel, fresh, builder = _built_preview(tmp_path, "first")
    model = builder._site
    assert model is not None

    home = channel.subscribe("/")
    home.get(timeout=1)  # hello
    seen: dict[str, object] = {}
    original = fresh.render_first

    def spy(renderer: object) -> None:
        original(renderer)  # type: ignore[arg-type]
        seen["early"] = fresh.get("index.html")
        seen["on_disk"] = (preview_output(config) / "index.html").read_bytes()

    fresh.render_first = spy  # type: ignore[method-assign]
    _override_base(site, "second")
    summary = builder(config, fetch=False, first=True)
    assert summary.written > 1
    early = seen["early"]
    assert isinstance(early, tuple)
    data, build = early
    assert b"<!-- second -->" in data
    assert b"<!-- first -->" in seen["on_disk"]  # type: ignore[operator]
    event = home.get(timeout=1)
    assert event is not None and event.data == {"build": build, "paths": ["/"]}
    # The page served ahead is the very page committed; then nothing stays in memory.
    output = preview_output(config)
    assert (output / "index.html").read_bytes() == data
    assert len(fresh) == 0
    # The model was reused (same workspace and configuration), not built again.
    assert builder._site is not None and builder._site[-1] is model[-1]

    # A cold build of the same sources into another folder gives the same bytes.
    cold = SiteBuilder(tmp_path / "cold", demo=True, offline=True)
    cold(config, fetch=False)
    assert len(_tree(output)) > 100
    assert _tree(tmp_path / "cold") == _tree(output)


def test_a_broken_template_leaves_nothing_served_ahead(tmp_path: Path) -> None:
    site, config, channel, fresh, builder = _built_preview(tmp_path, "good")
    channel.subscribe("/").get(timeout=1)
    before = (preview_output(config) / "index.html").read_bytes()
    original = (site / "templates" / "base.html").read_text("utf-8")
    (site / "templates" / "base.html").write_text(
        original.replace("<!-- good -->", "{{ no_such_name.attr }}"), encoding="utf-8")
    with pytest.raises(BuildError):
        builder(config, fetch=False, first=True)
    assert len(fresh) == 0
    assert (preview_output(config) / "index.html").read_bytes() == before


def test_an_own_page_or_static_edit_is_rebuilt_though_the_model_is_otherwise_reused(
        tmp_path: Path) -> None:
    site, config, _, _, builder = _built_preview(tmp_path, "own")
    (site / "pages").mkdir()
    (site / "static").mkdir()
    (site / "pages" / "about.md").write_text('+++\ntitle = "About one"\nmenu = 1\n+++\nOne.\n')
    (site / "static" / "ads.txt").write_text("one")
    builder(config, fetch=False)
    output = preview_output(config)
    assert "About one" in (output / "index.html").read_text()
    (site / "pages" / "about.md").write_text('+++\ntitle = "About two"\nmenu = 1\n+++\nTwo.\n')
    (site / "static" / "ads.txt").write_text("two")
    builder(config, fetch=False)
    assert "About two" in (output / "index.html").read_text()
    assert "Two." in (output / "about" / "index.html").read_text()
    assert (output / "ads.txt").read_text() == "two"


def test_a_static_file_added_on_an_articles_url_moves_the_article_in_the_preview(
        tmp_path: Path) -> None:
    """The model is made again when `static/`'s files change: the owner's new file keeps
    its path, the article the service named moves (the reused model clashed: exit 2)."""
    site, config, _, _, builder = _built_preview(tmp_path, "claimed")
    output = preview_output(config)
    taken = next(path.parent.name for path in sorted(output.glob("*/index.html"))
                 if 'property="og:type" content="article"' in path.read_text())
    (site / "static" / taken).mkdir(parents=True)
    (site / "static" / taken / "index.html").write_text("the owner's page")
    builder(config, fetch=False)
    assert (output / taken / "index.html").read_text() == "the owner's page"
    assert 'content="article"' in (output / f"{taken}-2" / "index.html").read_text()


def test_the_preview_shows_the_demo_s_images_as_the_built_site_does(tmp_path: Path) -> None:
    """The preview builds through the images stage: its first build fetches the demo's images
    (through the emulator), a later one reuses the stored ones, pages show them sized."""
    site = tmp_path / "site"
    site.mkdir()
    config = _config(site)
    output = preview_output(config)
    builder = SiteBuilder(output, demo=True, offline=False)
    builder(config, fetch=True)
    home = (output / "index.html").read_text("utf-8")
    assert "<picture>" in home and 'src="/media/' in home
    files = sorted(p.name for p in (output / "media").glob("*.webp"))
    assert files
    before = _tree(output)
    builder(config, fetch=False)  # an edit's rebuild: the stored images, nothing fetched
    assert _tree(output) == before


def test_each_rebuild_shows_ten_warnings_of_a_kind_then_counts_the_rest(tmp_path: Path) -> None:
    """As `build` does at its end, each preview rebuild sums up the warnings it left out."""
    import io
    import logging

    from sitegen.logs import LOGGER_NAME, setup_logging

    site = tmp_path / "site"
    (site / "pages").mkdir(parents=True)
    (site / "pages" / "links.md").write_text(
        '+++\ntitle = "Links"\n+++\n' + "".join(f"[x](/gone-{n}/) " for n in range(12)))
    config = _config(site)
    logger = logging.getLogger(LOGGER_NAME)
    saved = (list(logger.handlers), logger.level, logger.propagate)
    stream = io.StringIO()
    try:
        setup_logging(stream=stream)
        builder = SiteBuilder(preview_output(config), demo=True, offline=False)
        for fetch in (True, False):
            builder(config, fetch=fetch)
    finally:
        logger.handlers[:] = saved[0]
        logger.setLevel(saved[1])
        logger.propagate = saved[2]
    lines = stream.getvalue().splitlines()
    assert sum("/gone-" in line for line in lines) == 20  # ten in each of the two rebuilds
    counts = [line for line in lines if "were not shown" in line]
    assert counts == ['warning: 2 more warnings like "page …: the link … is broken (…): fix or '
                      'remove it" were not shown (-v shows every warning)'] * 2


def test_the_open_pages_are_rendered_before_the_metadata_warnings(tmp_path: Path) -> None:
    """The preview's hook runs as soon as the renderer exists: the site-wide warnings (which
    read every article) come after the pages a template save shows first."""
    import logging

    from sitegen.build import BuildOptions, run_build
    from sitegen.logs import LOGGER_NAME
    from sitegen.render.pages import Renderer

    site = tmp_path / "site"
    site.mkdir()
    (site / "site.toml").write_text(
        '[site]\ntitle = "T"\nurl = "https://t.test/"\n'
        '[api]\nurl = "https://api.test"\nworkspace = "65f0c0ffee0123456789abcd"\n')
    config = _config(site)  # (no description: a metadata warning)
    logged: list[str] = []

    class Seen(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            logged.append(record.getMessage())

    at_hook: list[list[str]] = []

    def hook(renderer: Renderer) -> None:
        at_hook.append(list(logged))

    handler = Seen(logging.WARNING)
    logging.getLogger(LOGGER_NAME).addHandler(handler)
    try:
        run_build(config, BuildOptions(output=preview_output(config), demo=True,
                                       before_render=hook))
    finally:
        logging.getLogger(LOGGER_NAME).removeHandler(handler)
    assert any("description" in message for message in logged)
    assert len(at_hook) == 1 and not [m for m in at_hook[0] if "description" in m]


def test_the_rebuild_line_says_why_the_page_in_view_changed(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The preview's log line names, for the page open in a browser, the read that changed."""
    import logging

    from sitegen.preview.changes import ChangeSet
    from sitegen.preview.session import PreviewSession

    site, config, channel, _, builder = _built_preview(tmp_path, "first")
    session = PreviewSession(load_config=lambda: config, build=builder, channel=channel,
                             config_file=site / "site.toml", can_fetch=False)
    channel.subscribe("/").get(timeout=1)
    _override_base(site, "second")
    caplog.set_level(logging.INFO, logger="sitegen.preview")
    session.apply(ChangeSet(templates=(site / "templates" / "base.html",)))
    line = next(m for m in caplog.messages if m.startswith("rebuilt "))
    assert line.endswith("; /: template base.html changed"), line
