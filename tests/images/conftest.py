"""Fixtures of the images tests: an API key that must never reach an image host, and the fake
image host on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.images.imagehost import ImageHost, image_host


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SITEGEN_API_KEY", "test-key-never-sent-to-image-hosts")


@pytest.fixture()
def host() -> Iterator[ImageHost]:
    with image_host() as running:
        yield running
