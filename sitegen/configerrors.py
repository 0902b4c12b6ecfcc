"""Configuration errors in plain words: what a key's value should have been, and where.

Role: turn pydantic's validation errors into one sentence per key ("[api] concurrency
must be a whole number without quotes, e.g. 8, not "8"") and a TOML syntax error into
one sentence naming the line; an unknown key that is a near miss of a known one names it
(`[image]` → did you mean [images]?). It must never read files or the environment.
"""

from __future__ import annotations

import difflib
import re
import tomllib
import typing
from typing import Any

from pydantic import BaseModel, ValidationError

#: What a wrong value should have been, in plain words, by pydantic's error type.
_EXPECTED = {
    "int_type": "a whole number without quotes, e.g. 8",
    "int_from_float": "a whole number, e.g. 8",
    "float_type": "a number without quotes, e.g. 10.0",
    "bool_type": "true or false, without quotes",
    "string_type": "text in quotes",
    "dict_type": "a table",
    "model_type": "a table",
    "url_type": "an http(s) URL in quotes",
}
#: Plain words for the keys whose values must match a pattern.
#: (`config.OBJECT_ID_PATTERN`, the workspace id's, and `config.LANGUAGE_PATTERN`.)
_PATTERNS = {r"^[0-9a-fA-F]{24}$": "24 hexadecimal digits (the workspace id)",
             r"^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*$":
                 'a language code such as "en", "de" or "pt-BR"'}


def _given(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"' if len(value) <= 60 else "a long text"
    if isinstance(value, int | float):
        return str(value)
    return "a table" if isinstance(value, dict) else "a list" if isinstance(value, list) else (
        type(value).__name__)


def _table(model: type[BaseModel] | None, name: str) -> type[BaseModel] | None:
    """The model of the table *name* of *model* (a field whose type is a model), if any."""
    field = model.model_fields.get(name) if model is not None else None
    if field is None:
        return None
    for kind in (field.annotation, *typing.get_args(field.annotation)):
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            return kind
    return None


def _meant(model: type[BaseModel] | None, loc: list[str]) -> str:
    """" (did you mean [images]?)" when the unknown key at *loc* is a near miss of a known one
    of its table (difflib), else ""."""
    for name in loc[:-1]:
        model = _table(model, name)
    if model is None:
        return ""
    close = difflib.get_close_matches(loc[-1], [n for n in model.model_fields if n != "root"],
                                      n=1, cutoff=0.7)
    if not close:
        return ""
    meant = close[0]
    shown = f"[{meant}]" if len(loc) == 1 and _table(model, meant) else (
        f"[{loc[0]}] {meant}" if len(loc) == 2 else meant)
    return f": did you mean {shown}?"


def _problem(item: Any, model: type[BaseModel] | None = None) -> str:
    """One validation error, in plain words, naming the key (and, for an unknown key, the
    known key of *model* it is a near miss of)."""
    kind, ctx = item["type"], item.get("ctx") or {}
    loc = [str(p) for p in item["loc"] if not str(p).startswith(("function-", "lax-"))]
    key = ".".join(loc) or "(top level)"
    if len(loc) >= 2:
        key = f"[{loc[0]}] {'.'.join(loc[1:])}"
    if kind == "extra_forbidden":
        if len(loc) == 1 and isinstance(item.get("input"), dict):
            key = f"[{loc[0]}]"  # a table
        meant = _meant(model, loc) if loc else ""
        return f"unknown key {key}{meant or ' (remove it or check its spelling)'}"
    if kind == "missing":
        return f"missing required key {key}" if len(loc) != 1 else (
            f"missing required table [{key}]")
    given = _given(item.get("input"))
    if kind in _EXPECTED:
        return f"{key} must be {_EXPECTED[kind]}, not {given}"
    if kind == "string_pattern_mismatch":
        wanted = _PATTERNS.get(str(ctx.get("pattern")), "in the documented form")
        return f"{key} must be {wanted}, not {given}"
    if kind == "literal_error":
        return f"{key} must be one of {ctx.get('expected', 'the documented values')}, not {given}"
    bounds = {"greater_than_equal": "at least {ge}", "greater_than": "more than {gt}",
              "less_than_equal": "at most {le}", "less_than": "less than {lt}",
              "string_too_short": "at least {min_length} characters long",
              "string_too_long": "at most {max_length} characters long"}
    if kind in bounds:
        return f"{key} must be {bounds[kind].format(**ctx)}, not {given}"
    if kind.startswith("url"):
        return (f"{key} must be an http(s) URL with a host, e.g. \"https://example.com/\", "
                f"not {given} ({item['msg']})")
    if kind == "value_error":
        return f"{key} {str(ctx.get('error', item['msg']))}"
    return f"{key}: {item['msg']}"


def describe(error: ValidationError, model: type[BaseModel] | None = None) -> str:
    """Every validation error of a configuration, in plain words, each naming its key
    (*model*: the configuration's, for the known keys an unknown one is a near miss of)."""
    return "; ".join(_problem(item, model) for item in error.errors())


def syntax_error(name: str, error: tomllib.TOMLDecodeError) -> str:
    """A TOML syntax error as one sentence naming the line (and column) to fix."""
    text = str(error)
    where = re.search(r"\(at line (\d+), column (\d+)\)", text)
    what = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", text).strip()
    what = what[:1].lower() + what[1:] if what else "a syntax error"
    if where is None:
        return f"{name} is not valid TOML at its end ({what}): fix the syntax there"
    return (f"{name} is not valid TOML at line {where.group(1)}, column {where.group(2)} "
            f"({what}): fix the syntax on that line (text values need quotes)")
