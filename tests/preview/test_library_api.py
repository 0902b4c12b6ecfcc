"""sitegen uses uvicorn through its public API only: `uvicorn`, `uvicorn.Config` and
`uvicorn.Server`, never a submodule such as `uvicorn.protocols` (internals that can change in
any release)."""

from __future__ import annotations

import ast
from pathlib import Path

import sitegen

_ALLOWED_NAMES = {"Config", "Server"}


def _uvicorn_uses(tree: ast.AST) -> list[str]:
    """Each import of *tree* that reaches past uvicorn's public names, as written."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.startswith("uvicorn.")]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.startswith("uvicorn."):
                found.append(node.module)
            elif node.module == "uvicorn":
                found += [f"uvicorn.{alias.name}" for alias in node.names
                          if alias.name not in _ALLOWED_NAMES]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == "uvicorn" and node.attr not in _ALLOWED_NAMES:
            found.append(f"uvicorn.{node.attr}")
    return found


def test_no_module_of_sitegen_reaches_into_uvicorn() -> None:
    root = Path(sitegen.__file__).parent
    uses = {str(path.relative_to(root)): _uvicorn_uses(ast.parse(path.read_text("utf-8")))
            for path in sorted(root.rglob("*.py"))}
    assert {path: found for path, found in uses.items() if found} == {}
    assert any(path.startswith("preview") for path in uses)  # (the walk found the modules)


def test_the_check_sees_each_way_of_reaching_in() -> None:
    for source in ("import uvicorn.protocols.http.h11_impl",
                   "from uvicorn.protocols.http.h11_impl import H11Protocol",
                   "from uvicorn import protocols", "import uvicorn\nx = uvicorn.protocols.http"):
        assert _uvicorn_uses(ast.parse(source)), source
    for source in ("import uvicorn", "from uvicorn import Config, Server",
                   "import uvicorn\nx = uvicorn.Config(None)"):
        assert not _uvicorn_uses(ast.parse(source)), source
