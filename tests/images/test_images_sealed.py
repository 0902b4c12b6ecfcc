"""Cached images that do not verify (edited in the cache, or sealed with another key): an
offline build cannot fetch them again, so it says so in one line and shows them as refused
images, never as links to the service's own media; an online build fetches them again. (A
whole store sealed with another key is refused offline: `tests/test_store_trust.py`.)"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from sitegen.build import BuildOptions, run_build
from tests.images.sites import API, IMG, ServiceTransport, config, page_of, workspace

MEDIA = "/media/demo/rail-lines.jpg"


def _tamper(store: Path, tables: str) -> int:
    """Spoil the seal of every image row of *tables* ("derived", "images" or both): as an
    edited cache, or one sealed with another key, looks to the build."""
    changed = 0
    with sqlite3.connect(store) as db:
        if "derived" in tables:
            changed += db.execute(
                "UPDATE derived SET value = zeroblob(32) || substr(value, 33) "
                "WHERE kind IN ('image', 'imageinfo', 'imagevariants')").rowcount
        if "images" in tables:
            changed += db.execute("UPDATE images SET tag = zeroblob(32)").rowcount
    return changed


@pytest.mark.parametrize("tables", ["derived", "images", "derived images"])
def test_an_offline_build_whose_cached_images_do_not_verify_never_links_the_service_s_media(
        tmp_path: Path, tables: str) -> None:
    """Old code (another key: the cached images no longer verified): exit 0, no word,
    `media/` emptied and every `<img>` and `og:image` at `[api] url`'s `/media/demo/`."""
    data = workspace(f"Before.\n\n![Rails at dusk]({MEDIA})\n\nAfter.\n")
    cfg, out = config(tmp_path), tmp_path / "_site"
    first = run_build(cfg, BuildOptions(output=out, transport=ServiceTransport(data)))
    images = first.images["processed"]
    assert images >= 10 and 'src="/media/' in page_of(out)
    assert _tamper(tmp_path / ".store" / "store.sqlite", tables) >= images
    report = run_build(cfg, BuildOptions(output=out, offline=True))
    said = [w for w in report.warning_messages if "cannot be fetched offline" in w]
    assert said == ([f"{images} cached image(s) could not be verified (sealed with another "
                     "key, or changed) and cannot be fetched offline: the pages show them as "
                     "images that cannot be used; build online once to fetch them again"]
                    if "images" not in tables else
                    [f"{images} image(s) of the service were never fetched, or their record in "
                     "the store did not verify, and cannot be fetched offline: the pages show "
                     "them as images that cannot be used; build online once to fetch them"]), \
        report.warning_messages
    assert not [w for w in report.warning_messages if "cannot be used:" in w]  # (one line)
    assert report.images["failed"] >= images
    html = page_of(out)
    assert "Rails at dusk" in html  # (its alt text: what a refused relative image shows)
    for page in out.rglob("*.html"):
        text = page.read_text()
        assert f"{API}/media/" not in text, page
        assert not [img for img in IMG.findall(text) if "/media/" in img], page
        assert not re.findall(r'property="og:image" content="[^"]*media', text), page
    # online once: fetched and made again
    again = run_build(cfg, BuildOptions(output=out, transport=ServiceTransport(data)))
    assert not [w for w in again.warning_messages if "could not be verified" in w]
    assert again.images["processed"] == images and again.images["failed"] == 0
    assert 'src="/media/' in page_of(out) and "Rails at dusk" in page_of(out)
