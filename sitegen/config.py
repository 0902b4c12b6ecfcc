"""site.toml → validated configuration (strict pydantic models).

Role: read one TOML file, validate every key at once (unknown keys and wrong types
are errors naming the key, in plain words; types are strict: `"8"` is not a number),
resolve relative paths against the config file's folder, and read API keys and the
one-build base URL (`SITEGEN_SITE_URL`, which `--base-url` sets) from the environment.
`build_config` is what `sitegen build` runs with, checked before any request: the
analytics key must not be the API key, and `[api] url` must not be `init`'s
placeholder. It must never read a key from site.toml, never print a key, and never
make a request.
"""

from __future__ import annotations

import os
import re
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

from sitegen.configdeploy import DeployTarget
from sitegen.configerrors import describe, syntax_error
from sitegen.errors import ConfigError
from sitegen.siteurl import SITE_URL_ENV

OBJECT_ID_PATTERN = r"^[0-9a-fA-F]{24}$"
#: A language code as BCP 47 and HTML's `lang` spell it (`en`, `pt-BR`, `zh-Hant-TW`).
LANGUAGE_PATTERN = r"^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*$"
#: A root-relative path of the site (redirects never point outside it).
_SITE_PATH = re.compile(r"^/(?:[A-Za-z0-9._~!$&'()*+,;=:@%-]+/?)*$")


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
            str, core_schema.url_schema(allowed_schemes=["http", "https"], host_required=True,
                                        strict=False),
            serialization=core_schema.to_string_ser_schema())


HttpUrlText = Annotated[str, _HttpUrlText]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _outside_hashed_folders(path: str) -> None:
    """A page may not live where hosts cache every file for a year (`/static/`, `/media/`,
    Pagefind's index: `outputnames.HASHED_FOLDERS`, files named by their hash)."""
    from sitegen.outputnames import HASHED_FOLDERS

    for folder in HASHED_FOLDERS:
        if path.lstrip("/").startswith(folder):
            raise ValueError(f"{path[:80]!r} is inside /{folder}, where hosts cache every file "
                             "for a year: choose a path outside it")


class SiteSection(_Strict):
    """`[site]`: what the website is and how it is laid out."""

    title: str = Field(min_length=1)
    url: HttpUrlText
    description: str = ""
    language: str = Field(default="en", max_length=35, pattern=LANGUAGE_PATTERN)
    theme: str = Field(default="default", min_length=1)
    output: str = "_site"
    per_page: int = Field(default=10, ge=1, le=1000)
    permalink: str = "/{slug}/"
    feed_size: int = Field(default=20, ge=1, le=1000)
    ai_disclosure: bool = True
    redirects: dict[str, str] = Field(default={})

    @field_validator("permalink")
    @classmethod
    def _permalink_has_slug(cls, value: str) -> str:
        if "{slug}" not in value or not value.startswith("/") or not value.endswith("/"):
            raise ValueError("must start and end with '/' and contain {slug}, e.g. '/{slug}/'")
        _outside_hashed_folders(value)
        return value

    @field_validator("redirects")
    @classmethod
    def _redirects_stay_inside(cls, value: dict[str, str]) -> dict[str, str]:
        for old, new in value.items():
            for path in (old, new):
                if not _SITE_PATH.match(path) or ".." in path.split("/"):
                    raise ValueError(f"{path[:80]!r} is not a path of this site: write "
                                     "root-relative paths such as '/old-post/' = '/new-post/'")
            _outside_hashed_folders(old)
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
            raise ValueError(f"must be a cron schedule ({error}), e.g. '0 6 * * *'") from None
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
    #: "session": the visitor id lives for the browser session (sessionStorage);
    #: "persistent": across visits (localStorage), for owners who have the visitors' consent.
    visitor: Literal["session", "persistent"] = "session"


class SearchSection(_Strict):
    """`[search]`: a Pagefind index of the articles and a `/search/` page."""

    enabled: bool = True


class SocialSection(_Strict):
    """`[social]`: the social posts' pages. The service gives a post no language: its page
    takes the promoted article's, else `language` here, else `[site] language`."""

    language: str | None = Field(default=None, max_length=35, pattern=LANGUAGE_PATTERN)


class ShareCardsSection(_Strict):
    """`[share_cards]`: a generated picture (1200×630) for each article or social post
    without an image of its own, its `og:image` (`sitegen.emit.sharecards`); `template`, a
    PNG or JPEG in the site folder the cards are drawn over."""

    enabled: bool = True
    template: str = ""


class ImagesSection(_Strict):
    """`[images]`: images fetched, checked and resized at build time (`sitegen.images`)."""

    enabled: bool = True
    #: The widths (pixels) of the `srcset` variants; an image is never made wider than it is.
    widths: list[Annotated[int, Field(ge=16, le=8192)]] = Field(
        default=[480, 960, 1600], min_length=1, max_length=8)
    #: Modern formats offered before the fallback (the original's own JPEG or PNG).
    formats: list[Literal["webp", "avif"]] = Field(default=["webp"], max_length=2)
    quality: int = Field(default=80, ge=1, le=100)
    max_bytes: int = Field(default=20_000_000, ge=1024, le=1_000_000_000)
    max_pixels: int = Field(default=50_000_000, ge=1024, le=1_000_000_000)
    concurrency: int = Field(default=8, ge=1, le=64)
    timeout: float = Field(default=20.0, gt=0, le=600)
    #: Seconds the images stage may spend fetching in one build; the images not fetched by
    #: then are linked where they live and fetched by a later build.
    budget: float = Field(default=60.0, gt=0, le=86_400)
    #: Seconds of CPU one image's decoding and resizing may take; a slower image is refused
    #: (and remembered: it would be as slow again).
    decode_seconds: float = Field(default=30.0, gt=0, le=3600)
    #: Seconds the whole images stage may take in one build, downloads and processing; the
    #: images not made by then are linked where they live and made by a later build.
    deadline: float = Field(default=600.0, gt=0, le=86_400)

    @field_validator("widths", "formats")
    @classmethod
    def _no_repeats(cls, value: list[Any]) -> list[Any]:
        if len(set(value)) != len(value):
            raise ValueError("must not name a value twice")
        return sorted(value) if value and isinstance(value[0], int) else value


