"""Why a build wrote a page: the plan's reasons, in words (`build --explain`, the preview).

Role: the plan (`sitegen.plan.Ledger`) keeps, for each page it sends to be rendered, the
cause it found — new page, no usable record of the last build (first build, `--force`, a
change of the code fingerprint), the page's template or the build's settings, the recorded
reads that give something else now, or an output file that is not what the last build
wrote — and this module says it in one line, naming at most `NAMED` reads (`article:<id>
changed`, `site.articles changed`, `template article.html changed`). `explain_lines` turns a
finished build's report into the lines `build --explain` prints. It must never decide what is
rendered, read the store or write anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

#: At most this many changed reads are named for one page (the rest are counted).
NAMED = 3

#: The causes the plan records, and what each says.
NEW = "new"
SETTINGS = "settings"
OUTPUT = "output"
READS = "reads"
FRESH = {
    "first": "no previous build recorded",
    "force": "--force renders every page",
    "code": "the code changed (sitegen or a library that shapes the output)",
    "unverified": "the last build's stored plan could not be verified (edited, put back "
                  "from another build, or sealed with another key)",
}
_SAID = {
    NEW: "new page",
    SETTINGS: "its template or the build's settings changed (the context fingerprint)",
    OUTPUT: "its output file differed from what the last build wrote",
}


def read_name(read: str) -> str:
    """A recorded read as the owner reads it (`T\\0article.html` → `template article.html`)."""
    kind, tagged, rest = read.partition("\x00")
    if not tagged:
        return read  # an entity's key: `article:<id>`, `site.articles`, `tag:<slug>`, `site`
    return {"T": "template ", "I": "image ", "C": "fragment of "}.get(kind, kind + " ") + rest


def rank(read: str) -> tuple[int, str]:
    """The order reads are named in: the site's lists and settings, templates, entities, the
    rest (what an owner changes by hand first, the content next)."""
    if read == "site" or read.startswith("site."):
        return 0, read
    return (1 if read.startswith("T\x00") else 3 if "\x00" in read else 2), read


def say(cause: str, reads: Sequence[tuple[str, bool]] = ()) -> str:
    """One cause in words; *reads* are the changed reads (name, whether its entity is gone)."""
    if cause != READS:
        return FRESH.get(cause) or _SAID.get(cause, cause)
    named = [f"{read_name(read)} {'gone' if gone else 'changed'}"
             for read, gone in reads[:NAMED]]
    more = len(reads) - len(named)
    return ", ".join(named) + (f" (and {more} more)" if more > 0 else "")


def explain_lines(why: Mapping[str, str], written: Sequence[str],
                  removed: Sequence[str]) -> list[str]:
    """What `build --explain` prints: each file written with its reason (the plan's pages),
    the other files written in one line, each file removed; "nothing changed" for none."""
    lines = [f"wrote {path}: {why[path]}" for path in written if path in why]
    others = [path for path in written if path not in why]
    if others:
        shown = ", ".join(others[:NAMED]) + (", …" if len(others) > NAMED else "")
        lines.append(f"wrote {len(others):,} other file{'s' if len(others) != 1 else ''} "
                     f"(assets, images, search index: their bytes changed): {shown}")
    lines.extend(f"removed {path}: no longer part of the site" for path in removed)
    return lines or ["nothing changed: every file of the output was kept as it was"]
