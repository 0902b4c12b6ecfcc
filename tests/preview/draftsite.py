"""What the drafts preview's tests share: the emulator and `sitegen serve --drafts` as the
processes a user runs, a site folder pointing at the emulator, and the demo's drafts.

`emulator()` runs `sitegen emulate --port 0` (the bundled demo workspace, which holds four
drafts); `serving()` runs `sitegen serve --drafts --port 0` in a site folder until its first
build is done and stops it with Ctrl-C, as a user would.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.emulator.running import Emulate

BIN = Path(sys.executable).parent
WORKSPACE = "65f0c0ffee0123456789abcd"  # the demo workspace the emulator serves by default
KEY = "drafts-test-key"
#: The demo's drafts: slug → title (status "draft" in emulator/data/demo-workspace.json).
DRAFTS = {
    "rainy-day-edinburgh": "A Rainy Day in Edinburgh",
    "why-did-my-ferment-go-soft": "Why Did My Ferment Go Soft?",
    "yogurt-without-a-yogurt-maker": "Yogurt Without a Yogurt Maker",
    "git-worktrees": "Git Worktrees for People Who Juggle Branches",
}
#: A sentence of one draft's body (the Edinburgh one) that no published article has.
DRAFT_SENTENCE = "Every trip to Edinburgh contains at least one day of rain"
BANNER = "Draft — not published"
WAIT = 180.0  # seconds: a first build on a loaded two-core machine, with room to spare


def environment() -> dict[str, str]:
    return {**os.environ, "NO_COLOR": "1", "PYTHONUNBUFFERED": "1", "SITEGEN_API_KEY": KEY}


@contextmanager
def emulator(cwd: Path, *argv: str) -> Iterator[str]:
    """The base URL of `sitegen emulate --port 0` (the demo workspace) running in *cwd*."""
    with Emulate(*argv, cwd=cwd) as running:
        yield running.url


def write_site(root: Path, api_url: str, *, theme: str = "default", extra: str = "") -> Path:
    """A site folder whose content is the emulator's workspace; returns its folder."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "site.toml").write_text(textwrap.dedent(f"""\
        [site]
        title = "Drafts Field Notes"
        url = "https://notes.drafts.test/"
        theme = "{theme}"

        [api]
        url = "{api_url}"
        workspace = "{WORKSPACE}"

        [analytics]
        enabled = false
        """) + textwrap.dedent(extra), encoding="utf-8")
    return root


@dataclass
class Preview:
    """A running `sitegen serve --drafts`: its URL, and what it printed so far."""

    process: subprocess.Popen[str]
    url: str
    first_line: str
    errors: list[str] = field(default_factory=list)

    def said(self, text: str) -> bool:
        return any(text in line for line in list(self.errors))

    def wait_for_line(self, text: str, timeout: float = WAIT) -> str:
        """The first stderr line holding *text*, waiting for it (the process still up)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.errors):
                if text in line:
                    return line
            assert self.process.poll() is None, "serve ended:\n" + "".join(self.errors)
            time.sleep(0.2)
        raise AssertionError(f"serve never said {text!r}:\n" + "".join(self.errors))

    def get(self, path: str) -> httpx.Response:
        return httpx.get(self.url.rstrip("/") + path, timeout=30)


@contextmanager
def serving(site: Path, *argv: str) -> Iterator[Preview]:
    """`sitegen serve --drafts --port 0 ARGV` in *site*, its first build done; Ctrl-C after,
    and the process must then end cleanly (exit 0)."""
    process = subprocess.Popen([str(BIN / "sitegen"), "serve", "--drafts", "--port", "0", *argv],
                               cwd=site, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=environment())
    assert process.stdout is not None and process.stderr is not None
    errors: list[str] = []
    stderr = process.stderr

    def read() -> None:
        for text in iter(stderr.readline, ""):
            errors.append(text)

    reader = threading.Thread(target=read, daemon=True)
    try:
        line = process.stdout.readline()
        reader.start()
        assert line.startswith("sitegen preview: http://127.0.0.1:"), line + "".join(errors)
        preview = Preview(process, line.split()[2], line, errors)
        preview.wait_for_line("built ")
        yield preview
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=120) == 0, "".join(errors)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if reader.ident is not None:
            reader.join(timeout=30)
        process.stdout.close()
        stderr.close()


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under *folder* by its relative path, with its bytes."""
    return {path.relative_to(folder).as_posix(): path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_file()}
