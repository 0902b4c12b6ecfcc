"""`python -m sitegen deploy`: exit codes and sentences, in a child process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from sitegen.config import load_config
from sitegen.deploy.run import run_deploy
from sitegen.workspace import Workspace
from tests.deploy.s3server import (
    KEY_ID,
    SECRET,
    Counter,
    build,
    edit_article,
    free_port,
    listing,
    reset_auth,
    site_files,
)

REPO = Path(__file__).resolve().parents[2]


def write_site(root: Path, deploy: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "site.toml"
    path.write_text(textwrap.dedent("""\
        [site]
        title = "The Demo Workshop"
        url = "https://notes.acme.test/"

        [api]
        url = "https://cas.example.test"
        workspace = "65f0c0ffee0123456789abcd"
        """) + textwrap.dedent(deploy), encoding="utf-8")
    return path


def sitegen(*args: str, cwd: Path, env: dict[str, str] | None = None,
            ) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run([sys.executable, "-m", "sitegen", *args], cwd=cwd, env=environ,
                          capture_output=True, text=True, timeout=120)


def test_a_deploy_from_the_command_line_publishes_the_site(
        tmp_path: Path, s3_endpoint: str, bucket_name: str,
        demo_workspace: Workspace) -> None:
    path = write_site(tmp_path, f"""
        [deploy.production]
        url = "s3://{bucket_name}/site"
        endpoint = "{s3_endpoint}"
        """)
    output = build(load_config(path), demo_workspace)
    dry = sitegen("deploy", "--dry-run", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert "would upload index.html (new pages)" in dry.stdout
    assert listing(s3_endpoint, bucket_name) == {}
    done = sitegen("deploy", "--target", "production", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    files = site_files(output)
    assert listing(s3_endpoint, bucket_name, "site/") == files
    assert f"deploy production: {len(files)} uploaded, 0 deleted, 0 unchanged" in done.stderr
    again = sitegen("deploy", cwd=tmp_path)
    assert "0 uploaded, 0 deleted" in again.stderr
    build(load_config(path), edit_article(demo_workspace, 0, "\n\nA later line.\n"))
    hushed = sitegen("deploy", "-q", cwd=tmp_path)  # (`-q`: nothing but warnings and errors)
    assert hushed.returncode == 0 and hushed.stdout == "" and hushed.stderr == ""
    assert listing(s3_endpoint, bucket_name, "site/") == site_files(output)


def test_a_record_sealed_with_another_key_is_said_and_reconciled_not_uploaded_again(
        tmp_path: Path, s3_endpoint: str, bucket_name: str,
        demo_workspace: Workspace) -> None:
    """SITEGEN_CACHE_KEY rotated: the store's record of the bucket no longer verifies. The
    deploy says so in one line, lists the bucket and uploads nothing that is there."""
    path = write_site(tmp_path, f"""
        [deploy.production]
        url = "s3://{bucket_name}/site"
        endpoint = "{s3_endpoint}"
        """)
    build(load_config(path), demo_workspace)
    first = sitegen("deploy", cwd=tmp_path, env={"SITEGEN_CACHE_KEY": "a" * 40})
    assert first.returncode == 0 and "did not verify" not in first.stderr, first.stderr
    rotated = sitegen("deploy", cwd=tmp_path, env={"SITEGEN_CACHE_KEY": "b" * 40})
    assert rotated.returncode == 0, rotated.stderr
    said = [line for line in rotated.stderr.splitlines() if "did not verify" in line]
    assert len(said) == 1 and "listed and reconciled" in said[0], rotated.stderr
    assert "deploy production: 0 uploaded, 0 deleted" in rotated.stderr
    again = sitegen("deploy", cwd=tmp_path, env={"SITEGEN_CACHE_KEY": "b" * 40})
    assert "did not verify" not in again.stderr and "0 uploaded" in again.stderr


@pytest.mark.parametrize(("deploy", "built", "words"), [
    ("", True, "no [deploy.NAME] section"),
    ('[deploy.production]\nurl = "s3://my-bucket"\n', True, "no deploy target 'staging'"),
    ('[deploy.staging]\nurl = "https://my-bucket"\n', True, "must be an s3:// URL"),
    ('[deploy.staging]\nurl = "s3://my-bucket"\n', False, "run `sitegen build` first"),
    ('[deploy.staging]\nurl = "s3://my-bucket"\nsecret_access_key = "hunter2-9876"\n', True,
     "credentials never go in site.toml"),
])
def test_configuration_errors_exit_2_in_one_line(
        tmp_path: Path, deploy: str, built: bool, words: str) -> None:
    path = write_site(tmp_path, deploy)
    if built:
        output = tmp_path / "_site"
        output.mkdir()
        (output / ".sitegen-manifest.json").write_text(
            '{"generator": "sitegen", "version": 3, "files": {}}\n')
    done = sitegen("deploy", "--target", "staging", "-c", str(path), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0]
    assert "hunter2" not in done.stderr + done.stdout


def test_wrong_credentials_exit_3_and_are_never_printed(
        tmp_path: Path, s3_endpoint: str, bucket_name: str,
        demo_workspace: Workspace) -> None:
    path = write_site(tmp_path, f"""
        [deploy.production]
        url = "s3://{bucket_name}"
        endpoint = "{s3_endpoint}"
        """)
    build(load_config(path), demo_workspace)
    reset_auth(s3_endpoint, "0")  # moto checks every request's credentials from now on
    try:
        done = sitegen("deploy", "--debug", cwd=tmp_path)
    finally:
        reset_auth(s3_endpoint, "inf")
    assert done.returncode == 3, done.stderr
    said = done.stdout + done.stderr
    assert "refused the credentials" in done.stderr.strip().splitlines()[-1]
    assert KEY_ID not in said and SECRET not in said and SECRET[:12] not in said
    assert listing(s3_endpoint, bucket_name) == {}


def test_an_unreachable_store_exits_5(tmp_path: Path, demo_workspace: Workspace) -> None:
    path = write_site(tmp_path, f"""
        [deploy.production]
        url = "s3://nowhere-bucket"
        endpoint = "http://127.0.0.1:{free_port()}"
        """)
    build(load_config(path), demo_workspace)
    done = sitegen("deploy", cwd=tmp_path)
    assert done.returncode == 5, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and "did not answer" in last
    assert SECRET not in done.stderr


def test_without_boto3_deploy_exits_2_naming_the_extra(tmp_path: Path) -> None:
    fake = tmp_path / "fake"
    (fake / "boto3").mkdir(parents=True)
    (fake / "boto3" / "__init__.py").write_text('raise ImportError("no boto3 here")\n')
    path = write_site(tmp_path / "site", '[deploy.production]\nurl = "s3://my-bucket"\n')
    done = sitegen("deploy", cwd=path.parent,
                   env={"PYTHONPATH": os.pathsep.join([str(fake), str(REPO)])})
    assert done.returncode == 2, done.stderr
    assert "pip install 'sitegen-cas[deploy]'" in done.stderr


_SLOW_DEPLOY = """
import sys, time
from sitegen.deploy.s3 import Bucket
real = Bucket.put
def slow(self, *args, **kwargs):
    time.sleep(0.02)
    return real(self, *args, **kwargs)
