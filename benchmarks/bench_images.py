"""Benchmark the images stage: cold and warm builds and the output's bytes, images on vs off.

Generates an N-article workspace (default 4,000; `python -m sitegen.emulator.generator`'s
`generate_workspace`) and post-processes its JSON so that a third of the published
articles open with an image, and every author and social post image points at a fake
image host on 127.0.0.1 (a real HTTP server in a thread, each path a distinct 1200×675
JPEG drawn with Pillow) whose origin is the sites' `[api] url` (the image fetcher reaches a
loopback address only at the service's exact origin; the in-process emulator answers the
API's paths, `tests/images/sites.ServiceTransport`). For `[images] enabled = true` and
`false`, in fresh folders:
a cold build (sync through the in-process emulator, every image fetched and processed,
every page rendered), a warm build (`--offline`, nothing changed: no image request) and a
CI build (`--offline` into an empty output, the store kept, as a scheduled CI run restores
only `.sitegen/`: the variants come from the store, nothing is encoded again).
Prints wall seconds, image requests, the output's files and bytes (and the `/media/`
share). Nothing is written inside the repository.

    .venv/bin/python benchmarks/bench_images.py [--articles 4000] [--folder DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

def jpeg_for(path: str) -> bytes:
    """A distinct, photo-sized JPEG for *path* (colour bands from its hash)."""
    from PIL import Image, ImageDraw

    seed = hashlib.sha256(path.encode()).digest()
    image = Image.new("RGB", (1200, 675), tuple(seed[:3]))
    draw = ImageDraw.Draw(image)
    for band in range(8):
        colour = tuple(seed[3 + band * 3: 6 + band * 3])
        draw.rectangle((band * 150, band * 40, band * 150 + 300, 675), fill=colour)  # type: ignore[arg-type]
    draw.ellipse((400, 150, 800, 550), fill=tuple(seed[27:30]))  # type: ignore[arg-type]
    out = io.BytesIO()
    image.save(out, "JPEG", quality=85)
    return out.getvalue()


class Host:
    """The fake image host: every `/img/...` path is a JPEG; requests are counted."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        host = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                host.hits[self.path] += 1
                body = jpeg_for(self.path)
                self.send_response(200)
                self.send_header("content-type", "image/jpeg")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        class Server(ThreadingHTTPServer):
            request_queue_size = 128
            daemon_threads = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/img/{name}.jpg"


def workspace(articles: int, seed: int, host: Host) -> dict[str, Any]:
    """The generated workspace, its images pointed at *host*, a third of articles with one."""
    from sitegen.emulator.generator import generate_workspace

    data = generate_workspace(articles, seed=seed)
    for number, article in enumerate(data["articles"]):
        article["blocks"] = [b for b in article.get("blocks") or [] if b.get("type") != "image"]
        if number % 3 == 0:
            article["content"] = (f"![A picture for article {number}]"
                                  f"({host.url(f'a{number}')})\n\n" + article["content"])
            if article["blocks"]:
                article["blocks"].insert(0, {"type": "image", "url": host.url(f"a{number}"),
                                             "caption": f"A picture for article {number}"})
    for author in data["authorIdentities"]:
        if author.get("imageUrl"):
            author["imageUrl"] = host.url("author-" + author["id"])
    for post in data.get("socialPosts", []):
        post["images"] = {slot: host.url(f"social-{post['id']}-{slot}")
                          for slot in post.get("images") or {}}
    return data


def site(folder: Path, data: dict[str, Any], images: bool, api: str) -> Any:
    from sitegen.config import parse_config

    folder.mkdir(parents=True, exist_ok=True)
    return parse_config({
        "site": {"title": "Bench", "url": "https://bench.example.test/",
                 "description": "Images benchmark"},
        "api": {"url": api, "workspace": data["workspace"]["id"]},
        "images": {"enabled": images},
    }, folder)


def output_size(root: Path) -> tuple[int, int, int]:
    """(files, bytes, bytes under media/) of an output folder."""
    files = total = media = 0
    for path in root.rglob("*"):
        if path.is_file():
            size = path.stat().st_size
            files, total = files + 1, total + size
            if path.relative_to(root).parts[0] == "media":
                media += size
    return files, total, media


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--articles", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--folder", type=Path, default=None)
    args = parser.parse_args()

    from sitegen.build import BuildOptions, run_build
    from tests.images.sites import ServiceTransport

    os.environ.setdefault("SITEGEN_API_KEY", "bench-key")
    host = Host()
    data = workspace(args.articles, args.seed, host)
    shown = sum(1 for number, a in enumerate(data["articles"]) if number % 3 == 0
                and a["status"] == "published")
    print(f"{args.articles} articles, {shown} published with an image; "
          f"load average {os.getloadavg()[0]:.2f}")
    base = args.folder or Path(tempfile.mkdtemp(prefix="bench-images-"))
    print(f"{'images':<7} {'build':<5} {'seconds':>8} {'img req':>8} {'files':>7} "
          f"{'MB':>8} {'media MB':>9}")
    for enabled in (False, True):
        folder = base / ("on" if enabled else "off")
        config = site(folder, data, enabled, f"http://127.0.0.1:{host.port}")
        out = folder / "_site"
        for label, options in (
                ("cold", {"transport": ServiceTransport(data)}),
                ("warm", {"offline": True}), ("ci", {"offline": True})):
            if label == "ci":
                shutil.rmtree(out)
            before = sum(host.hits.values())
            started = time.perf_counter()
            report = run_build(config, BuildOptions(output=out, **options))
            seconds = time.perf_counter() - started
            requests = sum(host.hits.values()) - before
            files, total, media = output_size(out)
            print(f"{'on' if enabled else 'off':<7} {label:<5} {seconds:>8.2f} {requests:>8} "
                  f"{files:>7} {total / 1e6:>8.1f} {media / 1e6:>9.1f}"
                  f"   ({report.images or 'images off'}; stages "
                  + ", ".join(f"{k} {v:.2f}" for k, v in report.timings.items()) + ")")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
