"""The filter and sort parameters of each record kind, turned into store predicates.

Role: the one place that knows which query parameters each list endpoint of each version accepts
(the tables of both references) and what they mean: exact matches, enums (400 on an unknown
value), ObjectId filters (400 when malformed; `clusterId=null` selects articles without a
cluster), comma-separated tags matching any, case-insensitive search. Unknown parameters are
ignored, as the service does. It must never page, build responses or touch records itself.
"""

from __future__ import annotations

from sitegen.emulator import store
from sitegen.emulator.forms import AGENT_L, ARTICLE_A, ARTICLE_L
from sitegen.emulator.query import NULL, Query
from sitegen.emulator.state import EmulatorState
from sitegen.emulator.store import Predicate

AGENT_STATUSES = ("active", "inactive")
EXECUTION_MODES = ("scheduled", "batched")
ARTICLE_STATUSES = ("draft", "published", "archived")
IMAGE_SLOTS = ("square", "portrait", "landscape")

# v1: "sortBy values are field names of the record" (scalar fields of the list form).
V1_AGENT_SORT = frozenset(AGENT_L)
V1_ARTICLE_SORT = frozenset(ARTICLE_L) - {"tags"}
V1_AGENT_ARTICLE_SORT = frozenset(ARTICLE_A) - {"tags"}
# v2: the enumerations of its reference.
V2_AGENT_SORT = ("name", "createdAt", "updatedAt", "model", "isActive", "executionMode")
V2_ARTICLE_SORT = ("createdAt", "updatedAt", "title", "status")
V2_NAMED_SORT = ("name", "createdAt", "updatedAt")
V2_SOCIAL_SORT = ("title", "createdAt", "updatedAt")

AGENT_SEARCH = ("name", "prompt")
ARTICLE_SEARCH = ("title", "description", "meta.keywords", "tags")


def agent_filters(query: Query) -> list[Predicate]:
    """status, executionMode, model, search (name and prompt)."""
    tests: list[Predicate] = []
    if (status := query.enum("status", AGENT_STATUSES)) is not None:
        tests.append(store.equals("status", status))
    if (mode := query.enum("executionMode", EXECUTION_MODES)) is not None:
        tests.append(store.equals("executionMode", mode))
    if (model := query.text("model")) is not None:
        tests.append(store.equals("model", model))
    if (needle := query.text("search")) is not None:
        tests.append(store.search(needle, AGENT_SEARCH))
    return tests


def article_filters(
    query: Query, *, with_cluster: bool, with_agent: bool = True
) -> list[Predicate]:
    """agentId, clusterId (v2), status, slug, language, model, tags (any), search.

    `with_agent=False` ignores the agentId parameter (a path agent scopes the list).
    """
    tests: list[Predicate] = []
    if with_agent and (agent_id := query.object_id("agentId")) is not None:
        tests.append(store.equals("agentId", agent_id))
    if with_cluster and (cluster_id := query.object_id("clusterId", allow_null=True)):
        tests.append(store.is_missing("clusterId") if cluster_id == NULL
                     else store.equals("clusterId", cluster_id))
    if (status := query.enum("status", ARTICLE_STATUSES)) is not None:
        tests.append(store.equals("status", status))
    for name in ("slug", "language", "model"):
        if (value := query.text(name)) is not None:
            tests.append(store.equals(name, value))
    if (tags := query.csv("tags")) is not None:
        tests.append(store.any_tag("tags", tags))
    if (needle := query.text("search")) is not None:
        tests.append(store.search(needle, ARTICLE_SEARCH))
    return tests


def cluster_filters(query: Query, state: EmulatorState) -> list[Predicate]:
    """search (name, description), contentCycleId, color, hasArticles."""
    tests: list[Predicate] = []
    if (needle := query.text("search")) is not None:
        tests.append(store.search(needle, ("name", "description")))
    if (cycle := query.object_id("contentCycleId")) is not None:
        tests.append(store.equals("contentCycleId", cycle))
    if (color := query.text("color")) is not None:
        tests.append(store.equals("color", color))
    if (has_articles := query.boolean("hasArticles")) is not None:
        used = {a.get("clusterId") for a in state.records("articles")
                if isinstance(a.get("clusterId"), str)}
        tests.append(store.member_of("id", used, has_articles))
    return tests


def author_filters(query: Query) -> list[Predicate]:
    """search (name, bio), createdByUserId, hasImage."""
    tests: list[Predicate] = []
    if (needle := query.text("search")) is not None:
        tests.append(store.search(needle, ("name", "bio")))
    if (user := query.object_id("createdByUserId")) is not None:
        tests.append(store.equals("createdByUserId", user))
    if (has_image := query.boolean("hasImage")) is not None:
        tests.append(store.truthy("imageUrl", has_image))
    return tests


def social_filters(query: Query) -> list[Predicate]:
    """search (title, content), selectedImageSlot, createdByUserId."""
    tests: list[Predicate] = []
    if (needle := query.text("search")) is not None:
        tests.append(store.search(needle, ("title", "content")))
    if (slot := query.enum("selectedImageSlot", IMAGE_SLOTS)) is not None:
        tests.append(store.equals("selectedImageSlot", slot))
    if (user := query.object_id("createdByUserId")) is not None:
        tests.append(store.equals("createdByUserId", user))
    return tests
