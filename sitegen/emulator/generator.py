"""Generated workspaces of any size, in the emulator's JSON format, for tests and benchmarks.

Role: `generate_workspace(articles, seed=...)` builds one workspace (demo-workspace-format.md)
in realistic proportions: ~85% of articles published, the rest drafts or archived;
max(3, N/400) agents, max(4, N/100) clusters, max(3, N/500) author identities; 2-3
languages; 0-5 tags from ~60; markdown bodies and blocks of every type; a few social posts
and a digest. Its images are root-relative (`/media/generated/...jpg`): they resolve at the
emulator serving the file, whatever its address, which draws them (`drawn.py`), as the demo's
media resolve there. The same arguments give the same workspace, byte for byte: it must never read
the wall clock or global random state. CLI: `python -m sitegen.emulator.generator
--articles N --seed S -o FILE`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from sitegen.emulator import prose

EPOCH = int(datetime(2024, 1, 1, tzinfo=UTC).timestamp())
DAY = 86_400
MODELS = ("gpt-4o", "gpt-4o-mini", "claude-3-5-sonnet", "mistral-large", "llama-3-70b")
TONES = ("friendly", "formal", "playful", "authoritative", "casual")
FIRST = ("Ada", "Grace", "Linus", "Margaret", "Alan", "Katherine", "Dennis", "Barbara", "Ken")
LAST = ("Lovelace", "Hopper", "Torvalds", "Hamilton", "Turing", "Johnson", "Ritchie", "Liskov")
COLORS = ("#e11d48", "#2563eb", "#16a34a", "#d97706", "#7c3aed", "#0891b2", "#db2777")


class _Maker:
    """Seeded ids and timestamps: ObjectIds whose time prefix matches their record."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def oid(self, seconds: int) -> str:
        while True:
            value = f"{seconds & 0xFFFFFFFF:08x}{self.rng.getrandbits(64):016x}"
            if value not in self.used:
                self.used.add(value)
                return value

    def moment(self, low_days: float, high_days: float) -> int:
        """Milliseconds since the epoch, between the two day offsets from 2024-01-01."""
        return (EPOCH * 1000) + int(self.rng.uniform(low_days, high_days) * DAY * 1000)


@lru_cache(maxsize=4096)
def _day(days: int) -> str:
    return datetime.fromtimestamp(days * DAY, UTC).strftime("%Y-%m-%dT")


def stamp(millis: int) -> str:
    """ISO 8601 UTC with milliseconds and a Z."""
    seconds, milli = divmod(millis, 1000)
    days, rest = divmod(seconds, DAY)
    hours, rest = divmod(rest, 3600)
    return f"{_day(days)}{hours:02d}:{rest // 60:02d}:{rest % 60:02d}.{milli:03d}Z"


