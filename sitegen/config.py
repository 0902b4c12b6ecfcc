"""site.toml → validated configuration (strict pydantic models).

Role: read one TOML file, validate every key at once (unknown keys and wrong types
are errors naming the key), resolve relative paths against the config file's
folder, and read API keys from the environment. It must never read a key from
site.toml, never print a key, and never make a request.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    ValidationError,
    field_validator,
)
from pydantic_core import CoreSchema, core_schema

from sitegen.errors import ConfigError

OBJECT_ID_PATTERN = r"^[0-9a-fA-F]{24}$"


class _HttpUrlText:
    """An http(s) URL with a host, checked and normalised as pydantic's `AnyHttpUrl`, kept as
    text (`str` of the parsed URL).

    pydantic's own URL types live in `pydantic.networks`, whose import pulls in
    `importlib.metadata` and the `email` package (~0.03 s of every build); the same
    core URL validator (same messages, same normalisation) costs nothing more.
    """

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any,
                                     handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(
            str, core_schema.url_schema(allowed_schemes=["http", "https"], host_required=True),
            serialization=core_schema.to_string_ser_schema())


HttpUrlText = Annotated[str, _HttpUrlText]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SiteSection(_Strict):
    """`[site]`: what the website is and how it is laid out."""

    title: str = Field(min_length=1)
    url: HttpUrlText
    description: str = ""
    language: str = Field(default="en", min_length=2, max_length=35)
    theme: str = Field(default="default", min_length=1)
    output: str = "_site"
    per_page: int = Field(default=10, ge=1, le=1000)
    permalink: str = "/{slug}/"
    feed_size: int = Field(default=20, ge=1, le=1000)

    @field_validator("permalink")
    @classmethod
    def _permalink_has_slug(cls, value: str) -> str:
        if "{slug}" not in value or not value.startswith("/") or not value.endswith("/"):
            raise ValueError("must start and end with '/' and contain {slug}, e.g. '/{slug}/'")
        return value

    @property
    def base_url(self) -> str:
        """The public base URL without a trailing slash."""
        return self.url.rstrip("/")


class ApiSection(_Strict):
    """`[api]`: where the content comes from."""

    url: HttpUrlText
    workspace: str = Field(pattern=OBJECT_ID_PATTERN)
    version: Literal["auto", "v2", "v1"] = "auto"
    key_env: str = Field(default="SITEGEN_API_KEY", min_length=1)
    cache_dir: str = ".sitegen"
    concurrency: int = Field(default=8, ge=1, le=64)
    timeout: float = Field(default=10.0, gt=0, le=300)
    retry_budget: float = Field(default=20.0, ge=0, le=600)
    max_retries: int = Field(default=5, ge=0, le=20)
    monthly_quota: int | None = Field(default=None, ge=0)
    schedule: str = "0 6 * * *"

    @field_validator("schedule")
    @classmethod
    def _schedule_is_cron(cls, value: str) -> str:
        from sitegen.quota import CronError, parse_schedule

        try:
            parse_schedule(value)
        except CronError as error:
            raise ValueError(f"not a cron schedule ({error}), e.g. '0 6 * * *'") from None
        return " ".join(value.split())

    @property
    def base_url(self) -> str:
        """The service base URL without a trailing slash."""
        return self.url.rstrip("/")


class AnalyticsSection(_Strict):
    """`[analytics]`: the page-view beacon."""

    enabled: bool = False
    key_env: str = Field(default="SITEGEN_ANALYTICS_KEY", min_length=1)
    site_slug: str = ""


class Config(_Strict):
    """The whole validated `site.toml`, plus where it lives."""

    site: SiteSection
    api: ApiSection
    analytics: AnalyticsSection = AnalyticsSection()
    root: Path = Field(default=Path("."), exclude=True)

    @property
    def cache_path(self) -> Path:
        """The content cache folder (`.sitegen/` beside site.toml by default)."""
        return (self.root / self.api.cache_dir).resolve()

    def output_path(self, override: str | None = None) -> Path:
        """The output folder: `-o` is relative to the cwd, `[site] output` to site.toml."""
        if override is not None:
            return Path(override).resolve()
        return (self.root / self.site.output).resolve()

    def theme_dir(self) -> Path:
        """Where a site-local theme of this name would live (`themes/<name>/`)."""
        return self.root / "themes" / self.site.theme

    def api_key(self) -> str:
        """The API key from the environment; a missing one is a ConfigError naming the variable."""
        value = os.environ.get(self.api.key_env, "").strip()
        if not value:
            raise ConfigError(
                f"the environment variable {self.api.key_env} is not set: export it with your "
                "workspace API key (or use --demo or --offline)"
            )
        return value

    def analytics_key(self) -> str | None:
        """The public beacon key from the environment, or None when unset."""
        value = os.environ.get(self.analytics.key_env, "").strip()
        return value or None


def _describe(error: ValidationError) -> str:
    parts: list[str] = []
    for item in error.errors():
        key = ".".join(str(p) for p in item["loc"]) or "(top level)"
        if item["type"] == "extra_forbidden":
            parts.append(f"unknown key '{key}' (remove it or check its spelling)")
        elif item["type"] == "missing":
            parts.append(f"missing required key '{key}'")
        else:
            parts.append(f"'{key}': {item['msg']}")
    return "; ".join(parts)


def parse_config(data: dict[str, object], root: Path, source: str = "site.toml") -> Config:
    """Validate an already-parsed TOML table; every problem is reported in one ConfigError."""
    try:
        return Config.model_validate({**data, "root": root.resolve()})
    except ValidationError as error:
        raise ConfigError(f"{source} is invalid: {_describe(error)}") from None


def load_config(path: Path) -> Config:
    """Read and validate `site.toml` at *path*."""
    if not path.is_file():
        raise ConfigError(
            f"no configuration at {path}: run `sitegen init` to create one, pass -c FILE, "
            "or use --demo"
        )
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path.name} is not valid TOML ({error}): fix the syntax") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read {path}: {error}") from None
    if "root" in data:
        raise ConfigError(f"{path.name} is invalid: unknown key 'root' (remove it)")
    return parse_config(data, path.parent, path.name)


DEMO_WORKSPACE_ID = "65f0c0ffee0123456789abcd"
DEMO_API_URL = "http://emulator.sitegen.invalid"


def demo_config(base: Config | None, root: Path) -> Config:
    """The configuration for `--demo`: the user's [site] when there is one, the demo's content.

    The API points at the in-process emulator; no key and no network are needed.
    """
    site: dict[str, object] = (
        base.site.model_dump(mode="json")
        if base is not None
        else {"title": "Northwind Field Notes", "url": "http://localhost:8000/",
              "description": "Slow travel, patient fermentation and quiet tooling"}
    )
    analytics: dict[str, object] = {"enabled": False}
    data: dict[str, object] = {
        "site": site,
        "api": {"url": DEMO_API_URL, "workspace": DEMO_WORKSPACE_ID, "version": "auto",
                "cache_dir": ".sitegen/demo"},
        "analytics": analytics,
    }
    return parse_config(data, base.root if base is not None else root, "demo configuration")


def resolve_config(path: str, demo: bool) -> Config:
    """The configuration a command runs with: `-c FILE`, or the demo's (with the user's [site]).

    With `--demo`, a site.toml that exists is used for its [site] section; one that does
    not exist is fine (the demo brings its own), but one that is invalid is still an error.
    """
    config_path = Path(path)
    if not demo:
        return load_config(config_path)
    base = load_config(config_path) if config_path.is_file() else None
    return demo_config(base, Path.cwd())
