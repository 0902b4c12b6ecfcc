"""A generated workspace's images resolve at the emulator serving it: `--strict` passes.

`python -m sitegen.emulator.generator` names its images root-relative, so they live at
whichever `sitegen emulate` serves the file; the emulator draws them. Built as users would:
the generator, the emulator and `sitegen build --strict` each a command of their own.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image

from sitegen.emulator.drawn import drawn_jpeg, size_for
from sitegen.emulator.generator import generate_workspace
from tests.emulator.running import BIN, KEY, Emulate, read_json, write_site


def image_urls(data: dict[str, Any]) -> set[str]:
    """Every image URL a workspace names: block images, author pictures, social images."""
    urls = {block["url"] for article in data["articles"] for block in article["blocks"]
            if block["type"] == "image"}
    urls |= {author["imageUrl"] for author in data["authorIdentities"] if author["imageUrl"]}
    urls |= {url for post in data["socialPosts"] for url in post["images"].values() if url}
    return urls


@pytest.mark.timeout(900)
def test_a_generated_500_article_workspace_builds_strict_with_its_images(
        tmp_path: Path) -> None:
    path = tmp_path / "workspace.json"
    subprocess.run([sys.executable, "-m", "sitegen.emulator.generator", "--articles", "500",
                    "-o", str(path)], check=True, timeout=300)
    data = read_json(path)
    urls = image_urls(data)
    assert len(urls) > 100 and all(url.startswith("/media/generated/") for url in urls)
    with Emulate("--data", str(path), cwd=tmp_path) as emulator:
        with httpx.Client(base_url=emulator.url, timeout=30) as client:
            for url in sorted(urls):
                answer = client.get(url)
                assert answer.status_code == 200, url
                assert answer.headers["content-type"] == "image/jpeg"
                with Image.open(io.BytesIO(answer.content)) as image:
                    assert image.format == "JPEG" and image.size == size_for(url.rsplit("/", 1)[1])
        config = write_site(tmp_path / "site", emulator.url, data["workspace"]["id"],
                            images=True, search=True)
        built = subprocess.run(
            [str(BIN / "sitegen"), "build", "--strict", "--report", "report.json"],
            cwd=config.parent, capture_output=True, text=True, timeout=600,
            env={**os.environ, "SITEGEN_API_KEY": KEY, "NO_COLOR": "1"})
    lines = (built.stdout + built.stderr).splitlines()
    assert built.returncode == 0, lines[-15:]
    assert [line for line in lines if line.startswith("warning:")] == []
    report = read_json(config.parent / "report.json")
    assert report["warnings"] == [] and report["images"]["failed"] == 0
    assert report["images"]["processed"] > 100
    assert any((config.parent / "_site" / "media").glob("*.webp"))


def test_the_generator_names_no_other_host_and_stays_deterministic() -> None:
    data = generate_workspace(120, seed=4)
    urls = image_urls(data)
    assert urls and all(url.startswith("/media/generated/") and url.endswith(".jpg")
                        for url in urls)
    assert "images.example.com" not in str(data)
    assert data == generate_workspace(120, seed=4)
    name = sorted(urls)[0].rsplit("/", 1)[1]
    assert drawn_jpeg(name) == drawn_jpeg.__wrapped__(name)  # the same name, the same bytes
