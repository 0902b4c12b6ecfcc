"""The one sentence for a failure no module foresaw (a bug, or something nobody expected).

Role: `cli.py` hands any exception that is not a `SitegenError` to `unforeseen_error`, which
names the command, or the build stage that failed (`report.failed_stage`), quotes the
exception's first line and suggests `--debug` (exit 1). It must never print anything
itself, and never let a key through: the value of every environment variable whose name
says it is a secret is scrubbed from the quoted line.
"""

from __future__ import annotations

import os

from sitegen.errors import SitegenError

__all__ = ["unforeseen_error"]

#: Environment variables whose values never reach an error line (the key variables' names).
SECRET_NAMES = ("KEY", "TOKEN", "SECRET", "PASSWORD")


def unforeseen_error(error: Exception, command: str | None) -> SitegenError:
    """One sentence for an exception no module foresaw: what failed, and `--debug`."""
    from sitegen.fetch.scrub import scrub
    from sitegen.report import failed_stage

    stage = failed_stage() if command == "build" else None
    where = f"the {stage} stage" if stage else f"sitegen {command}" if command else "sitegen"
    said = (str(error).strip().splitlines() or [""])[0][:200]
    for name, value in os.environ.items():
        if len(value) >= 8 and any(part in name.upper() for part in SECRET_NAMES):
            said = scrub(said, value)
    what = f"{type(error).__name__}: {said}" if said else type(error).__name__
    kept = "; the previous output was kept" if command in ("build", "serve") else ""
    return SitegenError(f"unexpected failure in {where} ({what}){kept}: run again with "
                        "--debug for the details")
