"""The templates' autoescape function: the same Markup as markupsafe.escape, always."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import markupsafe
from hypothesis import given
from hypothesis import strategies as st
from jinja2 import Environment
from markupsafe import Markup

from sitegen.render.escaping import EscapingTemplate, escape
from sitegen.render.filters import human_date, iso_date
from sitegen.render.themes import ThemeSet

from .render_factory import make_config


class Html:
    def __html__(self) -> str:
        return "<i>safe</i>"


@given(st.text())
def test_escape_matches_markupsafe_on_text(text: str) -> None:
    for value in (text, Markup(text)):
        got = escape(value)
        assert type(got) is Markup
        assert got == markupsafe.escape(value)


def test_escape_matches_markupsafe_on_other_values() -> None:
    for value in (None, 3, 2.5, Html(), ["<a>"], '"quoted" & \'single\''):
        got = escape(value)
        assert type(got) is Markup and got == markupsafe.escape(value)


def test_compiled_templates_use_it() -> None:
    env = Environment(autoescape=True)
    env.template_class = EscapingTemplate
    template = env.from_string("{% macro m(x) %}{{ x }}{% endmacro %}{{ a }}|{{ b }}|{{ m(a) }}")
    assert template.root_render_func.__globals__["escape"] is escape
    assert template.render(a="<a href='x'>&", b=Markup("<b>")) == (
        "&lt;a href=&#39;x&#39;&gt;&amp;|<b>|&lt;a href=&#39;x&#39;&gt;&amp;")


def test_theme_templates_use_it(tmp_path: Path) -> None:
    env = ThemeSet(make_config(tmp_path)).environment()
    template = env.get_template("base.html")
    assert isinstance(template, EscapingTemplate)
    assert template.root_render_func.__globals__["escape"] is escape


def test_memoized_dates_keep_the_zone_apart() -> None:
    utc = datetime(2024, 3, 7, 23, 30, tzinfo=UTC)
    east = utc.astimezone(timezone(timedelta(hours=2)))
    assert utc == east
    for _ in range(2):  # the second round comes from the memo
        assert iso_date(utc) == "2024-03-07T23:30:00Z"
        assert iso_date(east) == "2024-03-08T01:30:00+02:00"
        assert human_date(utc) == "7 March 2024"
        assert human_date(east) == "8 March 2024"
        assert iso_date(None) == human_date(None) == ""
