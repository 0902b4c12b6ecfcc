"""Shared fixtures for the fetch tests: a small fake of the service (v1 + v2) and configs."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest

from sitegen.config import Config, parse_config
from sitegen.fetch.ledger import endpoint_template
from sitegen.fetch.stored import load_workspace, open_config_store
from sitegen.fetch.sync import SyncResult, sync
from sitegen.workspace import Workspace

WS = "65f0c0ffee0123456789abcd"
KEY = "SeCrEt-KEY-4242-zz-do-not-print"
BASE = "https://cas.test"


def oid(prefix: str, number: int) -> str:
    """A deterministic 24-hex id: prefix (hex) + number."""
    return f"{prefix}{number:0{24 - len(prefix)}x}"


def make_article(number: int, *, status: str = "published", agent: int = 0,
                 cluster: int | None = 0, author: int | None = 0,
                 updated: str = "2024-05-01T10:00:00.000Z") -> dict[str, Any]:
    return {
        "id": oid("a", number), "workspaceId": WS, "agentId": oid("b", agent),
        "clusterId": None if cluster is None else oid("c", cluster),
        "authorIdentityId": None if author is None else oid("d", author),
        "title": f"Article {number}", "slug": f"article-{number}",
        "description": f"About {number}", "content": f"# Article {number}\n\nBody {number}.",
        "status": status, "language": "en", "tags": ["t1", "t2"],
        "blocks": [{"type": "text", "content": f"Block of {number}"}],
        "meta": {"keywords": "a, b", "description": "d", "tags": ["m"]},
        "createdAt": f"2024-01-01T00:00:{number % 60:02d}.000Z", "updatedAt": updated,
    }


BODY = ("content", "blocks", "meta")
HIDDEN_IN_LISTS = ("clusterId", "authorIdentityId")


@dataclass
class Fault:
    path_contains: str
    count: int
    response: Callable[[], httpx.Response] | None = None
    raises: Exception | None = None


@dataclass
class FakeApi:
    """The service over an in-memory workspace: paginated, body-less lists, detail endpoints."""

    articles: list[dict[str, Any]] = field(default_factory=list)
    v2: bool = True
    bodies_in_lists: bool = False
    hide_membership: bool = True
    calls: Counter[str] = field(default_factory=Counter)
    faults: list[Fault] = field(default_factory=list)
    digest_status: int = 200
    raw_article_items: list[Any] | None = None  # served instead of the article list items
    page_hook: Callable[[list[Any], dict[str, Any]], dict[str, Any]] | None = None
    max_limit: int = 100  # the largest page the service serves, whatever `limit` asks

    agents: list[dict[str, Any]] = field(default_factory=lambda: [
        {"id": oid("b", 0), "name": "Writer", "status": "active", "executionMode": "scheduled"},
        {"id": oid("b", 1), "name": "Other", "status": "sleepy", "executionMode": "??"},
    ])
    clusters: list[dict[str, Any]] = field(default_factory=lambda: [
        {"id": oid("c", 0), "name": "Topic zero"}, {"id": oid("c", 1), "name": "Topic one"}])
    authors: list[dict[str, Any]] = field(default_factory=lambda: [
        {"id": oid("d", 0), "name": "Ada"}, {"id": oid("d", 1), "name": "Bob"}])
    posts: list[dict[str, Any]] = field(default_factory=lambda: [
        {"id": oid("e", 0), "title": "Post", "slug": "post", "selectedImageSlot": "round"}])

    # --- helpers for tests ------------------------------------------------------------
    def fail(self, path_contains: str, status: int, *, count: int = 1, body: bytes = b"{}",
             content_type: str = "application/json", headers: dict[str, str] | None = None
             ) -> None:
        def response() -> httpx.Response:
            return httpx.Response(status, content=body,
                                  headers={"content-type": content_type, **(headers or {})})
        self.faults.append(Fault(path_contains, count, response=response))

    def raise_on(self, path_contains: str, error: Exception, count: int = 1) -> None:
        self.faults.append(Fault(path_contains, count, raises=error))

    def count(self, fragment: str) -> int:
        return sum(n for k, n in self.calls.items() if fragment in k)

    @property
    def total(self) -> int:
        return sum(self.calls.values())

    def published_ids(self) -> set[str]:
        return {a["id"] for a in self.articles if a["status"] == "published"}

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    # --- the service ------------------------------------------------------------------
    def handle(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        self.calls[endpoint_template(request.method, path)] += 1
        for fault in self.faults:
            if fault.count > 0 and fault.path_contains in path:
                fault.count -= 1
                if fault.raises is not None:
                    raise fault.raises
                assert fault.response is not None
                return fault.response()
        if path.startswith("/api/v1/"):
            if request.headers.get("x-api-key") != f"Bearer {KEY}":
                return self._json({"error": "Unauthorized", "details": "bad key"}, 401)
            return self._v1(path[len("/api/v1"):])
        if path.startswith("/api/v2/"):
            if not self.v2:
                return self._json({"error": "Not Found", "details": "no v2"}, 404)
            if request.headers.get("x-api-key") != KEY:
                return self._json({"error": "Unauthorized", "details": "bad key"}, 401)
            query = {k: v[-1] for k, v in parse_qs(request.url.query.decode()).items()}
            return self._v2(path[len(f"/api/v2/workspaces/{WS}"):], query)
        return self._json({"error": "Not Found"}, 404)

    @staticmethod
    def _json(data: Any, status: int = 200) -> httpx.Response:
        return httpx.Response(status, content=json.dumps(data).encode(),
                              headers={"content-type": "application/json"})

    def _list_item(self, article: dict[str, Any]) -> dict[str, Any]:
        hidden = () if self.bodies_in_lists else BODY
        hidden += HIDDEN_IN_LISTS if self.hide_membership else ()
        return {k: v for k, v in article.items() if k not in hidden}

    def _page(self, key: str, items: list[Any], query: dict[str, Any]) -> httpx.Response:
        skip, limit = int(query.get("skip", 0)), min(self.max_limit, int(query.get("limit", 20)))
        page = items[skip:skip + limit]
        total = len(items)
        pages = max(1, -(-total // limit))
        payload: dict[str, Any] = {key: page, "pagination": {
            "skip": skip, "limit": limit, "totalCount": total, "totalPages": pages,
            "currentPage": skip // limit + 1, "hasNextPage": skip + limit < total,
            "hasPrevPage": skip > 0}}
        if self.page_hook is not None:
            payload = self.page_hook(page, payload)
        return self._json(payload)

    def _sorted(self, query: dict[str, Any]) -> list[dict[str, Any]]:
        """The published articles in the order *query* asks (the service's: stable)."""
        field_name = query.get("sortBy", "createdAt")
        assert field_name in ("createdAt", "updatedAt"), field_name
        return sorted(self._published(), key=lambda a: a[field_name] or "",
                      reverse=query.get("sortOrder") == "desc")

    def _published(self, **match: Any) -> list[dict[str, Any]]:
        return [a for a in self.articles if a["status"] == "published"
                and all(a.get(k) == v for k, v in match.items())]

    def _v2(self, rest: str, query: dict[str, Any]) -> httpx.Response:
        if rest == "":
            return self._json({"workspace": {"id": WS, "name": "Test Works"}})
        if rest == "/agents":
            return self._page("agents", self.agents, query)
        if rest == "/articles":
            assert query.get("status") == "published"
            items: list[Any] = (self.raw_article_items if self.raw_article_items is not None
                                else [self._list_item(a) for a in self._sorted(query)])
            return self._page("articles", items, query)
        if rest == "/clusters":
            return self._page("clusters", self.clusters, query)
        if rest == "/author-identities":
            return self._page("authorIdentities", self.authors, query)
        if rest == "/social-posts":
            return self._page("socialPosts", self.posts, query)
        if rest == "/digest":
            if self.digest_status != 200:
                return self._json({"error": "nope"}, self.digest_status)
            return self._json({"digest": {"workspaceId": WS, "enabled": True,
                                          "frequency": "weekly", "subject": "News"}})
        match = re.fullmatch(r"/(clusters|author-identities)/([0-9a-f]{24})/articles", rest)
        if match:
            field_name = "clusterId" if match.group(1) == "clusters" else "authorIdentityId"
            members = self._published(**{field_name: match.group(2)})
            return self._page("articles", [self._list_item(a) for a in members], query)
        match = re.fullmatch(r"/articles/([0-9a-f]{24})", rest)
        if match:
            return self._article(match.group(1))
        return self._json({"error": "Not Found"}, 404)

    def _article(self, article_id: str) -> httpx.Response:
        for article in self.articles:
            if article["id"] == article_id:
                return self._json({"article": article})
        return self._json({"error": "Not Found", "details": "Article not found"}, 404)

    def _v1(self, rest: str) -> httpx.Response:
        if rest == f"/workspaces/{WS}":
            agents = []
            for agent in self.agents:
                embedded = [{k: v for k, v in a.items() if k not in BODY + HIDDEN_IN_LISTS}
                            for a in self._published(agentId=agent["id"])]
                agents.append({**agent, "articles": embedded})
            return self._json({"workspace": {"id": WS, "name": "Test Works", "plan": "Pro"},
                               "agents": agents})
        match = re.fullmatch(r"/articles/([0-9a-f]{24})", rest)
        if match:
            return self._article(match.group(1))
        return self._json({"error": "Not Found"}, 404)


def stamp(minute: int) -> str:
    """An `updatedAt` *minute* minutes into May 2024."""
    return f"2024-05-{1 + minute // 1440:02d}T{minute // 60 % 24:02d}:{minute % 60:02d}:00.000Z"


def dated_service(count: int = 250) -> FakeApi:
    """*count* published articles with distinct update times (article n updated at minute n)."""
    articles = [make_article(n, cluster=n % 2, author=n % 2, agent=n % 2, updated=stamp(n))
                for n in range(1, count + 1)]
    return FakeApi(articles=articles, hide_membership=False)


def run_sync(config: Config, fake: FakeApi, **options: Any) -> SyncResult:
    """A sync of *fake* into *config*'s store (opened for it and closed after)."""
    with open_config_store(config) as store:
        return sync(config, store, key=KEY, transport=fake.transport(), **options)


def offline(config: Config) -> SyncResult:
    """An `--offline` sync from *config*'s store."""
    with open_config_store(config) as store:
        return sync(config, store, key=None, offline=True)


def stored(config: Config) -> Workspace | None:
    """What *config*'s store holds now."""
    with open_config_store(config) as store:
        return load_workspace(store)


def resync(config: Config, fake: FakeApi, **options: Any) -> SyncResult:
    """A sync of *fake* into *config*'s store, its call counts cleared first."""
    fake.calls.clear()
    return run_sync(config, fake, **options)


def from_scratch(config: Config, fake: FakeApi) -> Workspace:
    """What a sync with an empty store makes of the service now, as the store holds it
    (in a store of its own); *fake*'s call counts are left as they were."""
    scratch = config.model_copy(update={"root": config.root / "from-scratch"})
    shutil.rmtree(scratch.cache_path, ignore_errors=True)
    calls = fake.calls.copy()
    try:
        resync(scratch, fake)
    finally:
        fake.calls = calls
    workspace = stored(scratch)
    assert workspace is not None
    return workspace


@pytest.fixture
def fake() -> FakeApi:
    articles = [make_article(n, cluster=n % 2, author=(n % 3 if n % 3 < 2 else None),
                             agent=n % 2) for n in range(1, 13)]
    articles[2]["status"] = "draft"
    articles[5]["status"] = "archived"
    return FakeApi(articles=articles)


def make_config(root: Path, **api: Any) -> Config:
    data: dict[str, Any] = {
        "site": {"title": "T", "url": "https://site.test/"},
        "api": {"url": BASE, "workspace": WS, "retry_budget": 2.0, **api},
    }
    return parse_config(data, root)


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return make_config(tmp_path)


@pytest.fixture(autouse=True)
def _no_sleep(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Retry pauses are recorded, not slept, so fault tests stay fast."""
    delays: list[float] = []

    async def fake_sleep(delay: float) -> None:
        delays.append(delay)

    monkeypatch.setattr("sitegen.fetch.client._sleep", fake_sleep)
    return delays
