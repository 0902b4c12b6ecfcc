"""`sitegen emulate` as users run it: a subprocess on a free loopback port, its log kept.

`Emulate` starts the command, reads the URL from its first line, drains stderr (its request
log and reload lines) into `lines` on a thread, so the pipe never fills, and lets a test wait
for a line or for an API answer. Sites for it are `site.toml` files pointing at its URL.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

BIN = Path(sys.executable).parent
KEY = "emulated-key-1234"
DETAIL = "GET /api/v2/workspaces/{id}/articles/{id}"
"""The build report's name for one article detail request."""


class Emulate:
    """`sitegen emulate --port 0 ARGS` in a subprocess; a context manager."""

    def __init__(self, *argv: str, cwd: Path) -> None:
        self.process = subprocess.Popen(
            [str(BIN / "sitegen"), "emulate", "--port", "0", *argv], cwd=cwd,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        assert self.process.stdout is not None and self.process.stderr is not None
        first = self.process.stdout.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+)", first)
        if not found:
            self.stop()
            raise AssertionError(f"sitegen emulate printed {first!r}")
        self.url = found.group(1)
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._drain, args=(self.process.stderr,),
                                        daemon=True)
        self._reader.start()

    def _drain(self, stream: Any) -> None:
        for line in stream:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()

    def wait_for_line(self, test: Callable[[str], bool], timeout: float = 120) -> str:
        """The first line of its log passing *test*, waiting up to *timeout* seconds."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for line in self.lines:
                    if test(line):
                        return line
                left = deadline - time.monotonic()
                assert left > 0 and self.process.poll() is None, (
                    f"no such line in the emulator's log: {self.lines[-20:]}")
                self._changed.wait(min(left, 1.0))

    def get(self, path: str) -> httpx.Response:
        """GET an API path with a key the emulator accepts."""
        return httpx.get(self.url + path, headers={"x-api-key": KEY}, timeout=30)

    def wait_for(self, test: Callable[[], bool], timeout: float = 120) -> None:
        """Poll *test* (an API answer) until it holds; fail after *timeout* seconds."""
        deadline = time.monotonic() + timeout
        while not test():
            assert time.monotonic() < deadline, "the emulator never answered as expected"
            assert self.process.poll() is None, f"the emulator exited: {self.lines[-20:]}"
            time.sleep(0.05)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        reader = getattr(self, "_reader", None)
        if reader is not None:
            reader.join(timeout=30)  # it ends at the pipe's end: never close under its feet
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()

    def __enter__(self) -> Emulate:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()


def write_site(folder: Path, url: str, workspace_id: str, *, images: bool = False,
               search: bool = False) -> Path:
    """A site folder whose `site.toml` points at the emulator at *url*; its config path."""
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "site.toml"
    config.write_text(
        f'[site]\ntitle = "Emulated"\nurl = "https://emulated.test/"\n'
        f'description = "A site built from the emulator."\n'
        f'[api]\nurl = "{url}"\nworkspace = "{workspace_id}"\n'
        f'[analytics]\nenabled = false\n'
        f'[images]\nenabled = {str(images).lower()}\n'
        f'[search]\nenabled = {str(search).lower()}\n', encoding="utf-8")
    return config


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def page_bytes(output: Path) -> dict[str, bytes]:
    """Every HTML page of an output folder by its path, with its bytes."""
    return {str(path.relative_to(output)): path.read_bytes()
            for path in sorted(output.rglob("index.html"))}
