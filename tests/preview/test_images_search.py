"""Images and search work in the preview as in the built site (#28): the demo, built by the
preview's builder and served by the preview server on loopback, answers every `/media/` file
its pages name and Pagefind's script, entry, wasm and the search page."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from sitegen.config import demo_config
from sitegen.preview.builder import SiteBuilder, preview_config, preview_output
from sitegen.preview.reload import ReloadChannel

from .conftest import serving

MEDIA = re.compile(r'(?:src|srcset)="([^"]*/media/[^"]+)"')


def test_the_preview_serves_the_demo_s_images_and_its_search(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    base = demo_config(None, site)
    output = preview_output(base)
    output.mkdir(parents=True)
    with serving(output, ReloadChannel()) as server:
        builder = SiteBuilder(output, demo=True, offline=False)
        builder(preview_config(base, server.url), fetch=True)
        with httpx.Client(base_url=server.url.rstrip("/"), timeout=30) as web:
            home = web.get("/")
            assert home.status_code == 200 and "<picture>" in home.text
            named = {part.split(" ")[0] for found in MEDIA.findall(home.text)
                     for part in found.split(", ")}
            assert named and all(path.startswith("/media/") for path in named), named
            for path in sorted(named):
                answer = web.get(path)
                assert answer.status_code == 200, path
                assert answer.headers["content-type"] in ("image/webp", "image/avif",
                                                          "image/jpeg", "image/png"), path
                assert answer.content == (output / path.lstrip("/")).read_bytes()
            shards = web.get("/pagefind/shards.json").json()["languages"]
            shard = shards["en"]["shards"][0]
            script = web.get(f"/pagefind/{shard}/pagefind.js")
            assert script.status_code == 200 and "javascript" in script.headers["content-type"]
            assert script.content == (output / "pagefind" / shard / "pagefind.js").read_bytes()
            entry = web.get(f"/pagefind/{shard}/pagefind-entry.json")
            assert entry.status_code == 200 and '"languages"' in entry.text
            wasm = next((output / "pagefind" / shard).glob("wasm.*.pagefind"))
            assert web.get(f"/pagefind/{shard}/{wasm.name}").content == wasm.read_bytes()
            search = web.get("/search/")
            assert search.status_code == 200 and 'data-bundle="/pagefind/"' in search.text
            assert web.get("/pagefind/pagefind-ui.js").status_code == 200
