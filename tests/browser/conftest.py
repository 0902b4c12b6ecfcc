"""What the browser tests share: one headless Chromium per test module (Debian's, through
Playwright: `served.chromium`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser

from tests.browser.served import chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """A Chromium for the module's tests."""
    with chromium() as launched:
        yield launched
