"""Summaries, targets and the printed table.

Role: pure functions over measured numbers. `summarize` gives median with min–max,
`Target` says whether a median meets a goal, `Row` is one line of the table, and
`format_table` / `row_json` render rows for the terminal and the JSON file. It must
never measure, start a process or touch the file system.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class Summary:
    """Median with the range of the samples."""

    median: float
    low: float
    high: float
    n: int


def summarize(values: Sequence[float]) -> Summary:
    """The median, min and max of *values* (at least one)."""
    if not values:
        raise ValueError("summarize needs at least one value")
    return Summary(statistics.median(values), min(values), max(values), len(values))


@dataclass(frozen=True)
class Target:
    """A goal for a median: `value <op> limit`."""

    op: Literal["<", "<=", ">=", "=="]
    limit: float
    unit: str = ""

    def met(self, value: float) -> bool:
        """True when *value* meets the goal."""
        if self.op == "<":
            return value < self.limit
        if self.op == "<=":
            return value <= self.limit
        if self.op == "==":
            return value == self.limit
        return value >= self.limit

    def __str__(self) -> str:
        symbol = {"<": "<", "<=": "≤", ">=": "≥", "==": "="}[self.op]
        limit = f"{self.limit:g}" if self.op == "==" else format_number(self.limit)
        return f"{symbol} {limit}{self.unit}"


@dataclass
class Row:
    """One line of the results table: what was measured, its samples and its goal."""

    step: str
    label: str
    unit: str
    values: list[float]
    target: Target | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def summary(self) -> Summary:
        return summarize(self.values)

    @property
    def verdict(self) -> str:
        """'pass', 'MISS' or '' when the row has no target."""
        if self.target is None:
            return ""
        return "pass" if self.target.met(self.summary.median) else "MISS"


def format_number(value: float) -> str:
    """A figure with about three significant digits, never in exponent form."""
    size = abs(value)
    if size == 0:
        return "0"
    if size >= 100:
        return f"{value:.0f}"
    if size >= 10:
        return f"{value:.1f}"
    if size >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def _cells(row: Row) -> list[str]:
    summary = row.summary
    spread = (f"{format_number(summary.low)}–{format_number(summary.high)}"
              if summary.n > 1 else "")
    return [row.step, row.label, f"{format_number(summary.median)} {row.unit}".strip(), spread,
            str(summary.n), str(row.target) if row.target else "", row.verdict, row.note]


HEADERS = ["step", "measure", "median", "min–max", "n", "target", "", "note"]


def format_table(rows: Sequence[Row], failures: Sequence[tuple[str, str]] = ()) -> str:
    """The results as an aligned text table, then one `FAILED` line per failed step."""
    table = [HEADERS] + [_cells(row) for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(HEADERS))]
    lines = []
    for index, cells in enumerate(table):
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(cells, widths,
                                                                        strict=True)).rstrip())
        if index == 0:
            lines.append("  ".join("-" * width for width in widths).rstrip())
    lines.extend(f"FAILED {step}: {message}" for step, message in failures)
    return "\n".join(lines)


def row_json(row: Row) -> dict[str, Any]:
    """One row as plain JSON data (samples included, so others can re-analyse them)."""
    summary = row.summary
    return {
        "step": row.step, "measure": row.label, "unit": row.unit,
        "median": summary.median, "min": summary.low, "max": summary.high, "n": summary.n,
        "values": list(row.values),
        "target": str(row.target) if row.target else None,
        "pass": None if row.target is None else row.target.met(summary.median),
        "note": row.note, **row.extra,
    }
