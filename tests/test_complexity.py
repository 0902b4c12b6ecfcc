"""No function of sitegen is over cyclomatic complexity 20, as radon counts it.

The house rule (ARCHITECTURE.md, "How it is checked"): a function that needs more branches
than that is split by concern, never by packing lines. Radon's count (each `if`, `elif`,
loop, `except`, boolean operator, comprehension condition and match case adds one) is the
one this test and CI use; ruff's C901 counts differently and is not the rule.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from textwrap import indent

from radon.complexity import cc_visit
from radon.visitors import Function

import sitegen

ROOT = Path(sitegen.__file__).parent
#: The most branches a function may have.
LIMIT = 20


def functions(blocks: list[Function]) -> Iterator[Function]:
    """Every function among *blocks*, its methods and the functions defined inside it."""
    for block in blocks:
        if isinstance(block, Function):
            yield block
            yield from functions(block.closures)
        else:  # a class: its methods, and the classes and functions inside it
            yield from functions([*block.methods, *block.inner_classes])


def over_limit(source: str) -> list[tuple[str, int, int]]:
    """(name, line, complexity) of each function of *source* over `LIMIT`."""
    found = {(function.fullname, function.lineno, function.complexity)
             for function in functions(cc_visit(source)) if function.complexity > LIMIT}
    return sorted(found)  # (radon lists a class's methods both with it and alone)


def test_no_function_is_over_the_limit() -> None:
    found = [f"{path.relative_to(ROOT.parent)}:{line} {name} ({complexity})"
             for path in sorted(ROOT.rglob("*.py"))
             for name, line, complexity in over_limit(path.read_text(encoding="utf-8"))]
    assert found == [], "split by concern, not by packing lines: " + ", ".join(found)


def _branches(count: int) -> str:
    """A function `many` of *count* `if`s: complexity *count* + 1."""
    return "def many(self, x):\n" + indent(
        "".join(f"if x == {n}:\n    return {n}\n" for n in range(count)), "    ")


def test_the_count_sees_a_method_and_a_function_inside_one() -> None:
    """The check can fail: 21 branches in a method, and in a function nested in another;
    20 pass."""
    many = _branches(LIMIT)
    assert over_limit("class C:\n" + indent(many, "    ")) == [("C.many", 2, LIMIT + 1)]
    assert over_limit("def outer():\n" + indent(many, "    ")) == [("many", 2, LIMIT + 1)]
    assert over_limit(_branches(LIMIT - 1)) == []
