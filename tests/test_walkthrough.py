"""The README's walkthrough, run the way a user types it.

The `sh` block under "## Walkthrough" in README.md is read and run line by line in a scratch
folder, with this environment's `sitegen` and `moto_server` first on PATH: each line through
`bash`, as typed (a `\\` line and a here-document continue to the next lines). What an
interactive shell keeps between lines is kept here too: `cd` and `export` change what later
lines run with, a line ending in `&` starts a job in the background and `kill %N` stops job N.
The next line is typed once a job answers on its port (and, for `sitegen serve`, once it said
it built), as a user waits for it. The ports the README names are swapped for free ones, and
HOME and the cache folder point into the scratch folder. After the steps that tell the user to
look at something, the test looks too: the page the edit changed, the one detail request of
the rebuild, the drafts in the preview only, the bucket holding the site and nothing else.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tests.deploy.s3server import listing

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
README_PORTS = ("8765", "8000", "9000")


def walkthrough_lines() -> list[str]:
    """The commands of the README's walkthrough block, continuation lines joined."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Walkthrough", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "README's Walkthrough section has no sh block"
    commands: list[str] = []
    lines = iter(block.group(1).splitlines())
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        while line.endswith("\\"):  # continued: bash reads the backslash-newline as a space
            line = line + "\n" + next(lines)
        if (heredoc := re.search(r"<<\s*'?(\w+)'?", line)):
            end = heredoc.group(1)
            body = []
            for more in lines:
                body.append(more)
                if more.strip() == end:
                    break
            line = line + "\n" + "\n".join(body)
        commands.append(line)
    return commands


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def answers(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class Shell:
    """What an interactive shell keeps between the lines typed into it."""

    cwd: Path
    env: dict[str, str]
    ports: dict[str, str]
    jobs: list[tuple[subprocess.Popen[str], Path]] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)  # each job's line, for `kill %name`

    def typed(self, line: str) -> str:
        for readme, ours in self.ports.items():
            line = re.sub(rf"(?<=[:\s]){readme}\b", ours, line)
        return line

    def run(self, line: str) -> subprocess.CompletedProcess[str]:
        line = self.typed(line)
        if "\n" not in line:  # a comment at the end of a line is the shell's, not the command's
            line = re.sub(r"\s+#(\s.*)?$", "", line)
        first, then_cd, folder = line.partition(" && cd ")
        if then_cd:  # `sitegen init blog && cd blog`: the shell stays in the new folder
            done = self.run(first)
            if done.returncode == 0:
                self.cwd = (self.cwd / folder.split("#", 1)[0].strip()).resolve()
            return done
        words = shlex.split(line.split("#", 1)[0]) if "\n" not in line else []
        if words[:1] == ["cd"] and "$(" in line:  # `cd "$(mktemp -d)"`: the shell says where
            done = subprocess.run(["bash", "-c", f"{line} && pwd"], cwd=self.cwd, env=self.env,
                                  capture_output=True, text=True, check=True)
            self.cwd = Path(done.stdout.strip())
            return done
        if words[:1] == ["cd"]:
            self.cwd = (self.cwd / words[1]).resolve()
            return subprocess.CompletedProcess(words, 0, "", "")
        if words[:1] == ["export"]:
            for word in words[1:]:
                name, _, value = word.partition("=")
                self.env[name] = value
            return subprocess.CompletedProcess(words, 0, "", "")
        if words[:1] == ["kill"] and all(w.startswith("%") for w in words[1:]):
            for word in words[1:]:
                self.stop(self.job(word))
            return subprocess.CompletedProcess(words, 0, "", "")
        if line.rstrip().endswith("&"):
            return self.background(line.rstrip()[:-1])
        return subprocess.run(["bash", "-c", "set -eo pipefail\n" + line], cwd=self.cwd,
                              env=self.env, capture_output=True, text=True, timeout=600,
                              check=False)

    def background(self, line: str) -> subprocess.CompletedProcess[str]:
        log = self.cwd / f".job-{len(self.jobs) + 1}.log"
        with log.open("w") as out:
            job = subprocess.Popen(["bash", "-c", "exec " + line], cwd=self.cwd, env=self.env,
                                   stdout=out, stderr=subprocess.STDOUT, text=True,
                                   start_new_session=True)
        self.jobs.append((job, log))
        self.commands.append(line)
        port = int(re.search(r"(?:--port|-p)\s+(\d+)", line).group(1))  # type: ignore[union-attr]
        deadline = time.monotonic() + 120
        while not (answers(port) and ("sitegen serve" not in line
                                      or re.search(r"^built ", log.read_text(), re.M))):
            assert job.poll() is None, f"`{line}` stopped: {log.read_text()}"
            assert time.monotonic() < deadline, f"`{line}` never answered: {log.read_text()}"
            time.sleep(0.1)
        return subprocess.CompletedProcess(line, 0, "", "")

    def job(self, spec: str) -> int:
        """The job a bash job spec names: `%2`, `%?text` (its line holds text), `%text` (its
        line starts with it); exactly one of those still running, as bash requires."""
        if spec[1:].isdigit():
            return int(spec[1:])
        running = [number for number, (job, _) in enumerate(self.jobs, start=1)
                   if job.poll() is None and (spec[2:] in self.commands[number - 1]
                                              if spec.startswith("%?") else
                                              self.commands[number - 1].startswith(spec[1:]))]
        assert len(running) == 1, f"bash: kill: {spec}: no such job or an ambiguous one"
        return running[0]

    def output(self, number: int) -> str:
        return self.jobs[number - 1][1].read_text()

    def stop(self, number: int) -> None:
        job = self.jobs[number - 1][0]
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGTERM)
            try:
                job.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(job.pid, signal.SIGKILL)
                job.wait()


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Shell]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SITEGEN_", "AWS_"))}
    env.update(PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", HOME=str(tmp_path / "home"),
               XDG_CACHE_HOME=str(tmp_path / "cache"), AWS_CONFIG_FILE=str(tmp_path / "none"),
               AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"),
               AWS_EC2_METADATA_DISABLED="true", TMPDIR=str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    env.pop("CI", None)
    work = tmp_path / "work"
    work.mkdir()
    ports = {port: str(free_port()) for port in README_PORTS}
    shell = Shell(work, env, ports)
    try:
        yield shell
    finally:
        for number in range(len(shell.jobs), 0, -1):
            shell.stop(number)


DETAIL = re.compile(r"GET /api/v2/workspaces/\w+/articles/(\w{24}) 200")


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in folder.rglob("*") if p.is_file()}


