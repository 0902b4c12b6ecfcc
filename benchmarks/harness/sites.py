"""Prepare what the steps measure: workspaces, emulators, site folders and warm stores.

Role: everything a step needs before its stopwatch starts. Workspaces come from the
emulator's generator (`python -m sitegen.emulator.generator`), served over real HTTP
by `sitegen emulate` as a separate process; each site is a `site.toml` in its own
folder under the run's temporary directory. It must never write inside the
repository, and the API key it hands sitegen is a throwaway value for the emulator.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.harness.measure import StepFailed, last_line, run_process
from benchmarks.harness.stats import Row

SITEGEN = [sys.executable, "-m", "sitegen"]
KEY_ENV = "SITEGEN_API_KEY"


def sitegen(*args: str) -> list[str]:
    """The command line for `sitegen ARGS` with this interpreter."""
    return [*SITEGEN, *args]


#: Where sitegen processes keep their compiled bytecode: outside the repository, and kept
#: between runs, as an installed package keeps the bytecode pip compiled. (Without it, a
#: module edited since the last ordinary run would be compiled again at every measured run.)
PYCACHE = os.path.join(tempfile.gettempdir(), "sitegen-bench-pycache")


def bench_env() -> dict[str, str]:
    """The environment for sitegen processes: a throwaway key the emulator accepts."""
    env = {k: v for k, v in os.environ.items() if k != "SITEGEN_ANALYTICS_KEY"}
    env[KEY_ENV] = "bench-emulator-key"
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = PYCACHE
    return env


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise StepFailed(f"sitegen emulate exited with status {process.returncode} "
                             "before it listened")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise StepFailed(f"sitegen emulate did not listen on port {port} within {timeout:.0f} s")


def start_server(command: list[str], **options: Any) -> subprocess.Popen[Any]:
    """A long-running process (an emulator, a preview) in its own process group.

    `stop` then ends the whole group: a server's children (a preview's forked render
    workers) cannot outlive it, even when the server itself had to be killed.
    """
    return subprocess.Popen(command, start_new_session=True, **options)


def stop(process: subprocess.Popen[Any], grace: float = 5.0) -> None:
    """Stop a process this harness started: SIGINT, then SIGTERM, then SIGKILL.

    A process started by `start_server` leads its own group: every signal goes to the
    group, and once the leader is gone whatever it left in the group is killed.
    """
    group = _own_group(process)
    for signal_number in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        if process.poll() is not None:
            break
        _signal(process, signal_number, group)
        try:
            process.wait(timeout=grace)
            break
        except subprocess.TimeoutExpired:
            continue
    if group:
        _signal(process, signal.SIGKILL, group)


def _own_group(process: subprocess.Popen[Any]) -> bool:
    try:
        return os.getpgid(process.pid) == process.pid
    except ProcessLookupError:  # already reaped: its group (if any) cannot be told
        return False


def _signal(process: subprocess.Popen[Any], signal_number: int, group: bool) -> None:
    try:
        if group:
            os.killpg(process.pid, signal_number)
        else:
            process.send_signal(signal_number)
    except ProcessLookupError:
        pass


@contextmanager
def emulator(data: Path, *, port: int, latency_ms: float, log: Path) -> Iterator[str]:
    """`sitegen emulate` over *data* on *port*; yields the base URL, stops it on exit.

    Article records come without their cluster and author identity (`--no-owner-fields`):
    the API references do not promise those fields, so sitegen is measured where it must
    learn them from the per-owner listings.
    """
    with log.open("ab") as sink:
        process = start_server(
            sitegen("emulate", "--data", str(data), "--port", str(port),
                    "--latency", f"{latency_ms:g}", "--no-owner-fields", "-q"),
            stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT, env=bench_env())
    try:
        _wait_for_port(port, process, timeout=120)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


SITE_TOML = """\
[site]
title = "Benchmark"
url = "https://bench.example.test/"
per_page = 10
output = "_site"

[api]
url = "{api_url}"
workspace = "{workspace}"
concurrency = {concurrency}

[analytics]
enabled = false

[images]
enabled = false  # as the figures in HISTORY.md were measured; bench_images.py measures images

[search]
enabled = {search}
"""


def write_site(root: Path, *, api_url: str, workspace_id: str, concurrency: int,
               search: bool = True) -> Path:
    """A fresh site folder with a `site.toml` for the emulator; returns the config path."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    config = root / "site.toml"
    config.write_text(SITE_TOML.format(api_url=api_url, workspace=workspace_id,
                                       concurrency=concurrency,
                                       search="true" if search else "false"), encoding="utf-8")
    return config


