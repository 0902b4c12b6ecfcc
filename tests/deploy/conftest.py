"""Fixtures of the deploy tests: moto's S3 server on loopback, credentials, a bucket.

The server is moto's `ThreadedMotoServer` (a real S3-protocol HTTP server) on 127.0.0.1
and a free port; boto3 talks to it over the network as it would to any S3-compatible
store. Requests are counted at the client (boto3's `before-send` event, `Counter`);
every test that counts also lists the bucket to check what it finally holds.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from moto.server import ThreadedMotoServer

from sitegen.config import demo_config
from sitegen.workspace import Workspace
from tests.content import synced
from tests.deploy.s3server import KEY_ID, SECRET, free_port, s3_client


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Credentials for the emulated store only; the machine's AWS files are never read."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN",
                 "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture
def bucket_name(s3_endpoint: str, aws_env: None) -> str:
    name = f"site-{uuid.uuid4().hex[:12]}"
    s3_client(s3_endpoint).create_bucket(Bucket=name)
    return name


@pytest.fixture(scope="session")
def demo_workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return synced(demo_config(None, tmp_path_factory.mktemp("fetch")))
