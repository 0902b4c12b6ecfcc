"""A build killed with SIGKILL mid-write leaves the previous output exactly as it was."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path


def snapshot(root: Path) -> dict[str, tuple[str, int, int]]:
    """Every file under *root*: (sha256, mtime_ns, inode)."""
    result: dict[str, tuple[str, int, int]] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            info = path.stat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            result[path.relative_to(root).as_posix()] = (digest, info.st_mtime_ns, info.st_ino)
    return result

SCRIPT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from sitegen.emit.writer import OutputWriter

    out, version, slow = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    with OutputWriter(out) as writer:
        for i in range(60):
            writer.write(f"p{i}/index.html", f"<p>{version} {i}</p>".encode(), input_hash=version)
            if i == 5:
                print("writing", flush=True)
            time.sleep(slow)
        writer.commit()
    print("done", flush=True)
    """
)


def run(out: Path, version: str, slow: float = 0.0) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(out), version, str(slow)],
        stdout=subprocess.PIPE, text=True, env=env,
    )


def test_sigkill_mid_build_keeps_the_previous_output(tmp_path: Path) -> None:
    out = tmp_path / "_site"
    with run(out, "v1") as first:
        assert first.wait(timeout=60) == 0
    (out / "CNAME").write_text("mine\n")
    before = snapshot(out)
    assert len(before) == 62

    victim = run(out, "v2", slow=0.05)
    assert victim.stdout is not None
    assert victim.stdout.readline().strip() == "writing"
    assert (tmp_path / "._site.sitegen-staging").is_dir()  # really mid-build
    time.sleep(0.1)
    victim.send_signal(signal.SIGKILL)
    victim.wait(timeout=30)
    victim.stdout.close()
    assert victim.returncode == -signal.SIGKILL
    assert snapshot(out) == before

    with run(out, "v3") as after:  # the next build cleans up and succeeds
        assert after.wait(timeout=60) == 0
    assert not (tmp_path / "._site.sitegen-staging").exists()
    assert (out / "p0/index.html").read_text() == "<p>v3 0</p>"
    assert (out / "CNAME").read_text() == "mine\n"
