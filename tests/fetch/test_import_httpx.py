"""`sitegen.fetch.lean_httpx`: httpx without its command-line client's imports.

Each check runs in a fresh interpreter (the test process has long imported httpx).
click is installed (uvicorn needs it), so httpx's own `__init__` would import it and
pygments' lexers before failing on the missing `rich`.
"""

from __future__ import annotations

import subprocess
import sys

import pytest


def _run(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_httpx_imported_without_its_cli_dependencies() -> None:
    out = _run(
        "import sys\n"
        "from sitegen.fetch.lean_httpx import httpx\n"
        "import httpx as plain\n"
        "print('click' in sys.modules, 'pygments.lexers' in sys.modules,"
        " 'httpx._main' in sys.modules, callable(httpx.main), hasattr(httpx, 'AsyncClient'),"
        " httpx is plain)\n"
    )
    assert out == "False False False True True True"


def test_plain_httpx_import_pulls_them_in() -> None:
    """The control: what the module saves is really there to save."""
    out = _run("import sys, httpx\nprint('click' in sys.modules)\n")
    assert out == "True"


@pytest.mark.parametrize("module", [
    "sitegen.fetch.v2",  # a re-sync's first network import (session 13 missed it)
    "sitegen.fetch.v1",
    "sitegen.fetch.client",
    "sitegen.fetch.transport",
    "sitegen.digest",
    "sitegen.preview.builder",
])
def test_every_module_that_talks_http_takes_the_lean_import(module: str) -> None:
    out = _run(
        "import importlib, sys\n"
        f"importlib.import_module({module!r})\n"
        "print('httpx' in sys.modules, 'click' in sys.modules)\n"
    )
    assert out == "True False"


def test_the_cli_module_stays_importable_and_a_sync_uses_the_helper() -> None:
    out = _run(
        "import importlib.util, sys\n"
        "from sitegen.fetch.sync import demo_transport\n"
        "demo_transport()\n"
        "print('click' in sys.modules, importlib.util.find_spec('httpx._main') is not None)\n"
    )
    assert out == "False True"
