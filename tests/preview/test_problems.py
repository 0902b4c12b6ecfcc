"""Failures → the overlay's file, line and message."""

from __future__ import annotations

import tomllib
from pathlib import Path

import jinja2
import pytest

from sitegen.config import load_config
from sitegen.errors import BuildError, ConfigError
from sitegen.preview.problems import describe_failure


def _env(folder: Path) -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(folder)),
                              undefined=jinja2.StrictUndefined)


def test_template_syntax_error_in_the_chain(tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "base.html").write_text("<p>\n{{ title }\n</p>\n", encoding="utf-8")
    try:
        try:
            _env(templates).get_template("base.html")
        except jinja2.TemplateSyntaxError as error:
            raise BuildError("rendering failed") from error
    except BuildError as wrapped:
        problem = describe_failure(wrapped, tmp_path)
    assert problem.kind == "template"
    assert problem.file == "templates/base.html"
    assert problem.line == 2
    assert problem.message


def test_runtime_template_error_points_at_the_template_line(tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "page.html").write_text("ok\nok\n{{ missing.attr }}\n", encoding="utf-8")
    with pytest.raises(jinja2.UndefinedError) as caught:
        _env(templates).get_template("page.html").render()
    problem = describe_failure(caught.value, tmp_path)
    assert problem.kind == "template"
    assert problem.file == "templates/page.html"
    assert problem.line == 3
    assert "missing" in problem.message


def test_a_message_naming_file_and_line(tmp_path: Path) -> None:
    error = BuildError(f"template {tmp_path / 'templates' / 'a.html'} line 7 has a syntax error "
                       "(unexpected '}'): fix the template")
    problem = describe_failure(error, tmp_path)
    assert (problem.kind, problem.file, problem.line) == ("template", "templates/a.html", 7)


def test_toml_syntax_error_names_the_config_line(tmp_path: Path) -> None:
    config = tmp_path / "site.toml"
    config.write_text('[site]\ntitle = "x"\nurl = \n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(config)
    problem = describe_failure(caught.value, tmp_path, config)
    assert problem.kind == "config"
    assert problem.file == "site.toml"
    assert problem.line == 3
    with pytest.raises(tomllib.TOMLDecodeError):
        tomllib.loads(config.read_text(encoding="utf-8"))


def test_invalid_config_without_a_line(tmp_path: Path) -> None:
    problem = describe_failure(ConfigError("site.toml is invalid: unknown key 'site.x'"),
                               tmp_path, tmp_path / "site.toml")
    assert (problem.kind, problem.file, problem.line) == ("config", "site.toml", None)


def test_anything_else_is_a_build_problem(tmp_path: Path) -> None:
    problem = describe_failure(RuntimeError("disk full"), tmp_path)
    assert (problem.kind, problem.file, problem.line, problem.message) == (
        "build", None, None, "disk full")
