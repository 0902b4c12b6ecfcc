"""`sitegen.fetch.import_httpx`: httpx without its command-line client's imports.

Each check runs in a fresh interpreter (the test process has long imported httpx).
click is installed (uvicorn needs it), so httpx's own `__init__` would import it and
pygments' lexers before failing on the missing `rich`.
"""

from __future__ import annotations

import subprocess
import sys


def _run(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_httpx_imported_without_its_cli_dependencies() -> None:
    out = _run(
        "import sys\n"
        "from sitegen.fetch import import_httpx\n"
        "import_httpx()\n"
        "import httpx\n"
        "print('click' in sys.modules, 'pygments.lexers' in sys.modules,"
        " 'httpx._main' in sys.modules, callable(httpx.main), hasattr(httpx, 'AsyncClient'))\n"
    )
    assert out == "False False False True True"


def test_plain_httpx_import_pulls_them_in() -> None:
    """The control: what the helper saves is really there to save."""
    out = _run("import sys, httpx\nprint('click' in sys.modules)\n")
    assert out == "True"


def test_the_cli_module_stays_importable_and_a_sync_uses_the_helper() -> None:
    out = _run(
        "import importlib.util, sys\n"
        "from sitegen.fetch.sync import demo_transport\n"
        "demo_transport()\n"
        "print('click' in sys.modules, importlib.util.find_spec('httpx._main') is not None)\n"
    )
    assert out == "False True"
