"""The content source: API client, v2/v1 readers, records, cache and sync.

`import_httpx` imports httpx without its command-line client: httpx's `__init__` tries
`from ._main import main`, which imports click and pygments' lexers (0.014 s, a fifth
of the network stack's imports in a re-sync) and, without `rich`, fails and falls back
to a stub `main` anyway. A sync never runs that client.
"""

import sys


def import_httpx() -> None:
    """Import httpx as its `__init__` does when its CLI's extras are missing (see above).

    A no-op once httpx is imported; `httpx._main` stays importable afterwards.
    """
    if "httpx" in sys.modules or "httpx._main" in sys.modules:
        return
    sys.modules["httpx._main"] = None  # type: ignore[assignment]  # import raises ImportError
    try:
        import httpx  # noqa: F401
    finally:
        if sys.modules.get("httpx._main", 0) is None:
            del sys.modules["httpx._main"]
