"""Test helpers of the images tests: a site config, the demo workspace with one article's body
set, a build through the in-process emulator, the files of an output.

The image fetcher reaches a loopback address only at the service's exact origin, so a site
whose images live on the fake image host names that host's origin as `[api] url`
(`config(root, api=host.origin)`), and the build's transport (`ServiceTransport`) answers the
service's own paths from the in-process emulator and sends every other path to the host."""

from __future__ import annotations

import asyncio
import copy
import json
import re
from pathlib import Path
from typing import Any

import httpx

from sitegen.build import BuildOptions, run_build
from sitegen.config import Config, parse_config
from sitegen.emulator.app import create_app
from sitegen.emulator.demo import load_demo
from sitegen.fetch.stored import open_config_store
from sitegen.images.failures import WAIT_KIND
from sitegen.report import BuildReport

API = "http://127.0.0.1:9"  # the in-process emulator answers through its transport
IMG = re.compile(r"<img\b[^>]*>")


class ServiceTransport(httpx.AsyncBaseTransport):
    """The service at `[api] url`: its API and `/media/demo/` answered by the in-process
    emulator, any other path by whatever listens there (the fake image host, over loopback)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.emulator = httpx.ASGITransport(app=create_app(data))
        #: One connection pool per event loop (each fetch runs its own `asyncio.run`).
        self.web: dict[asyncio.AbstractEventLoop, httpx.AsyncHTTPTransport] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith(("/api/", "/media/demo/")):
            return await self.emulator.handle_async_request(request)
        loop = asyncio.get_running_loop()
        web = self.web.get(loop) or self.web.setdefault(loop, httpx.AsyncHTTPTransport(
            verify=False))  # (plain http on loopback)
        response = await web.handle_async_request(request)
        try:
            body = b"".join([chunk async for chunk in response.aiter_raw()])
        finally:
            await response.aclose()
        return httpx.Response(response.status_code, headers=response.headers,
                              stream=httpx.ByteStream(body))


def config(root: Path, theme: str = "default", api: str = API, **images: object) -> Config:
    return parse_config({
        "site": {"title": "Pictures", "url": "https://pics.example.test/", "theme": theme,
                 "description": "A site with pictures"},
        "api": {"url": api, "workspace": "65f0c0ffee0123456789abcd", "cache_dir": ".store"},
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
    return run_build(cfg, BuildOptions(output=out, transport=ServiceTransport(data), **options))


def page_of(out: Path) -> str:
    return (out / "picture-test" / "index.html").read_text()


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.startswith(".sitegen")}


def expire_waits(cfg: Config) -> None:
    """Make every passing failure's wait over, as if its hour had passed (through the
    store, which seals what it keeps)."""
    with open_config_store(cfg) as store:
        keys = [str(key) for (key,) in store.db.execute(
            "SELECT key FROM derived WHERE kind = ?", (WAIT_KIND,)).fetchall()]
        rows = {key: json.loads(value) for key, value in store.derived(WAIT_KIND, keys).items()}
        assert len(rows) == len(keys), "a stored wait did not verify"
        for row in rows.values():
            row["until"] = 0.0
        store.save_derived(WAIT_KIND, {k: json.dumps(r).encode() for k, r in rows.items()},
                           keys)
