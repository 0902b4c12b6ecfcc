"""`Progress`, the status line of long stages, and the log lines that cross it.

A log record written while a status line shows must start on a line of its own
(`sitegen.logs` erases the line first); the next update draws it again.
"""

from __future__ import annotations

import io
import logging
import os
import pty
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sitegen.logs import LOGGER_NAME, setup_logging
from sitegen.progress import Progress

ERASE = "\r\033[K"


@pytest.fixture
def restored_logging() -> Iterator[None]:
    logger = logging.getLogger(LOGGER_NAME)
    saved = (list(logger.handlers), logger.level, logger.propagate)
    yield
    logger.handlers[:] = saved[0]
    logger.setLevel(saved[1])
    logger.propagate = saved[2]


@pytest.mark.usefixtures("restored_logging")
def test_a_warning_erases_the_status_line_and_the_next_update_draws_it_again() -> None:
    stream = io.StringIO()
    setup_logging(stream=stream)
    progress = Progress(stream, enabled=True, interval=60.0)  # throttled: one draw a minute
    progress.update("rendering", 1, 3)
    logging.getLogger("sitegen.test").warning("a page had no title")
    progress.update("rendering", 2, 3)  # within the interval, yet drawn: the line was erased
    progress.clear()
    assert stream.getvalue() == (
        f"{ERASE}rendering 1/3{ERASE}warning: a page had no title\n{ERASE}rendering 2/3{ERASE}")


@pytest.mark.usefixtures("restored_logging")
def test_without_a_status_line_a_warning_is_written_as_is() -> None:
    stream = io.StringIO()
    setup_logging(stream=stream)
    progress = Progress(stream, enabled=True)
    progress.update("rendering", 3, 3)
    progress.clear()
    logging.getLogger("sitegen.test").warning("after the line")
    assert stream.getvalue() == f"{ERASE}rendering 3/3{ERASE}warning: after the line\n"


def test_updates_within_the_interval_are_skipped_but_the_last_is_drawn() -> None:
    stream = io.StringIO()
    progress = Progress(stream, enabled=True, interval=60.0)
    for done in range(1, 6):
        progress.update("fetching articles", done, 5)
    assert stream.getvalue() == f"{ERASE}fetching articles 1/5{ERASE}fetching articles 5/5"


def _on_a_terminal(folder: Path, *args: str) -> str:
    """`sitegen ARGS` with its stderr on a pseudo-terminal; what the terminal got."""
    main, other = pty.openpty()
    env = {**os.environ, "NO_COLOR": "1"}
    try:
        done = subprocess.run([sys.executable, "-m", "sitegen", *args],
                              cwd=folder, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=other, env=env, timeout=300)
        os.close(other)
        other = -1
        chunks = []
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        if other >= 0:
            os.close(other)
        os.close(main)
    assert done.returncode == 0
    return b"".join(chunks).decode().replace("\r\n", "\n")  # the terminal's newlines


def test_a_build_on_a_terminal_shows_the_fetch_and_the_render(tmp_path: Path) -> None:
    shown = _on_a_terminal(tmp_path, "build", "--demo")
    assert re.search(r"fetching articles (\d+)/\1", shown)
    assert re.search(r"rendering (\d+)/\1", shown)
    last = shown.strip().split("\n")[-1]
    # the summary, on a clean line, counting the demo's pages (its HTML files)
    pages = len(list((tmp_path / "_site").rglob("*.html")))
    assert pages > 100 and last.split(ERASE)[-1].startswith(f"built {pages} pages")
    # The demo's slug warning starts its own line, not the end of a status line:
    assert "\nwarning: article" in shown.replace(ERASE, "\n") and not re.search(
        r"\d+/\d+warning", shown)


def test_with_quiet_or_off_the_terminal_there_is_no_status_line(tmp_path: Path) -> None:
    quiet = _on_a_terminal(tmp_path, "build", "--demo", "-q")
    assert "\033[K" not in quiet and "fetching" not in quiet
    piped = subprocess.run([sys.executable, "-m", "sitegen", "build", "--demo"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert piped.returncode == 0, piped.stderr
    assert "\r" not in piped.stderr and "\033[" not in piped.stderr
    assert piped.stderr.strip().splitlines()[-1].startswith("built ")


def test_sitegen_fetch_on_a_terminal_shows_the_fetch(tmp_path: Path) -> None:
    shown = _on_a_terminal(tmp_path, "fetch", "--demo")
    assert re.search(r"fetching articles (\d+)/\1", shown)
    assert shown.endswith(ERASE)  # erased before the summary (on stdout) is printed
    quiet = _on_a_terminal(tmp_path, "fetch", "--demo", "-q")
    assert "\033[K" not in quiet


@pytest.mark.usefixtures("restored_logging")
def test_ten_warnings_of_a_kind_are_shown_then_one_line_counts_the_rest() -> None:
    """A kind is a message pattern; a message formatted beforehand ("%s") is kinded by its
    shape, the quoted names, ids, URLs and numbers in it left out."""
    from sitegen.logs import say_hidden_warnings

    stream = io.StringIO()
    counter = setup_logging(stream=stream)
    log = logging.getLogger("sitegen.test")
    for n in range(12):
        log.warning("%s", f"article {n:024x} slug 'p{n}' is a reserved name; using 'p{n}-2'")
        log.warning("page %s: the link %s is broken", f"p{n}/", f"/gone-{n}/")
    log.warning("%s", "article 0000000000000000000000ff has an unsafe slug 'a.b'")
    say_hidden_warnings()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 10 + 10 + 1 + 2 and counter.count == 25
    assert lines[-2:] == [
        'warning: 2 more warnings like "article … slug … is a reserved name; using …" were not '
        'shown (-v shows every warning)',
        'warning: 2 more warnings like "page …: the link … is broken" were not shown (-v shows '
        'every warning)']
    say_hidden_warnings()  # counted anew: nothing more to say
    assert len(stream.getvalue().splitlines()) == len(lines)

    verbose = io.StringIO()
    setup_logging(1, stream=verbose)
    for n in range(12):
        log.warning("page %s: the link %s is broken", f"p{n}/", f"/gone-{n}/")
    say_hidden_warnings()
    assert len(verbose.getvalue().splitlines()) == 12