Bucket.put = slow
from sitegen.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_deploy_killed_half_way_is_finished_by_the_next_one(
        tmp_path: Path, s3_endpoint: str, bucket_name: str,
        demo_workspace: Workspace) -> None:
    path = write_site(tmp_path, f"""
        [deploy.production]
        url = "s3://{bucket_name}"
        endpoint = "{s3_endpoint}"
        concurrency = 1
        """)
    config = load_config(path)
    files = site_files(build(config, demo_workspace))
    child = subprocess.Popen(
        [sys.executable, "-c", _SLOW_DEPLOY, "deploy"], cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while len(listing(s3_endpoint, bucket_name)) < 40 and child.poll() is None:
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL  # killed, not finished
    held = listing(s3_endpoint, bucket_name)
    assert 40 <= len(held) < len(files)
    pages = [p for p in held if p.endswith(".html")]
    assets = {p for p in files if not p.endswith((".html", ".xml"))}
    assert not pages or assets <= set(held)  # no page is up before its assets
    counter = Counter()
    [outcome] = run_deploy(config, bucket_factory=counter.factory)
    assert not outcome.listed and len(counter.puts()) < len(files)  # resumed, not restarted
    assert listing(s3_endpoint, bucket_name) == files


@pytest.mark.parametrize(("env", "words"), [
    ({"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""}, "no credentials"),
    ({"AWS_PROFILE": "no-such-profile"}, "AWS_PROFILE"),
])
def test_missing_credentials_exit_2(tmp_path: Path, s3_endpoint: str, bucket_name: str,
                                    env: dict[str, str], words: str) -> None:
    path = write_site(tmp_path, f"""
        [deploy.production]
        url = "s3://{bucket_name}"
        endpoint = "{s3_endpoint}"
        """)
    output = tmp_path / "_site"
    output.mkdir()
    (output / ".sitegen-manifest.json").write_text(
        '{"generator": "sitegen", "version": 3, "files": {}}\n')
    environ = {k: v for k, v in os.environ.items() if not k.startswith("AWS_ACCESS")
               and not k.startswith("AWS_SECRET")}
    environ.update({k: v for k, v in env.items() if v})
    done = subprocess.run([sys.executable, "-m", "sitegen", "deploy", "-c", str(path)],
                          cwd=tmp_path, env={**environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert words in done.stderr.strip().splitlines()[-1]
