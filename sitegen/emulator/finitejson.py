"""JSON request bodies as the service reads them: only numbers a JSON answer can say back.

Role: `loads` parses a request body like `json.loads`, but refuses `NaN`, `Infinity` and a
number past a double's range (`1e400`) with `NotFinite`, a `ValueError`: stored, such a
number would make every later answer about that record fail to encode. It must never do I/O.
"""

from __future__ import annotations

import json
import math
from typing import Any


class NotFinite(ValueError):
    """A number JSON cannot say back (NaN, Infinity, or one past a double's range)."""


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise NotFinite(text)
    return number


def _no_constant(text: str) -> float:
    raise NotFinite(text)


def loads(raw: bytes | str) -> Any:
    """The JSON value of *raw*; NotFinite for a number JSON cannot say back, ValueError (or
    RecursionError, nested past Python's limit) for anything else that is not JSON."""
    return json.loads(raw, parse_float=_finite, parse_constant=_no_constant)