class Config(_Strict):
    """The whole validated `site.toml`, plus where it lives."""

    site: SiteSection
    api: ApiSection
    analytics: AnalyticsSection = AnalyticsSection()
    #: `[deploy.NAME]`: where `sitegen deploy` publishes (credentials from the env only).
    deploy: dict[str, DeployTarget] = Field(default={})
    search: SearchSection = SearchSection()
    share_cards: ShareCardsSection = ShareCardsSection()
    images: ImagesSection = ImagesSection()
    social: SocialSection = SocialSection()
    root: Path = Field(default=Path("."), exclude=True, strict=False)

    @property
    def cache_path(self) -> Path:
        """The content cache folder (`.sitegen/` beside site.toml by default)."""
        return (self.root / self.api.cache_dir).resolve()

    def output_path(self, override: str | None = None) -> Path:
        """The output folder: `-o` is relative to the cwd, `[site] output` to site.toml."""
        if override is not None:
            return Path(override).resolve()
        return (self.root / self.site.output).resolve()

    def check_output(self, output: Path) -> None:
        """Refuse an output folder holding sources, the site's or any (`sitegen.folders`)."""
        from sitegen.folders import check_output

        check_output(output, site=self.root, cache=self.cache_path)

    def theme_dir(self) -> Path:
        """Where a site-local theme of this name would live (`themes/<name>/`)."""
        return self.root / "themes" / self.site.theme

    def api_key(self) -> str:
        """The API key from the environment; a missing or empty one is a ConfigError naming the
        variable."""
        given = os.environ.get(self.api.key_env)
        value = (given or "").strip()
        if given is not None and not value:
            raise ConfigError(
                f"the environment variable {self.api.key_env} is empty: set it to your "
                f"workspace API key (export {self.api.key_env}=...), or use --demo or --offline"
            )
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


def parse_config(data: dict[str, object], root: Path, source: str = "site.toml") -> Config:
    """Validate an already-parsed TOML table; every problem is reported in one ConfigError."""
    try:
        return Config.model_validate({**data, "root": root.resolve()})
    except ValidationError as error:
        raise ConfigError(f"{source} is invalid: {describe(error, Config)}") from None


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
        raise ConfigError(syntax_error(path.name, error)) from None
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
    if base is not None:  # the user's [search] choice holds for the demo's content too
        data["search"] = base.search.model_dump(mode="json")
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


#: The `[api] url` that `sitegen init` writes: a placeholder, never a real service.
PLACEHOLDER_API_URL = "https://cas.example.com"


def with_site_url(config: Config, url: str) -> Config:
    """*config* with `[site] url` replaced by *url* (validated like the key itself)."""
    data = config.model_dump(mode="json")
    data["site"]["url"] = url
    try:
        return Config.model_validate({**data, "root": config.root})
    except ValidationError:
        raise ConfigError(
            f"the base URL {url!r} (from --base-url or {SITE_URL_ENV}) is not an http(s) URL "
            "with a host: pass one such as https://user.github.io/repository/") from None


def check_keys(config: Config, *, demo: bool = False) -> None:
    """Refuse an analytics key equal to the API key: the beacon key is public in every page."""
    if demo:
        return
    api_key = os.environ.get(config.api.key_env, "").strip()
    analytics_key = config.analytics_key()
    if api_key and analytics_key is not None and analytics_key == api_key:
        raise ConfigError(
            f"the analytics key in {config.analytics.key_env} equals the API key in "
            f"{config.api.key_env}: the analytics key is published in every page, so set "
            f"{config.analytics.key_env} to the workspace's separate beacon-only key")


def check_api_url(config: Config) -> None:
    """Refuse to send requests to the placeholder `[api] url` that `sitegen init` wrote."""
    if config.api.base_url == PLACEHOLDER_API_URL:
        raise ConfigError(
            f"[api] url is still the placeholder {PLACEHOLDER_API_URL} that `sitegen init` "
            "wrote: replace the placeholder [api] url in site.toml with your service's "
            "address (or try the demo content with --demo)")


def build_config(path: str, demo: bool, *, offline: bool = False) -> Config:
    """The configuration `sitegen build` runs with, checked before any request is made.

    `resolve_config`, with `[site] url` from `SITEGEN_SITE_URL` when set (`--base-url`),
    the analytics key checked against the API key, and, when the build will make
    requests, `[api] url` checked against `init`'s placeholder.
    """
    config = resolve_config(path, demo)
    override = os.environ.get(SITE_URL_ENV, "").strip()
    if override:
        config = with_site_url(config, override)
    check_keys(config, demo=demo)
    if not demo and not offline:
        check_api_url(config)
    return config
