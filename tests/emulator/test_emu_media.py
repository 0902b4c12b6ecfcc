"""Demo media under /media/demo/: served without a key, never outside the media folder."""

from __future__ import annotations

from typing import Any

import pytest

from sitegen.emulator import media

pytestmark = pytest.mark.anyio


async def test_serves_a_media_file_without_key(client: Any,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(media, "_read", lambda name: b"<svg/>" if name == "ada.svg" else None)
    response = await client.get("/media/demo/ada.svg")
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/svg+xml"
    assert response.content == b"<svg/>"
    assert client.emulator.calls["GET /media/demo/{name}"] == 1
    assert client.emulator.requests == 0  # not an API call: no quota spent


@pytest.mark.parametrize("path", ["/media/demo/missing.png", "/media/demo/..%2Fdemo.py",
                                  "/media/demo/.hidden", "/media/demo/a%00b.png"])
async def test_unknown_or_unsafe_names_are_404(client: Any, path: str) -> None:
    response = await client.get(path)
    assert response.status_code == 404
    assert set(response.json()) == {"error", "details"}


def test_read_of_a_missing_file_is_none() -> None:
    assert media._read("no-such-file.png") is None
