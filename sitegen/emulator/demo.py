"""The bundled demo workspace: the content `--demo` and a bare `sitegen emulate` serve.

Role: read `sitegen/emulator/data/demo-workspace.json` through `importlib.resources`, so it is
found inside an installed wheel as well as in a source checkout. It must never write anything or
reach the network.
"""

from __future__ import annotations

import json
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import httpx

from sitegen.errors import SitegenError

DEMO_FILE = "demo-workspace.json"


def demo_resource() -> Traversable:
    """The packaged demo workspace file (it may be missing from a broken install)."""
    return resources.files("sitegen.emulator").joinpath("data", DEMO_FILE)


def load_demo() -> dict[str, Any]:
    """The bundled demo workspace as a JSON object, in the format the emulator serves."""
    resource = demo_resource()
    try:
        text = resource.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        raise SitegenError(f"the bundled demo workspace ({DEMO_FILE}) is missing from this "
                           "installation; reinstall sitegen or pass --data FILE") from None
    try:
        data = json.loads(text)
    except ValueError as error:
        raise SitegenError(f"the bundled demo workspace ({DEMO_FILE}) is not valid JSON "
                           f"({error}); reinstall sitegen") from None
    if not isinstance(data, dict) or not isinstance(data.get("workspace"), dict):
        raise SitegenError(f"the bundled demo workspace ({DEMO_FILE}) has no 'workspace' "
                           "object; reinstall sitegen")
    return data


def demo_transport() -> httpx.AsyncBaseTransport:
    """The in-process emulator over the bundled demo workspace (`--demo`; its key is
    `sitegen.fetch.sync.DEMO_KEY`)."""
    from sitegen.emulator.app import create_app

    return httpx.ASGITransport(app=create_app(load_demo()))
