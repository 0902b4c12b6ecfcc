"""Terminal logging for sitegen: `warning: ...` lines on stderr and a warning counter.

Role: one place that decides how log records look on the terminal (plain
`warning: <sentence>` lines, colour only on a TTY and never with NO_COLOR, each on
a line of its own even while a status line shows: `status_showing`, at most
`SHOWN_PER_KIND` warnings of one kind unless verbose: `say_hidden_warnings`) and
counts warnings so `--strict` can fail at the end of a build; `say` prints a command's
lines of normal output (what it made, where it listens), which `-q` silences like the
informational log lines. It must never print secrets: records are printed as given, so
callers never log keys.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections import Counter
from collections.abc import Callable
from typing import TextIO

LOGGER_NAME = "sitegen"


class WarningCounter(logging.Handler):
    """Counts WARNING-and-above records so `--strict` can fail the build at the end."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.count = 0
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
        self.messages.append(record.getMessage())

    def check_strict(self, strict: bool) -> None:
        """With *strict* (`--strict`), any warning so far is a StrictError."""
        if strict and self.count:
            from sitegen.errors import StrictError

            raise StrictError(f"--strict: the build logged {self.count} warning(s); the "
                              "previous output was kept (fix them, or build without --strict)")


def use_colour(stream: TextIO) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set."""
    return stream.isatty() and "NO_COLOR" not in os.environ


class _TerminalFormatter(logging.Formatter):
    def __init__(self, colour: bool) -> None:
        super().__init__()
        self.colour = colour

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.levelno >= logging.ERROR:
            prefix = "error: "
            code = "31"
        elif record.levelno >= logging.WARNING:
            prefix = "warning: "
            code = "33"
        else:
            return message
        if self.colour:
            prefix = f"\033[{code}m{prefix}\033[0m"
        return prefix + message


#: The eraser of the status line (`sitegen.progress.Progress`) showing on each stream now.
_status_lines: dict[int, Callable[[], None]] = {}


def status_showing(stream: TextIO, erase: Callable[[], None] | None) -> None:
    """Tell the console that a status line shows on *stream* (None: it no longer does).

    The console calls *erase* before it writes a record to that stream, so a warning
    starts on a clean line rather than at the end of "fetching articles 12/997".
    """
    if erase is None:
        _status_lines.pop(id(stream), None)
    else:
        _status_lines[id(stream)] = erase


#: Unless verbose, the console shows this many warnings of one kind (one message pattern,
#: such as "page %s: the link %s is broken"); the rest are counted and summed up in one line at
#: the end of the command. The counter (`--strict`, `--report`) sees every warning.
SHOWN_PER_KIND = 10
_PLACEHOLDERS = re.compile(r"(?:%[-#0 +]*\d*(?:\.\d+)?[sdrf])+")
#: What varies in a message formatted before it was logged: quoted names, ids, URLs, numbers.
_VARYING = re.compile(r"'[^']*'|\"[^\"]*\"|https?://\S+|\b[0-9a-f]{24}\b|\d+")


def _kind(record: logging.LogRecord) -> str:
    """A warning's kind, as the counting line shows it: its pattern with "…" for the values."""
    pattern = str(record.msg)
    if _PLACEHOLDERS.fullmatch(pattern):  # ("%s", message): the message's own shape
        return _VARYING.sub("…", record.getMessage())
    return _PLACEHOLDERS.sub("…", pattern)


class _Console(logging.StreamHandler):  # type: ignore[type-arg]
    """A stream handler that erases the stream's status line before each record and shows
    at most *shown_per_kind* warnings of each kind (None: all)."""

    def __init__(self, stream: TextIO, shown_per_kind: int | None) -> None:
        super().__init__(stream)
        self.shown_per_kind = shown_per_kind
        self.kinds: Counter[str] = Counter()

    def emit(self, record: logging.LogRecord) -> None:
        if self.shown_per_kind is not None and record.levelno == logging.WARNING:
            kind = _kind(record)
            self.kinds[kind] += 1
            if self.kinds[kind] > self.shown_per_kind:
                return
        erase = _status_lines.pop(id(self.stream), None)
        if erase is not None:
            erase()
        super().emit(record)

    def say_hidden(self) -> None:
        """One line for each kind of warning shown only in part; then start counting anew."""
        limit = self.shown_per_kind or 0
        for kind, seen in self.kinds.items():
            if seen > limit:
                super().emit(logging.makeLogRecord({
                    "msg": f"{seen - limit} more warnings like \"{kind}\" were not shown "
                           "(-v shows every warning)", "levelno": logging.WARNING}))
        self.kinds.clear()


_counter = WarningCounter()
_console: _Console | None = None


def is_quiet(options: object) -> bool:
    """Whether a command's parsed options ask for `-q` (the flag is absent unless given)."""
    return bool(getattr(options, "quiet", False))


def say(text: str, quiet: bool, *, stream: TextIO | None = None) -> None:
    """Print one line of a command's normal output (stdout unless *stream*), unless *quiet*
    (the command line's `-q`, `options.quiet`).

    What a command was asked to show (`digest show`, a `--dry-run`'s plan) is its result,
    not a message: it is printed with `print`, quiet or not.
    """
    if not quiet:
        print(text, file=stream or sys.stdout, flush=True)


def warning_counter() -> WarningCounter:
    """The process-wide warning counter."""
    return _counter


def say_hidden_warnings() -> None:
    """At the end of a command (and of each preview rebuild): how many warnings of each kind
    the console left out; the count starts again."""
    if _console is not None:
        _console.say_hidden()


def setup_logging(verbosity: int = 0, stream: TextIO | None = None) -> WarningCounter:
    """Configure the `sitegen` logger: -1 quiet (warnings only), 0 normal, 1+ verbose.

    Unless verbose, the console shows `SHOWN_PER_KIND` warnings of a kind (see
    `say_hidden_warnings`).
    """
    stream = stream or sys.stderr
    logger = logging.getLogger(LOGGER_NAME)
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    global _console
    console = _console = _Console(
        stream, None if verbosity > 0 else SHOWN_PER_KIND)
    console.setFormatter(_TerminalFormatter(use_colour(stream)))
    level = logging.WARNING if verbosity < 0 else logging.DEBUG if verbosity > 0 else logging.INFO
    console.setLevel(level)
    global _counter
    _counter = WarningCounter()
    logger.addHandler(console)
    logger.addHandler(_counter)
    # No record is made below what the console shows (the counter needs warnings only):
    # a DEBUG level here would build a record for every request the emulator serves.
    logger.setLevel(level)
    logger.propagate = False
    return _counter
