"""Test helpers of the images tests: a site config, the demo workspace with one article's body
set, a build through the in-process emulator, the files of an output."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import httpx

from sitegen.build import BuildOptions, run_build
from sitegen.config import Config, parse_config
from sitegen.emulator.app import create_app
from sitegen.emulator.demo import load_demo
from sitegen.report import BuildReport

API = "http://127.0.0.1:9"  # the in-process emulator answers through its transport
IMG = re.compile(r"<img\b[^>]*>")


def config(root: Path, theme: str = "default", **images: object) -> Config:
    return parse_config({
        "site": {"title": "Pictures", "url": "https://pics.example.test/", "theme": theme,
                 "description": "A site with pictures"},
        "api": {"url": API, "workspace": "65f0c0ffee0123456789abcd", "cache_dir": ".store"},
        "images": {"timeout": 2.0, **images},  # (slow.png answers after SLOW_SECONDS: 4)
    }, root)


def workspace(content: str) -> dict[str, Any]:
    """The demo workspace with its first published markdown article's body set to *content*."""
    data = copy.deepcopy(load_demo())
    for article in data["articles"]:
        if article["status"] == "published" and not article.get("blocks"):
            article["content"] = content
            article["title"] = "The picture test"
            article["slug"] = "picture-test"
            break
    return data


def build(cfg: Config, out: Path, data: dict[str, Any], **options: Any) -> BuildReport:
    transport = httpx.ASGITransport(app=create_app(data))
    return run_build(cfg, BuildOptions(output=out, transport=transport, **options))


def page_of(out: Path) -> str:
    return (out / "picture-test" / "index.html").read_text()


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.startswith(".sitegen")}
