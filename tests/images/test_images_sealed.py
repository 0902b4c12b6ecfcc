"""Cached images sealed with another key (the API key rotated, or none in the environment):
an offline build cannot verify them and cannot fetch them, so it says so in one line and
shows them as refused images, never as links to the service's own media; an online build
fetches them again."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sitegen.build import BuildOptions, run_build
from tests.images.sites import API, IMG, ServiceTransport, config, page_of, workspace

MEDIA = "/media/demo/rail-lines.jpg"


@pytest.mark.parametrize("key", ["x", None])
def test_an_offline_build_with_another_key_never_links_the_service_s_media(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str | None) -> None:
    """Old code: exit 0, no word, `media/` emptied and every `<img>` and `og:image` at
    `[api] url`'s `/media/demo/`."""
    data = workspace(f"Before.\n\n![Rails at dusk]({MEDIA})\n\nAfter.\n")
    cfg, out = config(tmp_path), tmp_path / "_site"
    first = run_build(cfg, BuildOptions(output=out, transport=ServiceTransport(data)))
    images = first.images["processed"]
    assert images >= 10 and 'src="/media/' in page_of(out)
    if key is None:
        monkeypatch.delenv("SITEGEN_API_KEY")
    else:
        monkeypatch.setenv("SITEGEN_API_KEY", key)
    report = run_build(cfg, BuildOptions(output=out, offline=True))
    said = [w for w in report.warning_messages if "could not be verified" in w]
    assert said == [f"{images} cached image(s) could not be verified (sealed with another "
                    "key, or changed) and cannot be fetched offline: the pages show them as "
                    "images that cannot be used; build online once to fetch them again"], \
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
    if key is not None:  # online once with the new key: fetched and made again
        again = run_build(cfg, BuildOptions(output=out, transport=ServiceTransport(data)))
        assert not [w for w in again.warning_messages if "could not be verified" in w]
        assert again.images["processed"] == images and again.images["failed"] == 0
        assert 'src="/media/' in page_of(out) and "Rails at dusk" in page_of(out)