def draft_titles() -> list[str]:
    data = json.loads((ROOT / "sitegen" / "emulator" / "data" / "demo-workspace.json")
                      .read_text(encoding="utf-8"))
    return [a["title"] for a in data["articles"] if a["status"] == "draft"]


@pytest.mark.timeout(1200)
def test_the_readme_walkthrough_runs_as_written(shell: Shell, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    lines = walkthrough_lines()
    drafts = draft_titles()
    assert len(drafts) >= 2
    builds: list[str] = []
    emulator_log = shell.cwd / "emulator.log"  # (in the scratch folder the first line makes)
    site = shell.cwd / "blog"
    before: dict[str, bytes] = {}
    seen: set[str] = set()
    for line in lines:
        if line.startswith("sitegen build") and builds:
            before = snapshot(site / "_site")
            requests_before = len(DETAIL.findall(emulator_log.read_text()))
        done = shell.run(line)
        print(f"$ {line}\n{done.stdout}{done.stderr}", flush=True)
        assert done.returncode == 0, f"`{line}` exited {done.returncode}: {done.stderr}"
        if line.startswith("cd "):
            assert shell.cwd.parent == Path(shell.env["TMPDIR"])  # a scratch folder
            emulator_log, site = shell.cwd / "emulator.log", shell.cwd / "blog"
        said = done.stdout + done.stderr
        if line.startswith("sitegen build"):
            builds.append(said)
            assert re.search(r"^built \d+ pages", said, re.M), said
            if len(builds) == 2:
                # One article changed at the service: one detail request, and a handful of
                # the site's pages rewritten, its own among them.
                details = DETAIL.findall(emulator_log.read_text())[requests_before:]
                assert details == ["65f0c0ffeee0000000000001"], details
                after = snapshot(site / "_site")
                changed = {p for p in after if before.get(p) != after[p]}
                assert "night-train-to-vienna/index.html" in changed
                # `--explain` says why, for each page: the article that changed.
                assert ("wrote night-train-to-vienna/index.html: "
                        "article:65f0c0ffeee0000000000001 changed") in done.stdout, said
                assert 0 < len(changed) < len(after) // 4, sorted(changed)
            seen.add("build")
        elif line.startswith("curl") and "__admin" in line:
            assert done.stdout.strip() == "200"
            seen.add("edit")
        elif line.startswith("grep") and "_site/" in line:
            assert "Night train to Vienna, revisited" in done.stdout
        elif line.startswith("sitegen serve --drafts"):
            seen.add("serve")
        elif line.startswith("curl") and "/drafts/" in line:
            shown = done.stdout.split()
            assert len(shown) == len(drafts), done.stdout
            port = re.search(r":(\d+)/drafts/", shell.typed(line)).group(1)  # type: ignore[union-attr]
            first = shown[0].removeprefix('href="')
            page = httpx.get(f"http://127.0.0.1:{port}{first}")
            assert page.status_code == 200
            assert "Draft — not published" in page.text
            assert '<meta name="robots" content="noindex' in page.text
            seen.add("drafts")
        elif line.startswith("sitegen deploy") and "--dry-run" not in line:
            endpoint = f"http://127.0.0.1:{shell.ports['9000']}"
            for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION",
                         "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
                monkeypatch.setenv(name, shell.env[name])
            bucket = listing(endpoint, "blog-site")
            built = snapshot(site / "_site")
            assert set(bucket) == {p for p in built
                                   if p not in ("_headers", "_redirects")
                                   and not p.startswith(".sitegen")}, \
                sorted(set(bucket) ^ set(built))
            for path, body in bucket.items():
                assert body == built[path], path
            seen.add("deploy")
        elif line.startswith("sitegen deploy"):
            assert re.search(r"\b0 to upload, 0 to delete\b", said), said
    assert seen == {"build", "edit", "serve", "drafts", "deploy"}
    # The drafts were in the preview only: never in the output, the store or the bucket.
    for folder in (site / "_site", site / ".sitegen"):
        for path in folder.rglob("*"):
            if path.is_file() and "preview-drafts" not in path.parts:
                data = path.read_bytes()
                for title in drafts:
                    assert title.encode() not in data, (path, title)
    assert all(job.poll() is not None for job, _ in shell.jobs)


def _session_processes(session: int) -> list[int]:
    """The processes still in the session *session* (the shell's, and every job's it started:
    a job of an interactive shell has a process group of its own, in the shell's session)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == session and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def _walk_in_bash(shell: Shell, lines: list[str], number: int) -> str:
    """The whole block typed into one `bash -i` on a terminal (`script` gives it one: job
    control as in a user's), line by line, waiting (as a user does) for each line to finish,
    for each job to answer and for each job stopped to have stopped; what the terminal
    showed."""
    screen = shell.cwd / f"bash-{number}.out"
    with screen.open("w") as sink:
        bash = subprocess.Popen(["script", "-qfec", "bash --norc -i", "/dev/null"],
                                stdin=subprocess.PIPE, stdout=sink,
                                stderr=subprocess.STDOUT, cwd=shell.cwd, env=shell.env,
                                text=True, start_new_session=True)
    assert bash.stdin is not None
    started_jobs: list[tuple[str, int, str]] = []  # (number bash gave, process, line)
    try:
        for step, line in enumerate(lines):
            typed, start = shell.typed(line), len(screen.read_text())
            bash.stdin.write(f'{typed}\necho "::step {step} $?::"\n')
            bash.stdin.flush()
            deadline = time.monotonic() + 600
            while not (done := re.search(rf"::step {step} (\d+)::", screen.read_text())):
                assert bash.poll() is None and time.monotonic() < deadline, screen.read_text()
                time.sleep(0.1)
            assert done.group(1) == "0", f"`{typed}` failed:\n{screen.read_text()[start:]}"
            command = re.sub(r"\s+#(\s.*)?$", "", typed).strip()
            if command.startswith("kill %"):  # the user waits for the jobs to have stopped
                for spec in command.split()[1:]:
                    named = [pid for number, pid, started in started_jobs
                             if (number == spec[1:] if spec[1:].isdigit() else spec[2:] in started
                                 if spec.startswith("%?") else started.startswith(spec[1:]))]
                    while named and Path(f"/proc/{named[-1]}").exists():
                        assert time.monotonic() < deadline, screen.read_text()[start:]
                        time.sleep(0.1)
                bash.stdin.write("\n")  # Enter at an empty prompt: bash says the job is done
                bash.stdin.flush()
                time.sleep(1)
            if command.endswith("&"):  # a job
                port = int(re.search(r"(?:--port|-p)\s+(\d+)", typed).group(1))  # type: ignore[union-attr]
                job = re.search(r"^\[(\d+)\] (\d+)", screen.read_text()[start:], re.M)
                assert job, screen.read_text()[start:]
                started_jobs.append((job.group(1), int(job.group(2)), command))
                while not (answers(port) and ("sitegen serve" not in typed or re.search(
                        r"^built ", screen.read_text()[start:], re.M))):
                    assert time.monotonic() < deadline, screen.read_text()[start:]
                    time.sleep(0.1)
        bash.stdin.write("exit\n")
        bash.stdin.flush()
        bash.wait(timeout=60)
        time.sleep(1)  # (a stopped job's last moments)
        return screen.read_text()
    finally:
        for pid in _session_processes(bash.pid):  # (what a broken block left running)
            os.kill(pid, signal.SIGKILL)
        bash.stdin.close()
        bash.wait(timeout=60)


@pytest.mark.timeout(1800)
def test_the_walkthrough_runs_twice_in_a_row_in_bash(shell: Shell) -> None:
    """Typed into an interactive bash, twice: every line succeeds, and the last one stops
    every job, so nothing holds a port and the second walk works as the first did (before:
    `kill %1 %3` after `kill %2` said "no such job" and left the S3 server running)."""
    lines = walkthrough_lines()
    for number in (1, 2):
        screen = _walk_in_bash(shell, lines, number)
        assert "no such job" not in screen, screen
        assert re.search(r"^wrote night-train-to-vienna/index\.html: article:", screen, re.M)
        for port in shell.ports.values():
            assert not answers(int(port)), (number, port, screen[-2000:])
