"""A build killed at any moment leaves the previous output or the new one, never a mix.

Real processes: each build runs in a child whose writes and links are slowed down, so
that a signal can land in the middle of the writing or of the commit.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from sitegen.outputnames import MANIFEST_NAME

SITE_CODE = textwrap.dedent(
    """
    def site(version):
        '''Even pages change with every version, odd ones never; one page per version.'''
        files = {f"p{i}/index.html": (f"<p>{version if i % 2 == 0 else 'same'} {i}</p>").encode()
                 for i in range(60)}
        files[f"only-{version}/index.html"] = version.encode()
        return files
    """
)

SCRIPT = SITE_CODE + textwrap.dedent(
    """
    import json, signal, sys, time
    from pathlib import Path
    from sitegen.emit import tree
    from sitegen.emit.writer import OutputWriter

    out, version, slow, before = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4]

    def stop(signum, frame):
        raise SystemExit(143)  # as the CLI's SIGTERM handler does

    signal.signal(signal.SIGTERM, stop)
    real_link, real_write, told = tree.link_into, tree.write_new, set()

    def tell(what):
        if what not in told:
            told.add(what)
            print(what, flush=True)

    def link_into(source, target):
        tell("committing")
        time.sleep(slow)
        real_link(source, target)

    def write_new(target, data):
        tell("writing")
        time.sleep(slow)
        return real_write(target, data)

    def exchange_dirs(staging, output):
        previous = real_exchange(staging, output)
        tell("swapped")
        if slow:  # a slowed child waits here for its signal: a busy machine can't outrun it
            time.sleep(60)
        return previous

    real_exchange = tree.exchange_dirs
    tree.link_into, tree.write_new, tree.exchange_dirs = link_into, write_new, exchange_dirs
    unchanged = site(before) if before else {}
    kept = out.parent / "record.json"  # what the store would keep of the last commit
    record = json.loads(kept.read_text()) if kept.exists() else None
    with OutputWriter(out, record=record) as writer:
        for path, data in site(version).items():
            if unchanged.get(path) != data or not writer.keep(path):
                writer.write(path, data)
        kept.write_text(json.dumps(writer.commit().record))
    print("done", flush=True)
    """
)

namespace: dict[str, object] = {}
exec(SITE_CODE, namespace)  # the same `site` as the children's


def site(version: str) -> dict[str, bytes]:
    made = namespace["site"](version)  # type: ignore[operator]
    assert isinstance(made, dict)
    return made


def snapshot(root: Path) -> dict[str, tuple[str, int, int]]:
    """Every file under *root*: (sha256, mtime_ns, inode)."""
    result: dict[str, tuple[str, int, int]] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            info = path.stat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            result[path.relative_to(root).as_posix()] = (digest, info.st_mtime_ns, info.st_ino)
    return result


def contents(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and p.name != MANIFEST_NAME}


def run(out: Path, version: str, before: str = "", slow: float = 0.0) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(out), version, str(slow), before],
        stdout=subprocess.PIPE, text=True, env=env,
    )


def finish(out: Path, version: str, before: str) -> None:
    with run(out, version, before) as child:
        assert child.wait(timeout=60) == 0


def beside(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir())


def interrupt(out: Path, sign: signal.Signals, moment: str, delay: float,
              slow: float) -> subprocess.Popen[str]:
    """Build v2 over v1 in a child; send it *sign* *delay* s after it says *moment*."""
    victim = run(out, "v2", "v1", slow=slow)
    assert victim.stdout is not None
    sent = False
    try:
        line = victim.stdout.readline().strip()
        while line != moment:
            assert line in ("writing", "committing", "swapped"), line
            line = victim.stdout.readline().strip()
        time.sleep(delay)
        victim.send_signal(sign)
        sent = True
    finally:
        if not sent:
            victim.kill()
        victim.wait(timeout=60)
        victim.stdout.close()
    return victim


@pytest.mark.parametrize("moment, delay", [
    ("writing", 0.0), ("writing", 0.05), ("committing", 0.0), ("committing", 0.05),
    ("committing", 0.1), ("committing", 0.15), ("swapped", 0.0), ("swapped", 0.05),
])
def test_sigkill_at_any_moment_leaves_the_old_or_the_new_output(
        tmp_path: Path, moment: str, delay: float) -> None:
    out = tmp_path / "_site"
    finish(out, "v1", "")
    (out / "CNAME").write_text("mine\n")
    before = snapshot(out)
    victim = interrupt(out, signal.SIGKILL, moment, delay, slow=0.005)
    assert victim.returncode == -signal.SIGKILL
    after = snapshot(out)
    if moment == "swapped":
        assert after != before
    if after != before:  # the swap happened: the whole new site, nothing else
        assert contents(out) == site("v2")
        assert after["p1/index.html"] == before["p1/index.html"]  # carried, not rewritten
    finish(out, "v3", "v2")  # the next build cleans up and succeeds
    assert contents(out) == site("v3")
    assert beside(out) == ["._site.sitegen-lock", "_site", "record.json"]


@pytest.mark.parametrize("moment", ["writing", "committing"])
def test_sigterm_mid_build_leaves_the_old_output_and_no_staging(
        tmp_path: Path, moment: str) -> None:
    out = tmp_path / "_site"
    finish(out, "v1", "")
    (out / "CNAME").write_text("mine\n")
    before = snapshot(out)
    victim = interrupt(out, signal.SIGTERM, moment, 0.0, slow=0.01)
    assert victim.returncode == 143  # the handler's SystemExit, through the writer's exit
    assert beside(out) == ["._site.sitegen-lock", "_site", "record.json"]
    assert snapshot(out) == before
    finish(out, "v2", "v1")
    assert contents(out) == site("v2")
