"""The stamp file's record of the output: what the surveying child reads of a stamp.

Role: `sitegen.emit.stamp` writes a stamp after each committed offline build; among
other things it records the stat (size, mtime_ns, inode) of every output file. The
output survey's child (`sitegen.emit.survey`) reads those stats to tell which files
are still as that build checked them, and it starts while the build is still
importing its own modules: this module holds the format number and that reader, on
`json` and `os` alone, so the child imports nothing else of the stamp. It only ever
reads.
"""

from __future__ import annotations

import json

STAMP_FORMAT = 2


def recorded_stats(stamp_path: str, output: str) -> dict[str, tuple[int, int, int]]:
    """The output files' stats as the last stamped build of *output* left them (or empty).

    *stamp_path* is a `StampKey.path`. Valid whatever the inputs are now: the writer
    uses them only to skip re-reading a file whose stat did not change since that
    build checked its bytes.
    """
    try:
        with open(stamp_path, "rb") as handle:
            raw = json.loads(handle.read())
        if raw.get("format") != STAMP_FORMAT or raw.get("output") != output:
            return {}
        return {rel: (int(st[0]), int(st[1]), int(st[2])) for rel, st in raw["files"].items()}
    except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError):
        return {}
