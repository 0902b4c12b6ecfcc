"""The house's layers are a contract: no import of sitegen runs back up them.

The layers are the flow of a build (ARCHITECTURE.md, "Layers"): commands on top, then the
tools beside the build (preview, deploy, digest, the emulator), the build's recipe, the
emitter, the renderer, the images stage, the model, the fetcher, the store, and the base
(config, errors, URLs, logging). A module may import its own layer or any below it, never
one above: every `import` and `from … import` of every module counts, those inside
functions and under `TYPE_CHECKING` too. A few leaf modules of constants and parsing
(`SHARED_LEAVES`), which import nothing of sitegen but `errors`, sit in the base wherever
their package is, so the config can validate with them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import sitegen

ROOT = Path(sitegen.__file__).parent

#: (module prefix, layer): the longest matching prefix decides; a higher layer may import
#: a lower one, never the reverse.
LAYERS: list[tuple[str, int]] = [
    ("sitegen.__main__", 9), ("sitegen.cli", 9), ("sitegen.build_cli", 9),
    ("sitegen.scaffold", 9), ("sitegen.fetch.command", 9), ("sitegen.unforeseen", 9),
    ("sitegen.helptext", 9), ("sitegen.schedule_cli", 9),
    ("sitegen.preview", 8), ("sitegen.deploy", 8), ("sitegen.digest", 8),
    ("sitegen.publishcopy", 8),
    ("sitegen.build", 7), ("sitegen.options", 7), ("sitegen.unchanged", 7),
    ("sitegen.report", 7), ("sitegen.cireport", 7), ("sitegen.emulator", 7),
    ("sitegen.emit", 6), ("sitegen.plan", 6),
    ("sitegen.render", 5),
    ("sitegen.images", 4),
    ("sitegen.model", 3), ("sitegen.ownpages", 3),
    ("sitegen.fetch", 2), ("sitegen.workspace", 2), ("sitegen.budget", 2),
    ("sitegen.blocktypes", 2),
    ("sitegen.store", 1), ("sitegen.storefile", 1), ("sitegen.cachekey", 1),
    ("sitegen.storecore", 1), ("sitegen.storebuild", 1), ("sitegen.storeseal", 1),
    ("sitegen.codeprint", 1),
    ("sitegen", 0),
]
SHARED_LEAVES = frozenset({"sitegen.deploy.targets", "sitegen.emit.headers",
                           "sitegen.emit.manifest", "sitegen.quota"})


def layer(module: str) -> int:
    if module in SHARED_LEAVES:
        return 0
    found = [(len(prefix), rank) for prefix, rank in LAYERS
             if module == prefix or module.startswith(prefix + ".")]
    return max(found)[1]


def _module_of(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    base = ROOT.parent.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def imports(path: Path) -> list[tuple[str, int]]:
    """Every sitegen module *path* imports (a name imported from a package counts as its
    submodule when it is one), with its line."""
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                found.append((name if _is_module(name) else node.module, node.lineno))
    return [(name, line) for name, line in found if name.split(".")[0] == "sitegen"]


def upward_imports() -> list[str]:
    wrong = []
    for path in sorted(ROOT.rglob("*.py")):
        module = _module_of(path)
        for target, line in imports(path):
            if layer(target) > layer(module):
                wrong.append(f"{module}:{line} imports {target} "
                             f"(layer {layer(target)} > {layer(module)})")
    return wrong


def test_no_import_runs_back_up_the_layers() -> None:
    assert upward_imports() == []


def test_the_shared_leaves_import_nothing_of_sitegen_but_errors() -> None:
    for leaf in SHARED_LEAVES:
        path = ROOT.parent.joinpath(*leaf.split(".")).with_suffix(".py")
        assert {name for name, _ in imports(path)} <= {"sitegen.errors"}, leaf


def test_the_check_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    """An upward import hidden in a function body is found (the check can fail)."""
    source = tmp_path / "probe.py"
    source.write_text("def f():\n    from sitegen.build import run_build\n")
    assert imports(source) == [("sitegen.build", 2)]
    assert layer("sitegen.build") > layer("sitegen.model.site")
