"""`sitegen.cores.shared`: a pure computation's shares, forked, and never depending on a child."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import pytest

from sitegen import cores


def squares(part: int, parts: int) -> list[int]:
    return [n * n for n in range(100)[part::parts]]


def test_each_share_is_computed_once_and_returned_in_part_order() -> None:
    results = cores.shared(squares, 3)
    assert results == [squares(part, 3) for part in range(3)]
    merged = sorted(n for share in results for n in share)
    assert merged == [n * n for n in range(100)]


def test_the_other_shares_are_computed_in_other_processes() -> None:
    here = os.getpid()
    pids = cores.shared(lambda part, parts: os.getpid(), 2)
    assert pids[0] == here and pids[1] != here


def test_a_share_whose_child_fails_is_computed_here() -> None:
    here = os.getpid()

    def work(part: int, parts: int) -> tuple[int, int]:
        if os.getpid() != here:
            raise RuntimeError("a child that fails")
        return part, parts

    assert cores.shared(work, 2) == [(0, 2), (1, 2)]


def test_a_share_whose_child_hangs_is_ended_and_computed_here(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cores, "_GRACE", 0.5)
    here = os.getpid()
    children: list[Any] = []

    def work(part: int, parts: int) -> int:
        if os.getpid() != here:
            time.sleep(600)  # (ended long before)
        return part

    def spy(process: Any, reader: Any, deadline: float) -> bytes | None:
        children.append(process)
        return collect(process, reader, deadline)

    collect = cores._collect
    monkeypatch.setattr(cores, "_collect", spy)
    assert cores.shared(work, 2) == [0, 1]
    assert len(children) == 1
    assert not children[0].is_alive() and children[0].exitcode == -signal.SIGKILL


def test_a_failing_child_prints_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    here = os.getpid()

    def work(part: int, parts: int) -> int:
        if os.getpid() != here:
            raise ValueError("not printed")
        return part

    assert cores.shared(work, 2) == [0, 1]
    out, err = capfd.readouterr()
    assert "not printed" not in out + err and "Traceback" not in err


def test_one_part_runs_here_without_a_fork() -> None:
    assert cores.shared(lambda part, parts: (os.getpid(), part, parts), 1) == \
        [(os.getpid(), 0, 1)]