def _dated(maker: _Maker, low: float, high: float, later: float = 30) -> tuple[str, str, str]:
    created = maker.moment(low, high)
    updated = created + int(maker.rng.uniform(0, later) * DAY * 1000)
    return maker.oid(created // 1000), stamp(created), stamp(updated)


def _unique_slug(text: str, taken: set[str]) -> str:
    base = slug = prose.slugify(text)
    counter = 2
    while slug in taken:
        slug, counter = f"{base}-{counter}", counter + 1
    taken.add(slug)
    return slug


def _people(maker: _Maker, workspace_id: str, owner: str, users: Sequence[str],
            count: int) -> list[dict[str, Any]]:
    rng = maker.rng
    out: list[dict[str, Any]] = []
    for index in range(count):
        oid, created, updated = _dated(maker, -300, -200)
        name = f"{FIRST[index % len(FIRST)]} {LAST[(index * 5 + 3) % len(LAST)]}"
        out.append({"id": oid, "workspaceId": workspace_id, "name": name,
                    "bio": prose.sentence(rng), "createdByUserId": rng.choice(users),
                    "imageUrl": "" if rng.random() < 0.25 else
                    f"/media/generated/author-{oid}.jpg",
                    "createdAt": created, "updatedAt": updated})
    return out


def _agents(maker: _Maker, ws_id: str, owner: str, users: list[str], languages: list[str],
            count: int) -> list[dict[str, Any]]:
    """The workspace's agents: mostly in its first language, mostly active."""
    rng = maker.rng
    agents: list[dict[str, Any]] = []
    for index in range(count):
        oid, created, updated = _dated(maker, -360, -300)
        language = languages[0] if index % 2 == 0 else rng.choice(languages)
        mode = rng.choice(("scheduled", "batched"))
        active = rng.random() < 0.8
        agents.append({
            "id": oid, "workspaceId": ws_id, "name": f"{prose.title(rng, 'en')} Agent",
            "description": prose.sentence(rng), "status": "active" if active else "inactive",
            "executionMode": mode, "schedule": f"0 {rng.randint(6, 20)} * * {rng.randint(1, 5)}"
            if mode == "scheduled" else "", "model": rng.choice(MODELS),
            "tone": rng.choice(TONES), "language": language, "prompt": prose.paragraph(rng, 2),
            "isActive": active, "createdAt": created, "updatedAt": updated,
            "createdBy": owner, "updatedBy": rng.choice(users)})
    return agents


def _clusters(maker: _Maker, ws_id: str, cycles: list[str], count: int) -> list[dict[str, Any]]:
    """The workspace's topic clusters, most of them in a content cycle."""
    rng = maker.rng
    clusters: list[dict[str, Any]] = []
    for index in range(count):
        oid, created, updated = _dated(maker, -330, -250, 200)
        clusters.append({
            "id": oid, "workspaceId": ws_id, "name": f"{prose.title(rng, 'en')} {index + 1}",
            "description": prose.sentence(rng), "color": COLORS[index % len(COLORS)],
            "contentCycleId": rng.choice(cycles) if rng.random() < 0.7 else None,
            "createdAt": created, "updatedAt": updated})
    return clusters


def generate_workspace(articles: int, *, seed: int = 0) -> dict[str, Any]:
    """A whole workspace with `articles` articles; deterministic for a seed."""
    if articles < 0:
        raise ValueError("articles must be 0 or more")
    rng = random.Random(f"sitegen-workspace-{seed}")
    maker = _Maker(rng)
    owner = maker.oid(EPOCH - 400 * DAY)
    users = [owner, maker.oid(EPOCH - 390 * DAY), maker.oid(EPOCH - 380 * DAY)]
    ws_id, ws_created, ws_updated = _dated(maker, -400, -399, 300)
    languages = ["en", "de"] + (["fr"] if rng.random() < 0.6 else [])
    workspace = {"id": ws_id, "ownerId": owner, "name": f"Generated Workspace {seed}",
                 "description": prose.sentence(rng), "plan": "Pro", "isActive": True,
                 "createdAt": ws_created, "updatedAt": ws_updated}

    agents = _agents(maker, ws_id, owner, users, languages, max(3, articles // 400))

    cycles = [maker.oid(EPOCH - 200 * DAY) for _ in range(2)]
    clusters = _clusters(maker, ws_id, cycles, max(4, articles // 100))
    authors = _people(maker, ws_id, owner, users, max(3, articles // 500))

    records: list[dict[str, Any]] = []
    slugs: set[str] = set()
    for index in range(articles):
        agent = rng.choice(agents)
        oid, created, updated = _dated(maker, -240, 480)
        language = agent["language"] if rng.random() < 0.9 else rng.choice(languages)
        heading = prose.title(rng, language)
        roll = rng.random()
        status = "published" if roll < 0.85 else "draft" if roll < 0.95 else "archived"
        tags = rng.sample(prose.TAGS, rng.randint(0, 5))
        shape = rng.random()  # 0.5 content + blocks, 0.4 markdown only, 0.1 blocks only
        article_blocks = ([] if 0.5 <= shape < 0.9 else
                          prose.blocks(rng, heading, oid, every_type=index == 0))
        content = "" if shape >= 0.9 else prose.markdown(rng, heading, rich=index == 0)
        description = prose.sentence(rng)
        records.append({
            "id": oid, "workspaceId": ws_id, "agentId": agent["id"],
            "clusterId": rng.choice(clusters)["id"] if rng.random() < 0.8 else None,
            "authorIdentityId": rng.choice(authors)["id"] if rng.random() < 0.75 else None,
            "title": heading, "slug": _unique_slug(heading, slugs), "description": description,
            "content": content, "status": status, "language": language,
            "model": agent["model"], "tone": agent["tone"], "tags": tags,
            "blocks": article_blocks,
            "meta": {"keywords": ", ".join(tags or heading.lower().split()[:3]),
                     "description": description, "tags": tags},
            "createdBy": agent["createdBy"], "updatedBy": rng.choice(users),
            "createdAt": created, "updatedAt": updated})

    social: list[dict[str, Any]] = []
    social_slugs: set[str] = set()
    for _ in range(min(max(3, articles // 200), 50)):
        oid, created, updated = _dated(maker, 0, 480, 10)
        heading = prose.title(rng, "en")
        social.append({
            "id": oid, "workspaceId": ws_id, "title": heading,
            "slug": _unique_slug(heading, social_slugs), "content": prose.paragraph(rng, 1),
            "selectedImageSlot": rng.choice(("square", "portrait", "landscape")),
            "images": {slot: f"/media/generated/social-{oid}-{slot}.jpg"
                       for slot in ("square", "portrait", "landscape")},
            "createdByUserId": rng.choice(users), "createdAt": created, "updatedAt": updated})

    digest = {"workspaceId": ws_id, "enabled": True, "frequency": "weekly",
              "subject": "This week in the generated workspace",
              "previewText": prose.sentence(rng), "senderName": "Generated Workspace",
              "replyTo": "editor@example.com", "createdAt": ws_created, "updatedAt": ws_updated}
    return {"workspace": workspace, "agents": agents, "clusters": clusters,
            "authorIdentities": authors, "articles": records, "socialPosts": social,
            "digest": digest}


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m sitegen.emulator.generator --articles N --seed S -o FILE`."""
    parser = argparse.ArgumentParser(prog="python -m sitegen.emulator.generator",
                                     description="Write a generated workspace JSON file.")
    parser.add_argument("--articles", type=int, required=True, metavar="N")
    parser.add_argument("--seed", type=int, default=0, metavar="S")
    parser.add_argument("-o", "--output", metavar="FILE", help="output file (default: stdout)")
    options = parser.parse_args(argv)
    if options.articles < 0:
        parser.error("--articles must be 0 or more")
    text = json.dumps(generate_workspace(options.articles, seed=options.seed),
                      ensure_ascii=False, indent=1) + "\n"
    if options.output:
        with open(options.output, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
