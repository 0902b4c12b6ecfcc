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
from sitegen.configdeploy import DeployTarget
from sitegen.deploy.marker import MARKER
from sitegen.deploy.objects import published
from sitegen.deploy.s3 import Bucket
from sitegen.workspace import Workspace

KEY_ID, SECRET = "AKIASITEGENTESTKEY01", "sitegen-test-secret-do-not-print-0123456789"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def s3_client(endpoint: str) -> Any:
    return boto3.session.Session().client("s3", endpoint_url=endpoint, region_name="us-east-1")


def listing(endpoint: str, bucket: str, prefix: str = "", *, marker: bool = False
            ) -> dict[str, bytes]:
    """Every object under *prefix* of *bucket*: path (prefix removed) → bytes (the deploy
    marker left out unless *marker*)."""
    client = s3_client(endpoint)
    found: dict[str, bytes] = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            path = item["Key"][len(prefix):]
            if path == MARKER and not marker:
                continue
            found[path] = client.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()
    return found


def site_files(output: Path) -> dict[str, bytes]:
    """Every file of a built output that is published: all but the manifest and the host
    files (`deploy.objects.UNPUBLISHED`)."""
    return {p.relative_to(output).as_posix(): p.read_bytes() for p in output.rglob("*")
            if p.is_file() and published(p.relative_to(output).as_posix())}


@dataclass
class Counter:
    """The requests boto3 sent, in order: (method, key); `site` leaves out the deploy
    marker's, `marker` has only those."""

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

    def site(self) -> list[tuple[str, str]]:
        return [(m, k) for m, k in self.sent if not k.endswith(MARKER)]

    def marker(self) -> list[str]:
        return [m for m, k in self.sent if k.endswith(MARKER)]

    def puts(self) -> list[str]:
        return [k for m, k in self.site() if m == "PUT"]


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


def edit_article(workspace: Workspace, index: int, text: str) -> Workspace:
    """*workspace* with *text* added to the body of its published article number *index*."""
    published = [i for i, a in enumerate(workspace.articles) if a.status == "published"
                 and a.slug]
    articles = list(workspace.articles)
    article = articles[published[index]]
    articles[published[index]] = article.model_copy(
        update={"content": (article.content or "") + text, "blocks": None})
    return workspace.model_copy(update={"articles": articles})


def unpublish_article(workspace: Workspace, index: int) -> tuple[Workspace, str]:
    """*workspace* with its published article number *index* a draft, and that one's slug."""
    published = [i for i, a in enumerate(workspace.articles) if a.status == "published"
                 and a.slug]
    articles = list(workspace.articles)
    article = articles[published[index]]
    articles[published[index]] = article.model_copy(update={"status": "draft"})
    return workspace.model_copy(update={"articles": articles}), str(article.slug)


def reset_auth(endpoint: str, count: str) -> None:
    """Make moto check credentials after *count* more requests ("inf": never)."""
    httpx.post(f"{endpoint}/moto-api/reset-auth", content=count.encode()).raise_for_status()
