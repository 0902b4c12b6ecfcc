"""How the preview builds: its configuration, its output folder, and the call into `run_build`.

Role: adapt `sitegen.build.run_build` to what the preview needs — a full build that may fetch,
and a render-only build from the content cache (`offline=True`, no request) for template, static
and configuration changes — and summarise each run in a `BuildSummary`. The preview builds into
its own folder, `.sitegen/preview/` beside site.toml, never into `[site] output`: a preview build
points its URLs at the local server and has the analytics beacon off, so it must never replace a
deployable build. This module must never write files itself (the writer does, inside run_build).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import httpx

from sitegen.config import Config, parse_config

PREVIEW_DIR = Path(".sitegen") / "preview"


def preview_output(config: Config) -> Path:
    """The folder the preview builds into and serves from: `.sitegen/preview/` beside site.toml."""
    return (config.root / PREVIEW_DIR).resolve()


def preview_config(config: Config, url: str) -> Config:
    """*config* as the preview builds it: URLs pointing at the local server, beacon off."""
    data: dict[str, Any] = config.model_dump(mode="json")
    data["site"]["url"] = url
    data["analytics"]["enabled"] = False
    return parse_config(data, config.root, "preview configuration")


@dataclass(frozen=True)
class BuildSummary:
    """What one preview build changed and how long it took."""

    written: int
    removed: int
    seconds: float

    @property
    def changed(self) -> bool:
        return bool(self.written or self.removed)


class Builder(Protocol):
    """Builds *config* into the preview folder; `fetch=False` renders from the cache only."""

    def __call__(self, config: Config, *, fetch: bool) -> BuildSummary: ...


def _count(report: Any, name: str) -> int:
    pages = getattr(report, "pages", None)
    value = pages.get(name) if isinstance(pages, dict) else getattr(pages, name, None)
    if value is None:
        value = getattr(report, f"pages_{name}", 0)
    if isinstance(value, list | tuple | set | frozenset):
        return len(value)
    return int(value or 0)


class SiteBuilder:
    """The real builder: `run_build` into the preview folder."""

    def __init__(self, output: Path, *, demo: bool, offline: bool,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.output = output
        self.demo = demo
        self.offline = offline
        self.transport = transport

    def __call__(self, config: Config, *, fetch: bool) -> BuildSummary:
        from sitegen.build import run_build

        started = time.perf_counter()
        report = run_build(config, output=self.output, offline=self.offline or not fetch,
                           refresh=False, demo=self.demo, strict=False, max_calls=None,
                           transport=self.transport)
        return BuildSummary(written=_count(report, "written"), removed=_count(report, "removed"),
                            seconds=time.perf_counter() - started)
