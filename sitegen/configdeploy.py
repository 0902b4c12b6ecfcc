"""`[deploy.NAME]` of site.toml: where a site is published, checked strictly.

Role: the configuration model of one deploy target (`url = "s3://bucket/prefix"`,
`endpoint`, `region`, `cdn_invalidate`, `delete`, `redirects`, `concurrency`). A key
that looks like a credential is refused with its own sentence: credentials come from
the environment and boto's usual chain only. This module must never read the
environment, import boto3, or repeat a value it refused.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

#: Key names that would hold a secret: refused in site.toml whatever the spelling.
_CREDENTIAL = re.compile(r"(access|secret|token|password|credential|session|_key$|^key$)",
                         re.IGNORECASE)
_S3_URL = re.compile(r"^s3://([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(/.*)?$")


class DeployTarget(BaseModel):
    """One `[deploy.NAME]` table."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    url: str
    endpoint: str | None = None
    region: str | None = None
    cdn_invalidate: str | None = Field(default=None, min_length=1)
    delete: bool = True
    #: Set `_redirects` as website-redirect metadata (None: on AWS only, where it works).
    redirects: bool | None = None
    concurrency: int = Field(default=8, ge=1, le=64)

    @model_validator(mode="before")
    @classmethod
    def _no_credentials(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key in data:
                if isinstance(key, str) and _CREDENTIAL.search(key):
                    raise ValueError(
                        f"'{key}' looks like a credential, and credentials never go in "
                        "site.toml: remove it and set AWS_ACCESS_KEY_ID and "
                        "AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) in the environment")
        return data

    @field_validator("url")
    @classmethod
    def _s3_url(cls, value: str) -> str:
        if not _S3_URL.match(value):
            raise ValueError("must be an s3:// URL naming a bucket, e.g. "
                             "'s3://my-bucket' or 's3://my-bucket/site'")
        return value

    @field_validator("endpoint")
    @classmethod
    def _http_endpoint(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^https?://[^/\s]+", value):
            raise ValueError("must be an http(s) URL, e.g. 'https://<account>.r2."
                             "cloudflarestorage.com'")
        return value

    @property
    def bucket(self) -> str:
        """The bucket's name."""
        match = _S3_URL.match(self.url)
        assert match is not None  # checked by the validator
        return match.group(1)

    @property
    def prefix(self) -> str:
        """The key prefix the site lives under ("" or "site/")."""
        match = _S3_URL.match(self.url)
        assert match is not None
        path = (match.group(2) or "").strip("/")
        return path + "/" if path else ""

    @property
    def website_redirects(self) -> bool:
        """Whether uploads carry `WebsiteRedirectLocation` (AWS by default, else when asked)."""
        return self.redirects if self.redirects is not None else self.endpoint is None

    def record_key(self, name: str) -> str:
        """Whose record this is in the store: the target's name, endpoint and url."""
        return f"{name}|{self.endpoint or 'aws'}|{self.url}"


__all__ = ["DeployTarget"]
