"""Fixtures for the render tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from render_factory import make_config  # noqa: E402

from sitegen.config import Config  # noqa: E402


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return make_config(tmp_path)
