"""Test helper: a workspace synced into a site's own store (as `sitegen fetch` would)."""

from __future__ import annotations

from typing import Any

from sitegen.config import Config
from sitegen.emulator.demo import demo_transport
from sitegen.fetch.stored import open_config_store
from sitegen.fetch.sync import sync
from sitegen.workspace import Workspace


def synced(config: Config, key: str = "demo", **options: Any) -> Workspace:
    """Sync *config*'s workspace into its store (the demo emulator unless a transport is given)."""
    options.setdefault("transport", demo_transport())
    with open_config_store(config) as store:
        return sync(config, store, key=key, **options).workspace
