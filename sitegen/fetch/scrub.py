"""Scrubbing the API key out of text that may reach a message, a log line or a report.

Role: replace every whole occurrence of the key in a text with `***`, so a service that echoes
the key never gets it printed. Only whole tokens are replaced (the characters on either side are
not letters, digits, `_`, `-`, or a dot between them), so a short key never turns "bad answer"
into "b*** ***nswer" or shows where its letters are; a key of at least `_ANYWHERE` characters is
replaced anywhere. It must never log, never return the key or any part of it, and never change
text that does not hold the key.
"""

from __future__ import annotations

import re
from functools import lru_cache

MASK = "***"
#: Characters that continue a word: a short key next to one is part of another word.
_TOKEN = r"A-Za-z0-9_\-"
#: A key at least this long is replaced wherever it appears, even inside a longer token.
_ANYWHERE = 16


@lru_cache(maxsize=8)
def _pattern(key: str) -> re.Pattern[str]:
    if len(key) >= _ANYWHERE:
        return re.compile(re.escape(key))
    # (a dot between word characters continues the word too: "0" is not whole in "0.4")
    return re.compile(rf"(?<![{_TOKEN}])(?<![{_TOKEN}]\.){re.escape(key)}"
                      rf"(?![{_TOKEN}])(?!\.[{_TOKEN}])")


def scrub(text: str, key: str) -> str:
    """*text* with every whole occurrence of *key* replaced by `***` (unchanged without)."""
    if not key or key not in text:
        return text
    return _pattern(key).sub(MASK, text)
