"""Helpers of the deploy tests: moto's S3 server, listings, a request counter, demo sites."""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import boto3
import httpx

from sitegen.build import BuildOptions, run_build
from sitegen.config import Config, parse_config
from sitegen.deploy.s3 import Bucket
from sitegen.deploy.targets import DeployTarget
from sitegen.emit.manifest import MANIFEST_NAME
from sitegen.workspace import Workspace

KEY_ID, SECRET = "AKIASITEGENTESTKEY01", "sitegen-test-secret-do-not-print-0123456789"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def s3_client(endpoint: str) -> Any:
    return boto3.session.Session().client("s3", endpoint_url=endpoint, region_name="us-east-1")


def listing(endpoint: str, bucket: str, prefix: str = "") -> dict[str, bytes]:
    """Every object under *prefix* of *bucket*: path (prefix removed) → bytes."""
    client = s3_client(endpoint)
    found: dict[str, bytes] = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            body = client.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()
            found[item["Key"][len(prefix):]] = body
    return found


def site_files(output: Path) -> dict[str, bytes]:
    """Every file of a built output but the manifest."""
    return {p.relative_to(output).as_posix(): p.read_bytes() for p in output.rglob("*")
            if p.is_file() and p.name != MANIFEST_NAME}


@dataclass
class Counter:
    """The requests boto3 sent, in order: (method, key)."""

    sent: list[tuple[str, str]] = field(default_factory=list)

    def hook(self, request: Any, **kwargs: Any) -> None:
        parts = urlsplit(request.url)
        key = unquote(parts.path).split("/", 2)[2] if parts.path.count("/") >= 2 else ""
        self.sent.append((request.method, key))

    def factory(self, name: str, target: DeployTarget) -> Bucket:
        bucket = Bucket(name, target)
        bucket.client.meta.events.register("before-send.s3", self.hook)
        return bucket

    def writes(self) -> list[tuple[str, str]]:
        return [(m, k) for m, k in self.sent if m in ("PUT", "DELETE", "POST")]

    def puts(self) -> list[str]:
        return [k for m, k in self.sent if m == "PUT"]


def deploy_config(root: Path, endpoint: str, bucket: str, **target: object) -> Config:
    return parse_config({
        "site": {"title": "The Demo Workshop", "url": "https://notes.acme.test/"},
        "api": {"url": "https://cas.example.test", "workspace": "65f0c0ffee0123456789abcd"},
        "deploy": {"test": {"url": f"s3://{bucket}", "endpoint": endpoint, **target}},
    }, root)


def build(config: Config, workspace: Workspace) -> Path:
    output = config.output_path()
    run_build(config, BuildOptions(output=output, workspace=workspace))
    return output


def reset_auth(endpoint: str, count: str) -> None:
    """Make moto check credentials after *count* more requests ("inf": never)."""
    httpx.post(f"{endpoint}/moto-api/reset-auth", content=count.encode()).raise_for_status()
