"""httpx, imported without its command-line client: `from sitegen.fetch.lean_httpx import httpx`.

Role: the one place sitegen imports httpx. httpx's `__init__` tries `from ._main import
main`, which imports click and pygments' lexers (0.010-0.014 s, about half of httpx's own
import) and then, without `rich`, fails and falls back to a stub `main` anyway; sitegen
never runs that client. Importing httpx here with `httpx._main` marked missing gives the
same module without those imports; `httpx._main` stays importable afterwards.

It must never change httpx itself (only which of its optional parts load), and does nothing
when something imported httpx first.
"""

import sys

if "httpx" not in sys.modules and "httpx._main" not in sys.modules:
    sys.modules["httpx._main"] = None  # type: ignore[assignment]  # its import raises ImportError
    try:
        import httpx as httpx
    finally:
        if sys.modules.get("httpx._main", 0) is None:
            del sys.modules["httpx._main"]
else:
    import httpx as httpx

__all__ = ["httpx"]
