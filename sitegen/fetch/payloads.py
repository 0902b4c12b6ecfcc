"""Strict pydantic models of the request bodies sitegen sends (and the emulator accepts).

Role: the bodies of `PUT /digest` and `POST /analytics`, with the bounds of the v2 reference.
They live apart from the tolerant records because a build never sends them (and `EmailStr`
imports `email_validator`, which a build need not load). It must never do I/O or log.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, EmailStr, Field


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class DigestUpdate(_Body):
    """Body of `PUT /digest`, with the bounds of the v2 reference."""

    enabled: bool
    frequency: Literal["daily", "weekly", "monthly"]
    subject: str = Field(min_length=1, max_length=180)
    previewText: str | None = Field(default=None, max_length=280)
    senderName: str = Field(min_length=1, max_length=120)
    replyTo: EmailStr | None = Field(default=None, max_length=200)


class AnalyticsPage(_Body):
    type: Literal["workspace", "article", "agent", "unknown"] | None = None
    path: str | None = None
    host: str | None = None
    siteSlug: str | None = None
    articleSlug: str | None = None


class AnalyticsEvent(_Body):
    """Body of `POST /analytics`, with the bounds of the v2 reference."""

    visitorId: str = Field(min_length=6, max_length=128)
    articleId: str | None = Field(default=None, pattern=r"^[0-9a-fA-F]{24}$")
    agentId: str | None = Field(default=None, pattern=r"^[0-9a-fA-F]{24}$")
    page: AnalyticsPage | None = None
    utm: dict[str, Any] | None = None
    client: dict[str, Any] | None = None
    landingUrl: str | None = Field(default=None, max_length=2000)
