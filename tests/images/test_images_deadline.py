"""Every image's processing has a deadline, and so has the whole stage: an image slow to
decode (a small progressive JPEG whose last scan repeats) is refused after `[images]
decode_seconds` of CPU and remembered; the images the stage's `[images] deadline` leaves
unmade are made by a later build; Ctrl-C during a decode stops the build at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sitegen.build import BuildOptions, run_build
from sitegen.config import load_config
from sitegen.fetch.stored import open_config_store
from sitegen.images import variants
from sitegen.images.failures import FAILED_KIND
from sitegen.images.process import Processed, Settings
from sitegen.images.worker import Limits, process_all
from tests.images.imagehost import image_host, png
from tests.images.sites import ServiceTransport, build, config, page_of, workspace
from tests.images.slowjpeg import scans, slow_jpeg
from tests.localenv import developer_env

JPEG = {"content-type": "image/jpeg"}
PNG = {"content-type": "image/png"}


def test_the_slow_jpeg_is_small_and_valid_and_its_last_scan_repeats() -> None:
    data = slow_jpeg(3000, 1000)
    assert len(data) < 100_000 and len(scans(data)) > 1000
    made = process_all({"small": slow_jpeg(64, 3)}, Settings((32,), (), 80, 10**6),
                       Limits(30, time.monotonic() + 60))
    assert isinstance(made["small"], Processed)  # (a valid JPEG: it decodes)


def test_an_image_over_its_cpu_seconds_is_refused_for_good_and_the_others_are_made() -> None:
    """Old code: Pillow decoded it for as long as it took, in the building process."""
    settings = Settings((480,), ("webp",), 80, 50_000_000)
    started = time.monotonic()
    made = process_all({"slow": slow_jpeg(3000, 1000), "good": png(800, 600)}, settings,
                       Limits(1.0, time.monotonic() + 120))
    assert isinstance(made["good"], Processed)
    reason, permanent = made["slow"]  # type: ignore[misc]
    assert permanent and "[images] decode_seconds" in reason, reason
    assert time.monotonic() - started < 60  # (~3 s here; its decode alone takes ~15 s)


def _failures(cfg: object) -> dict[str, bytes]:
    with open_config_store(cfg) as store:  # type: ignore[arg-type]
        keys = [str(k) for (k,) in store.db.execute(
            "SELECT key FROM derived WHERE kind = ?", (FAILED_KIND,))]
        return store.derived(FAILED_KIND, keys)


def test_a_slow_image_is_refused_like_a_failed_download_and_never_decoded_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    given: list[int] = []
    real = variants.process_all
    monkeypatch.setattr(variants, "process_all", lambda jobs, settings, limits: (
        given.extend(len(d) for d in jobs.values()), real(jobs, settings, limits))[1])
    slow = slow_jpeg(3000, 1000)
    with image_host({"/slow.jpg": (200, JPEG, slow), "/a.png": (200, PNG, png())}) as host:
        data = workspace(f"![Slow]({host.url('/slow.jpg')})\n\n![Fine]({host.url('/a.png')})\n")
        cfg, out = config(tmp_path, api=host.origin, decode_seconds=1), tmp_path / "_site"
        first = build(cfg, out, data)
        said = [w for w in first.warning_messages if host.url("/slow.jpg") in w]
        assert len(said) == 1 and "[images] decode_seconds" in said[0], first.warning_messages
        assert "links to it where it is" in said[0]  # (as a refused image: it is absolute)
        html = page_of(out)
        assert f'src="{host.url("/slow.jpg")}"' in html and 'alt="Fine"' in html
        assert len(slow) in given
        assert [k for k in _failures(cfg) if k.endswith(host.url("/slow.jpg"))]
        given.clear()
        second = build(cfg, out, data)
        assert len(slow) not in given and host.hits["/slow.jpg"] == 1  # remembered
        again = [w for w in second.warning_messages if host.url("/slow.jpg") in w]
        assert again == said and page_of(out) == html


def test_the_stage_deadline_leaves_an_image_unmade_and_unremembered(tmp_path: Path) -> None:
    """Past `[images] deadline` the image is left for a later build with one warning (the
    service's own: its alt text meanwhile, never a link to the service), and nothing is
    remembered of it: a later build with a shorter decode allowance refuses it."""
    with image_host({"/slow.jpg": (200, JPEG, slow_jpeg(3000, 2000))}) as host:
        data = workspace(f"![Slow]({host.url('/slow.jpg')})\n")
        out = tmp_path / "_site"
        started = time.monotonic()
        first = build(config(tmp_path, api=host.origin, decode_seconds=600, deadline=4),
                      out, data)
        assert time.monotonic() - started < 60
        said = [w for w in first.warning_messages if "[images] deadline" in w]
        assert len(said) == 1 and "1 image(s) are left for a later build" in said[0], said
        assert "1 of the service's own show their alt text" in said[0]
        assert not [w for w in first.warning_messages if host.url("/slow.jpg") in w]
        assert host.url("/slow.jpg") not in page_of(out) and "Slow" in page_of(out)
        cfg = config(tmp_path, api=host.origin, decode_seconds=1)
        assert not _failures(cfg)
        second = build(cfg, out, data)
        assert host.hits["/slow.jpg"] == 1  # (its bytes were kept)
        assert [w for w in second.warning_messages
                if host.url("/slow.jpg") in w and "decode_seconds" in w]


SITE = """[site]
title = "Slow"
url = "https://slow.example.test/"
description = "A site with a slow image"

[api]
url = "{api}"
workspace = "65f0c0ffee0123456789abcd"
cache_dir = ".store"

[images]
timeout = 5.0
deadline = {deadline}
decode_seconds = 600
"""


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.extend(int(p) for p in text)
    return found


def _alive(pid: int) -> bool:
    """Whether the process *pid* still runs (a zombie does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux's /proc")
def test_ctrl_c_during_a_decode_stops_it_within_a_second(tmp_path: Path) -> None:
    """Old code: the decode ran in a thread of the building process, and Ctrl-C took
    effect only when it was over (~50 s of CPU for this image, ~100 s for 7000×7000)."""
    with image_host({"/slow.jpg": (200, JPEG, slow_jpeg(5000, 2000))}) as host:
        (tmp_path / "site.toml").write_text(SITE.format(api=host.origin, deadline=4))
        cfg = load_config(tmp_path / "site.toml")
        data = workspace(f"![Slow]({host.url('/slow.jpg')})\n")
        first = run_build(cfg, BuildOptions(output=tmp_path / "out",
                                            transport=ServiceTransport(data)))
        assert [w for w in first.warning_messages if "[images] deadline" in w]
    (tmp_path / "site.toml").write_text(SITE.format(api=host.origin, deadline=600))
    env = developer_env(NO_COLOR="1", PYTHONUNBUFFERED="1")
    with subprocess.Popen([sys.executable, "-m", "sitegen", "build", "--offline", "-o", "out",
                           "--report", "report.json"], cwd=tmp_path, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          start_new_session=True) as sitegen:
        try:
            deadline = time.monotonic() + 120
            while not (workers := _children(sitegen.pid)):
                assert sitegen.poll() is None, sitegen.communicate()
                assert time.monotonic() < deadline, "the decode never started"
                time.sleep(0.05)
            time.sleep(1.0)  # (decoding: the image takes ~50 s of CPU)
            assert sitegen.poll() is None
            os.killpg(sitegen.pid, signal.SIGINT)
            sent = time.monotonic()
            while any(_alive(pid) for pid in workers) and time.monotonic() < sent + 60:
                time.sleep(0.01)
            decoder = time.monotonic() - sent
            _, err = sitegen.communicate(timeout=60)
            stopped = time.monotonic() - sent
        finally:
            if sitegen.poll() is None:
                os.killpg(sitegen.pid, signal.SIGKILL)
    assert sitegen.returncode == 130, err
    assert [line for line in err.splitlines() if not line.startswith("warning:")] == [
        "error: interrupted; the previous output was kept"], err
    assert decoder < 1.0, decoder  # the decode stopped (~0.1 s here)
    assert stopped < 5.0, stopped  # and the build ended (~0.5 s here, 1.7 s when busy)
    assert not any(_alive(pid) for pid in workers)  # no decoder left
    assert json.loads((tmp_path / "report.json").read_text())["status"] == 130
    assert not _failures(cfg)  # (an interrupted decode is no refusal)
