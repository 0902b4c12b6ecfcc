"""Nothing executable comes from the cache folder (#25 point 6): a poisoned CI cache of
`.sitegen/` must not be code run by the build. Compiled templates stay in memory."""

from __future__ import annotations

from pathlib import Path

import pytest
from jinja2 import FileSystemBytecodeCache

from sitegen.cli import main
from sitegen.config import resolve_config
from sitegen.render.themes import ThemeSet

STORE_FILES = {"store.sqlite", "store.sqlite-wal", "store.sqlite-shm", "store.sqlite-journal"}


def test_a_build_leaves_nothing_but_the_store_in_the_cache_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["build", "-q", "--demo", "-o", "out"]) == 0
    assert main(["build", "-q", "--demo", "--offline", "--force", "-o", "out"]) == 0
    left = {p.relative_to(tmp_path / ".sitegen").as_posix()
            for p in (tmp_path / ".sitegen").rglob("*") if p.is_file()}
    assert left and {Path(name).name for name in left} <= STORE_FILES, sorted(left)


def test_compiled_templates_are_never_cached_on_disk(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    env = ThemeSet(resolve_config("site.toml", True)).environment()
    assert env.bytecode_cache is not None
    assert not isinstance(env.bytecode_cache, FileSystemBytecodeCache)
