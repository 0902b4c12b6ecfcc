"""The fetch's status line: requests while the listings are read, then articles n/N.

A sync against the in-process emulator draws on a `Progress` over a string buffer (as
on a terminal, with no throttle); `tests/test_progress.py` covers the line itself.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from sitegen.errors import QuotaError
from sitegen.progress import Progress
from tests.fetch.test_emulator_sync import Emu, config_for

ERASE = "\r\033[K"


def frames(output: str) -> list[str]:
    """What the status line showed, in order (empty frames: the line was erased)."""
    return output.split(ERASE)[1:]


@pytest.fixture
def emu() -> Emu:
    from sitegen.emulator.demo import load_demo

    return Emu(load_demo())


def test_requests_then_each_article_detail_then_the_line_is_erased(
        tmp_path: Path, emu: Emu) -> None:
    stream = io.StringIO()
    result = emu.sync(config_for(tmp_path, emu.data), progress=Progress(stream, True, 0.0))
    shown = frames(stream.getvalue())
    details = result.stats.details_made
    assert details > 5
    assert shown[-1] == ""  # erased at the end
    listing = [f for f in shown if f.startswith("fetching: ")]
    articles = [f for f in shown if f.startswith("fetching articles ")]
    assert listing and articles and len(listing) + len(articles) == len(shown) - 1
    assert shown.index(articles[0]) > shown.index(listing[-1])  # listings first
    counts = [int(re.fullmatch(r"fetching: (\d+) API requests?", f).group(1))  # type: ignore[union-attr]
              for f in listing]
    assert counts == list(range(1, len(counts) + 1))  # each request, as it ends
    assert articles == [f"fetching articles {n}/{details}" for n in range(details + 1)]
    assert result.ledger.watch is None  # the ledger lets go of the line


def test_a_failed_sync_erases_its_line_too(tmp_path: Path, emu: Emu) -> None:
    emu.state.faults.quota = emu.state.requests + 10  # the listings pass, a detail fails
    stream = io.StringIO()
    with pytest.raises(QuotaError):
        emu.sync(config_for(tmp_path, emu.data), progress=Progress(stream, True, 0.0))
    assert "fetching articles 0/" in stream.getvalue()
    assert stream.getvalue().endswith(ERASE)


def test_off_the_terminal_the_sync_draws_nothing(tmp_path: Path, emu: Emu) -> None:
    stream = io.StringIO()  # not a TTY: Progress(enabled=None) stays silent
    result = emu.sync(config_for(tmp_path, emu.data), progress=Progress(stream))
    assert result.stats.details_made > 5
    assert stream.getvalue() == ""
