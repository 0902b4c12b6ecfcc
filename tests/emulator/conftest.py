"""Fixtures of the emulator tests: a tiny hand-written workspace and in-process clients."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Callable
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from sitegen.emulator import Faults, create_app

WS = "65f0c0ffee0123456789abcd"
OTHER_WS = "65f0c0ffee0123456789ffff"
AG1 = "65f0a0000000000000000001"
AG2 = "65f0a0000000000000000002"
CL1 = "65f0c1000000000000000001"
CL2 = "65f0c1000000000000000002"
AU1 = "65f0d1000000000000000001"
AU2 = "65f0d1000000000000000002"
USER = "65f0e0000000000000000001"
CYCLE = "65f0f0000000000000000001"


def _article(n: int, **fields: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": f"65f0b00000000000000000{n:02d}",
        "workspaceId": WS,
        "agentId": AG1,
        "clusterId": CL1,
        "authorIdentityId": AU1,
        "title": f"Article {n}",
        "slug": f"article-{n}",
        "description": f"Description {n}",
        "content": f"# Article {n}\n\nBody {n}.",
        "status": "published",
        "language": "en",
        "model": "gpt-4o",
        "tone": "friendly",
        "tags": ["python"],
        "blocks": [{"type": "text", "content": f"Block {n}"}],
        "meta": {"keywords": "alpha, beta", "description": "Meta", "tags": ["python"]},
        "createdBy": USER,
        "updatedBy": USER,
        "createdAt": f"2024-03-{n:02d}T10:00:00.000Z",
        "updatedAt": f"2024-04-{n:02d}T10:00:00.000Z",
    }
    record.update(fields)
    return record


TINY: dict[str, Any] = {
    "workspace": {"id": WS, "ownerId": USER, "name": "Acme Notes", "description": "Notes",
                  "plan": "Pro", "isActive": True, "createdAt": "2024-01-01T00:00:00.000Z",
                  "updatedAt": "2024-01-02T00:00:00.000Z"},
    "agents": [
        {"id": AG1, "workspaceId": WS, "name": "Writer", "description": "Writes posts",
         "status": "active", "executionMode": "scheduled", "schedule": "0 9 * * 1",
         "model": "gpt-4o", "tone": "friendly", "language": "en",
         "prompt": "Write about Python packaging", "isActive": True,
         "createdAt": "2024-02-01T00:00:00.000Z", "updatedAt": "2024-02-02T00:00:00.000Z",
         "createdBy": USER, "updatedBy": USER},
        {"id": AG2, "workspaceId": WS, "name": "Archivist", "description": "Old things",
         "status": "inactive", "executionMode": "batched", "schedule": "",
         "model": "claude-3", "tone": "formal", "language": "de",
         "prompt": "Summarise history", "isActive": False,
         "createdAt": "2024-02-05T00:00:00.000Z", "updatedAt": "2024-02-06T00:00:00.000Z",
         "createdBy": USER, "updatedBy": USER},
    ],
    "clusters": [
        {"id": CL1, "workspaceId": WS, "name": "Packaging", "description": "Wheels",
         "color": "#ff0000", "contentCycleId": CYCLE,
         "createdAt": "2024-01-10T00:00:00.000Z", "updatedAt": "2024-05-01T00:00:00.000Z"},
        {"id": CL2, "workspaceId": WS, "name": "Empty", "description": "Nothing yet",
         "color": "#00ff00", "contentCycleId": None,
         "createdAt": "2024-01-11T00:00:00.000Z", "updatedAt": "2024-05-02T00:00:00.000Z"},
    ],
    "authorIdentities": [
        {"id": AU1, "workspaceId": WS, "name": "Ada", "bio": "Engineer",
         "imageUrl": "https://img.example.com/ada.png", "createdByUserId": USER,
         "createdAt": "2024-01-05T00:00:00.000Z", "updatedAt": "2024-01-06T00:00:00.000Z"},
        {"id": AU2, "workspaceId": WS, "name": "Bob", "bio": "Writer", "imageUrl": "",
         "createdByUserId": USER,
         "createdAt": "2024-01-07T00:00:00.000Z", "updatedAt": "2024-01-08T00:00:00.000Z"},
    ],
    "articles": [
        _article(1),
        _article(2, tags=["rust", "Python"], language="de", title="Zweiter Artikel"),
        _article(3, status="draft", clusterId=None),
        _article(4, status="archived", agentId=AG2, authorIdentityId=None),
        _article(5, agentId=AG2, clusterId=None, tags=[], model="claude-3"),
        _article(6, createdAt="2024-03-05T10:00:00.000Z", title="Same time as five"),
    ],
    "socialPosts": [
        {"id": "65f0aa0000000000000000a1", "workspaceId": WS, "title": "Launch",
         "slug": "launch", "content": "We launched", "selectedImageSlot": "square",
         "images": {"square": "https://img.example.com/s.png", "portrait": None,
                    "landscape": None},
         "createdByUserId": USER, "createdAt": "2024-06-01T00:00:00.000Z",
         "updatedAt": "2024-06-02T00:00:00.000Z"},
        {"id": "65f0aa0000000000000000a2", "workspaceId": WS, "title": "Tips",
         "slug": "tips", "content": "Five tips", "selectedImageSlot": "landscape",
         "images": {}, "createdByUserId": USER, "createdAt": "2024-06-03T00:00:00.000Z",
         "updatedAt": "2024-06-01T00:00:00.000Z"},
    ],
    "digest": {"workspaceId": WS, "enabled": False, "frequency": "weekly",
               "subject": "Weekly notes", "previewText": "", "senderName": "Acme",
               "replyTo": "news@acme.test", "createdAt": "2024-01-01T00:00:00.000Z",
               "updatedAt": "2024-01-01T00:00:00.000Z"},
}

V1 = {"x-api-key": "Bearer test-key"}
V2 = {"x-api-key": "test-key"}
BASE2 = f"/api/v2/workspaces/{WS}"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def data() -> dict[str, Any]:
    return copy.deepcopy(TINY)


def _make_client(data: dict[str, Any], **options: Any) -> httpx.AsyncClient:
    app = create_app(data, **options)
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                               base_url="http://emulator")
    client.emulator = app.state.emulator  # type: ignore[attr-defined]
    return client


@pytest.fixture
def make_client() -> Callable[..., httpx.AsyncClient]:
    """Factory: an in-process client of a fresh emulator app (`client.emulator` is its state)."""
    return _make_client


@pytest.fixture
async def client(data: dict[str, Any]) -> AsyncIterator[httpx.AsyncClient]:
    async with _make_client(data, faults=Faults()) as c:
        yield c


@pytest.fixture
def ns() -> SimpleNamespace:
    """The tiny workspace's ids and the header of each version."""
    return SimpleNamespace(WS=WS, OTHER_WS=OTHER_WS, AG1=AG1, AG2=AG2, CL1=CL1, CL2=CL2,
                           AU1=AU1, AU2=AU2, USER=USER, CYCLE=CYCLE, V1=V1, V2=V2, BASE2=BASE2)
