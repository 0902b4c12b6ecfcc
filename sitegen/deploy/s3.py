"""The S3 protocol: the only module that talks to an object store, and the only boto3 user.

Role: a `Bucket` lists a target's objects (key → ETag, a page of 1,000 per request),
uploads one object with its headers and its sha256 as metadata (`x-amz-meta-sha256`),
reads one object's metadata (a HEAD: the deploy marker's generation),
deletes objects 1,000 per request, and asks CloudFront to invalidate paths. boto3
signs, retries (standard mode: 5xx, throttling and connection errors, with backoff)
and reads credentials from the environment and its usual chain (`AWS_ACCESS_KEY_ID`,
`AWS_PROFILE`, instance roles, ...). Each failure becomes one sentence with the exit
code SPEC.md's pattern gives: 3 the credentials were refused, 5 the store is
unreachable, 2 no credentials or no such bucket, 1 otherwise. It must never take a
credential from anywhere but boto's chain, and never put one (or a response body,
which may echo the access key id) into a message.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn

import boto3
from botocore.config import Config as BotoConfig
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionError,
    HTTPClientError,
    NoCredentialsError,
    PartialCredentialsError,
    ProfileNotFound,
)

from sitegen.configdeploy import DeployTarget
from sitegen.errors import ConfigError, DeployError, StorageAuthError, StorageUnreachable

_REFUSED = {"InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "ExpiredToken",
            "InvalidToken", "InvalidClientTokenId", "AllAccessDisabled",
            "AuthorizationHeaderMalformed", "InvalidSecurity", "403", "Forbidden"}
_CREDENTIALS = ("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) in the "
                "environment")
_BATCH = 1000


class Bucket:
    """The objects of one target (keys relative to its prefix)."""

    def __init__(self, name: str, target: DeployTarget) -> None:
        self.name = name
        self.target = target
        self.prefix = target.prefix
        # Checksums only where the operation requires one (DeleteObjects): S3-compatible
        # stores other than AWS do not all accept the CRC headers boto3 adds by default.
        config = BotoConfig(retries={"mode": "standard", "max_attempts": 4},
                            connect_timeout=10, read_timeout=60,
                            max_pool_connections=target.concurrency,
                            request_checksum_calculation="when_required",
                            response_checksum_validation="when_required")
        with self._failing("connect to"):
            self.session = boto3.session.Session()
            #: The botocore client (tests register event hooks on `client.meta.events`).
            self.client: Any = self.session.client(
                "s3", endpoint_url=target.endpoint, region_name=target.region or "us-east-1",
                config=config)

    def listing(self) -> dict[str, str]:
        """Every object under the prefix: path (prefix removed) → ETag."""
        found: dict[str, str] = {}
        with self._failing("list"):
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.target.bucket, Prefix=self.prefix)
            for page in pages:
                for item in page.get("Contents", []):
                    found[str(item["Key"])[len(self.prefix):]] = str(item["ETag"])
        return found

    def put(self, path: str, body: bytes, sha256: str, headers: dict[str, str],
            redirect: str | None = None) -> str:
        """Upload *body* as *path*; returns the store's ETag of it."""
        extra = dict(headers)
        if redirect is not None:
            extra["WebsiteRedirectLocation"] = redirect
        return self.put_object(path, body, {"sha256": sha256}, extra)

    def put_object(self, path: str, body: bytes, metadata: dict[str, str],
                   headers: dict[str, str]) -> str:
        """Upload *body* as *path* with user *metadata*; returns the store's ETag of it."""
        with self._failing("upload to"):
            answer = self.client.put_object(Bucket=self.target.bucket, Key=self.prefix + path,
                                            Body=body, Metadata=metadata, **headers)
        return str(answer.get("ETag", ""))

    def head(self, path: str) -> dict[str, str] | None:
        """The user metadata of the object *path* (one HEAD), or None when there is none."""
        with self._failing("read"):
            try:
                answer = self.client.head_object(Bucket=self.target.bucket,
                                                 Key=self.prefix + path)
            except ClientError as error:
                status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
                if status == 404 or error.response.get("Error", {}).get("Code") in (
                        "404", "NoSuchKey", "NotFound"):
                    return None
                raise
        return {str(k).lower(): str(v) for k, v in (answer.get("Metadata") or {}).items()}

    def delete(self, paths: Sequence[str]) -> None:
        """Remove *paths* (1,000 per request); every one must be gone."""
        for start in range(0, len(paths), _BATCH):
            chunk = paths[start:start + _BATCH]
            with self._failing("delete from"):
                answer = self.client.delete_objects(Bucket=self.target.bucket, Delete={
                    "Objects": [{"Key": self.prefix + p} for p in chunk], "Quiet": True})
            errors = answer.get("Errors") or []
            if errors:
                code = str(errors[0].get("Code", "error"))
                _raise(self, "delete from", code, 403 if code in _REFUSED else 0)

    def invalidate(self, distribution: str, paths: Sequence[str]) -> None:
        """Ask CloudFront to drop *paths* ("/a/", "/*") of *distribution* from its caches."""
        with self._failing("invalidate the CDN of"):
            client = self.session.client("cloudfront")
            client.create_invalidation(DistributionId=distribution, InvalidationBatch={
                "Paths": {"Quantity": len(paths), "Items": list(paths)},
                "CallerReference": f"sitegen-{time.time_ns()}"})

    @contextmanager
    def _failing(self, what: str) -> Iterator[None]:
        try:
            yield
        except (NoCredentialsError, PartialCredentialsError):
            raise ConfigError(f"no credentials for deploy target '{self.name}': set "
                              f"{_CREDENTIALS}") from None
        except ProfileNotFound:
            raise ConfigError(f"the profile in AWS_PROFILE for deploy target '{self.name}' "
                              "does not exist: fix AWS_PROFILE or unset it") from None
        except ClientError as error:
            info = error.response.get("Error", {})
            meta = error.response.get("ResponseMetadata", {})
            _raise(self, what, str(info.get("Code", "")), int(meta.get("HTTPStatusCode", 0)))
        except (ConnectionError, HTTPClientError):
            raise StorageUnreachable(
                f"cannot {what} {self.target.url} of deploy target '{self.name}': the store "
                "did not answer (check the endpoint and the network; the next deploy "
                "finishes the job)") from None
        except BotoCoreError as error:
            raise DeployError(f"cannot {what} {self.target.url} of deploy target "
                              f"'{self.name}': {type(error).__name__}") from None


def _raise(bucket: Bucket, what: str, code: str, status: int) -> NoReturn:
    where = f"{bucket.target.url} of deploy target '{bucket.name}'"
    if code in _REFUSED or status == 403:
        raise StorageAuthError(f"the store refused the credentials to {what} {where} "
                               f"({code or status}): check {_CREDENTIALS}") from None
    if code == "NoSuchBucket":
        raise ConfigError(f"the bucket of {where} does not exist: create it, or fix the "
                          "url in site.toml") from None
    if status >= 500 or code in ("SlowDown", "ServiceUnavailable", "InternalError"):
        raise StorageUnreachable(f"cannot {what} {where}: the store kept failing "
                                 f"({code or status}) after retries; the next deploy "
                                 "finishes the job") from None
    raise DeployError(f"cannot {what} {where}: the store answered {code or status}") from None


__all__ = ["Bucket"]