def read_report(path: Path) -> dict[str, Any]:
    """The build report sitegen wrote, or StepFailed naming the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise StepFailed(f"cannot read the build report {path.name} ({error})") from None
    if not isinstance(data, dict):
        raise StepFailed(f"the build report {path.name} is not a JSON object")
    return data


def pages_written(report: dict[str, Any]) -> int:
    """`pages.written` from a build report (0 when absent)."""
    pages = report.get("pages")
    return int(pages.get("written", 0)) if isinstance(pages, dict) else 0


def set_aside(output: Path, trash: Path) -> None:
    """Move the folder *output* out of the way, unremoved (nothing when there is none).

    Deleting ~12,000 files right before a timed build would bill the next build, not the
    deletion: ext4's inode allocator skips inodes freed in the last 60-360 s one by one
    (`recently_deleted()` in `find_inode_bit`), which added 3-6 s of system time to a
    4,000-article build here, to whichever tool ran next. A rename frees nothing, so each
    build starts as on a fresh CI checkout (the content store kept, the output empty);
    every tool gets the same treatment, and the set-aside trees go with the *trash* folder
    after the last measurement.
    """
    if not output.exists():
        return
    trash.mkdir(parents=True, exist_ok=True)
    index = sum(1 for _ in trash.iterdir())
    output.rename(trash / f"{index:04d}-{output.name}")


def mount_type(path: Path, mounts: str) -> str | None:
    """The file-system type of the mount holding *path*, read from *mounts* (the text of
    `/proc/mounts`); None when no line covers it."""
    best, kind = -1, None
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        point = Path(fields[1].replace("\\040", " "))
        if (path == point or point in path.parents) and len(point.parts) > best:
            best, kind = len(point.parts), fields[2]
    return kind


def on_tmpfs(path: Path) -> bool:
    """True when *path* lives on a tmpfs (memory): removing files there bills no later build."""
    try:
        mounts = Path("/proc/mounts").read_text(encoding="utf-8")
    except OSError:
        return False
    return mount_type(path.resolve(), mounts) == "tmpfs"


def discard(folder: Path, trash: Path) -> None:
    """Get *folder* out of the way before a timed build: removed on a tmpfs, where freeing
    inodes costs nothing later (and set-aside trees would hold memory), else `set_aside`."""
    if not folder.exists():
        return
    if on_tmpfs(folder):
        shutil.rmtree(folder)
    else:
        set_aside(folder, trash)


@dataclass
class Site:
    """A site folder whose content store was filled from an emulator on a fixed port."""

    config: Path
    data: Path
    port: int
    articles: int

    @property
    def output(self) -> Path:
        return self.config.parent / "_site"


@dataclass
class Bench:
    """Shared state of one benchmark run: options, generated data, warm sites, results."""

    work: Path
    runs: int
    articles: int
    sync_articles: int
    latency_ms: float
    concurrency: int
    seed: int = 0
    scale_articles: int = 16000  # the large size of the scale step
    ab_with_hugo: bool = False  # the Hugo step measures sitegen's large full build (A/B)
    search: bool = True  # [search] enabled in every site (`run.py --no-search`: off)
    rows: list[Row] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    _data: dict[int, Path] = field(default_factory=dict)
    _sites: dict[str, Site] = field(default_factory=dict)

    def log(self, name: str) -> Path:
        return self.work / f"{name}.log"

    def data(self, articles: int) -> Path:
        """The generated workspace JSON with *articles* articles (made once per size)."""
        if articles not in self._data:
            path = self.work / f"workspace-{articles}.json"
            run_process([sys.executable, "-m", "sitegen.emulator.generator", "--articles",
                         str(articles), "--seed", str(self.seed), "-o", str(path)],
                        label=f"generate a workspace of {articles} articles", timeout=600)
            self._data[articles] = path
        return self._data[articles]

    def workspace(self, articles: int) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.data(articles).read_text(encoding="utf-8"))
        return data

    def workspace_id(self, articles: int) -> str:
        return str(self.workspace(articles)["workspace"]["id"])

    def discard(self, folder: Path) -> None:
        """Remove or set aside *folder* before a timed build (`discard`)."""
        discard(folder, self.work / "set-aside")

    def warm_site(self, articles: int, *, search: bool | None = None,
                  name: str | None = None) -> Site:
        """A site of *articles* articles with a full content store (`sitegen fetch`, no latency).

        *search* is its `[search] enabled` (the run's `--no-search` when None); *name* its
        folder under the work folder (`site-N` when None), one site per name. Its output
        folder is not built here: each step builds what it measures.
        """
        name = name or f"site-{articles}"
        if name not in self._sites:
            data, port = self.data(articles), free_port()
            config = write_site(self.work / name, api_url=f"http://127.0.0.1:{port}",
                                workspace_id=self.workspace_id(articles),
                                concurrency=self.concurrency,
                                search=self.search if search is None else search)
            with emulator(data, port=port, latency_ms=0, log=self.log(f"emulator-{name}")):
                sample = run_process(sitegen("fetch", "-c", str(config), "-q"),
                                     label=f"fill the store of {articles} articles",
                                     env=bench_env(), timeout=1800)
            if not (config.parent / ".sitegen" / "store.sqlite").is_file():
                raise StepFailed(f"`sitegen fetch` of {articles} articles left no store in "
                                 f".sitegen/ ({last_line(sample.output) or 'no output'})")
            self._sites[name] = Site(config, data, port, articles)
        return self._sites[name]
