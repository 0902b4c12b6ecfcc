"""The per-user cache key file (`sitegen.cachekey`): never one someone else could know or
have planted (#48 point 9), and a key made afresh over a store with content is said once."""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
from pathlib import Path

import pytest

from sitegen import cachekey
from sitegen.cachekey import mac_key, user_key_path
from sitegen.cli import main

PLANTED = b"f" * 64


def _mac_of(raw: bytes) -> bytes:
    return hmac.new(raw, b"sitegen: derived data and output record, v1", hashlib.sha256).digest()


@pytest.fixture
def key_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An XDG cache folder of this test's own: the key file is `<it>/sitegen/cache-key`."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg"


def _plant(key_home: Path, folder_mode: int, file_mode: int) -> Path:
    path = user_key_path()
    assert path.parent == key_home / "sitegen"
    path.parent.mkdir(parents=True)
    path.parent.chmod(folder_mode)
    path.write_bytes(PLANTED + b"\n")
    path.chmod(file_mode)
    return path


@pytest.mark.parametrize(("folder_mode", "file_mode", "problem"), [
    (0o777, 0o644, "a folder others can write to (mode 0777)"),
    (0o770, 0o600, "a folder others can write to (mode 0770)"),
    (0o700, 0o644, "can be read or written by others (mode 0644)"),
    (0o700, 0o640, "can be read or written by others (mode 0640)"),
    (0o700, 0o602, "can be read or written by others (mode 0602)"),
])
def test_a_key_file_others_could_read_or_plant_is_never_used(
    key_home: Path, caplog: pytest.LogCaptureFixture, folder_mode: int, file_mode: int,
    problem: str,
) -> None:
    path = _plant(key_home, folder_mode, file_mode)
    with caplog.at_level(logging.WARNING, logger="sitegen"):
        assert mac_key(None) is None
        assert mac_key(None) is None  # (said once per process)
    lines = [r.getMessage() for r in caplog.records if r.name == "sitegen.cachekey"]
    assert len(lines) == 1 and str(path) in lines[0] and problem in lines[0], lines
    assert "SITEGEN_CACHE_KEY" in lines[0]
    assert path.read_bytes() == PLANTED + b"\n"  # (left as it was: not ours to delete)


def test_a_symlinked_key_file_is_never_used(key_home: Path,
                                            caplog: pytest.LogCaptureFixture) -> None:
    planted = key_home.parent / "planted"
    planted.write_bytes(PLANTED)
    planted.chmod(0o600)
    path = user_key_path()
    path.parent.mkdir(parents=True, mode=0o700)
    path.symlink_to(planted)
    with caplog.at_level(logging.WARNING, logger="sitegen"):
        assert mac_key(None) is None
    assert "is a symbolic link" in caplog.text


def test_a_key_file_of_another_user_is_never_used(
    key_home: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = _plant(key_home, 0o700, 0o600)
    owner = path.stat().st_uid
    real = os.geteuid
    # Seen from another user: the folder and the file are someone else's.
    monkeypatch.setattr(os, "geteuid", lambda: owner + 1 if real() == owner else owner)
    with caplog.at_level(logging.WARNING, logger="sitegen"):
        assert mac_key(None) is None
    assert "owned by another user" in caplog.text


def test_a_key_file_only_the_user_can_read_is_used_and_one_is_made_when_missing(
    key_home: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    path = _plant(key_home, 0o700, 0o600)
    assert mac_key(None) == _mac_of(PLANTED)
    path.unlink()
    path.parent.rmdir()
    with caplog.at_level(logging.WARNING, logger="sitegen"):
        made = mac_key(None)
    assert made is not None and made == mac_key(None)
    assert (path.stat().st_mode & 0o777, path.parent.stat().st_mode & 0o077) == (0o600, 0)
    assert not caplog.records


def test_a_new_key_over_a_store_with_content_is_said_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    cachekey.take_fresh()  # (forget a key another test of this process made)
    said = "a new cache key was made, everything derived is made again; set SITEGEN_CACHE_KEY"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "first-machine"))
    assert main(["build", "--demo", "-o", "out"]) == 0
    assert said not in capsys.readouterr().err  # (a new key, but nothing in the store)
    # A new CI machine with the cached store and no secret: a new key, said once.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "second-machine"))
    assert main(["build", "--demo", "-o", "out"]) == 0
    err = capsys.readouterr().err
    assert err.count(said) == 1 and f"warning: no SITEGEN_CACHE_KEY or API key: {said}" in err
    assert main(["build", "--demo", "-o", "out"]) == 0
    assert said not in capsys.readouterr().err
