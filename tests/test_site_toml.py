"""The repository's `site.toml`, which `sitegen init` writes, documents every key the config
accepts, in its section, with its default value (`[deploy.NAME]` commented out).

It lacked `[images] concurrency` and `timeout` (and `[deploy] redirects`) while the README
called it "fully commented". The keys are read from the config's own models, so a key
added later must be documented here too.
"""

from __future__ import annotations

import re
import tomllib
import typing
from pathlib import Path

from pydantic import BaseModel

from sitegen.config import Config
from sitegen.scaffold import example_site_toml

REPO = Path(__file__).resolve().parents[1]
_HEADER = re.compile(r"^#? ?\[([a-z_.]+)\]", re.M)


def section_models() -> dict[str, type[BaseModel]]:
    """Each table of site.toml (`deploy.production` for `[deploy.NAME]`) → its model."""
    found: dict[str, type[BaseModel]] = {}
    for name, field in Config.model_fields.items():
        if field.exclude:
            continue  # (`root`: where the file is, not a key)
        model = field.annotation
        if typing.get_origin(model) is dict:
            name, model = f"{name}.production", typing.get_args(model)[1]
        assert isinstance(model, type) and issubclass(model, BaseModel), (name, model)
        found[name] = model
    return found


def sections(text: str) -> dict[str, str]:
    """Each table's lines, by its name (commented tables too)."""
    heads = list(_HEADER.finditer(text))
    return {head.group(1): text[head.end():heads[i + 1].start() if i + 1 < len(heads)
                                else len(text)] for i, head in enumerate(heads)}


def written_value(section: str, key: str) -> str | None:
    """The value *key* is shown with in *section* (None: not there)."""
    found = re.search(rf"^#? ?{re.escape(key)} = (\S.*?)\s*(?:#.*)?$", section, re.M)
    return found.group(1) if found else None


def test_every_key_the_config_accepts_is_documented_with_its_default() -> None:
    text = (REPO / "site.toml").read_text(encoding="utf-8")
    assert text == example_site_toml()  # (what `sitegen init` writes)
    tables = sections(text)
    missing, wrong = [], []
    for table, model in section_models().items():
        assert table in tables, f"site.toml has no [{table}] section"
        for key, field in model.model_fields.items():
            shown = written_value(tables[table], key)
            if shown is None:
                missing.append(f"[{table}] {key}")
                continue
            if field.is_required() or field.default is None:
                continue  # (an example value: the comment says so)
            if tomllib.loads(f"value = {shown}")["value"] != field.default:
                wrong.append(f"[{table}] {key} = {shown} (the default is {field.default!r})")
    assert not missing, f"site.toml does not document {', '.join(missing)}"
    assert not wrong, f"site.toml shows a value other than the default: {'; '.join(wrong)}"
    config = tomllib.loads(text)  # (and the file, uncommented as it is, is a valid site)
    assert set(config) == {"site", "api", "analytics", "images", "search", "share_cards"}
