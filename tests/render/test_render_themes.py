"""ThemeSet: lookup chain, prefixes, errors, static folders and fingerprint."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest
from render_factory import make_config

from sitegen.errors import BuildError, ConfigError
from sitegen.render.highlight import pygments_css
from sitegen.render.themes import ThemeSet, builtin_themes_root


def test_unknown_theme_names_it_and_the_available_ones(tmp_path: Path) -> None:
    (tmp_path / "themes" / "mine" / "templates").mkdir(parents=True)
    with pytest.raises(ConfigError) as error:
        ThemeSet(make_config(tmp_path, theme="nope"))
    message = str(error.value)
    assert "'nope'" in message and "default" in message and "mine" in message


def test_theme_name_cannot_escape(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        ThemeSet(make_config(tmp_path, theme="../default"))


def test_site_override_extends_what_it_replaces(tmp_path: Path) -> None:
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "404.html").write_text(
        '{% extends "theme/404.html" %}{% block content %}OVERRIDE {{ super() }}{% endblock %}')
    env = ThemeSet(make_config(tmp_path)).environment()
    assert env.get_template("404.html").filename.startswith(str(tmp_path))
    assert "default" in (env.get_template("default/404.html").filename or "")


def test_local_theme_falls_back_to_default(tmp_path: Path) -> None:
    theme = tmp_path / "themes" / "mine"
    (theme / "templates").mkdir(parents=True)
    (theme / "static").mkdir()
    (theme / "templates" / "home.html").write_text('{% extends "default/home.html" %}')
    themes = ThemeSet(make_config(tmp_path, theme="mine"))
    env = themes.environment()
    assert str(theme) in (env.get_template("home.html").filename or "")
    assert str(builtin_themes_root()) in (env.get_template("article.html").filename or "")
    assert str(theme) in (env.get_template("theme/home.html").filename or "")
    assert themes.static_dirs() == [theme / "static", builtin_themes_root() / "default" / "static"]


def test_syntax_error_is_a_build_error_with_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "home.html").write_text("line one\n{% if %}\n")
    with pytest.raises(BuildError) as error:
        ThemeSet(make_config(tmp_path)).environment()
    assert "home.html" in str(error.value) and "line 2" in str(error.value)


def test_strict_undefined(tmp_path: Path) -> None:
    env = ThemeSet(make_config(tmp_path)).environment()
    with pytest.raises(Exception, match="typo"):
        env.from_string("{{ typo }}").render()


def test_fingerprint_changes_with_any_template(tmp_path: Path) -> None:
    before = ThemeSet(make_config(tmp_path)).fingerprint()
    assert before == ThemeSet(make_config(tmp_path)).fingerprint()
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "extra.html").write_text("x")
    assert ThemeSet(make_config(tmp_path)).fingerprint() != before


def test_shipped_pygments_css_is_current_and_css_is_small() -> None:
    """Every page waits for its theme's stylesheets (joined into site.css): together they fit
    the first round trip, ~14 kB as sent (gzip)."""
    root = builtin_themes_root()
    static = root / "default" / "static"
    assert (static / "pygments.css").read_text() == pygments_css()
    for theme in ("default", "magazine"):
        files = {*static.glob("*.css"), *(root / theme / "static").glob("*.css")}
        joined = b"".join(path.read_bytes() for path in sorted(files))
        assert len(gzip.compress(joined, 9)) < 14_000, theme



def test_code_colours_reach_aa_in_both_schemes_and_no_token_looks_like_an_error() -> None:
    from sitegen.render.filters import contrast_ratio

    css = pygments_css()
    light, dark = css.split("@media (prefers-color-scheme: dark)")
    for part in (light, dark):
        background = re.search(r"\.highlight \{ background:(#[0-9a-fA-F]{6})", part)
        assert background is not None
        for colour in re.findall(r"(?<![-\w])color:(#[0-9a-fA-F]{3,6})", part):
            assert contrast_ratio(colour, background.group(1)) >= 4.5, colour
    # The error token (valid code a lexer did not understand) is plain text in both.
    assert re.findall(r"\.highlight \.err \{[^}]*\}", css) == [
        ".highlight .err { color:inherit;background:none;border:0 }"]


def test_muted_text_keeps_seven_to_one_on_the_page_and_its_surfaces() -> None:
    """AA asks 4.5:1; the themes keep their muted text (dates, bylines, excerpts) at AAA's
    7:1 against the page and card backgrounds, in the light and the dark scheme."""
    from sitegen.render.filters import contrast_ratio

    for theme in ("default", "magazine"):
        css = (builtin_themes_root() / theme / "static" / "style.css").read_text()
        schemes = re.findall(r"--bg: (#[0-9a-f]{6}); --surface: (#[0-9a-f]{6}); [^}]*?"
                             r"--muted: (#[0-9a-f]{6})", css)
        # light, then dark (the system's, then the visitor's choice: the same colours)
        assert len(schemes) == 3 and schemes[1] == schemes[2], theme
        for bg, surface, muted in schemes:
            for ground in (bg, surface):
                assert contrast_ratio(muted, ground) >= 7, (theme, muted, ground)
