"""Invariants of the bundled demo workspace (sitegen/emulator/data/demo-workspace.json).

The demo is what a newcomer sees first, so it must be complete (every status, every
block type, several languages), consistent (ids unique, references resolve, media
present) and in sync with the readable sources that scripts/build_demo.py turns into it.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections import Counter
from collections.abc import Iterator
from functools import cache
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from PIL import Image

from sitegen.blocktypes import block_types
from sitegen.config import DEMO_WORKSPACE_ID
from sitegen.fetch.payloads import DigestUpdate
from sitegen.fetch.records import (
    Agent,
    Article,
    AuthorIdentity,
    Cluster,
    SocialPost,
    UnknownBlock,
    WorkspaceInfo,
    parse_block,
)

DATA = Path(str(resources.files("sitegen.emulator").joinpath("data")))
MEDIA = DATA / "media"
BUILDER = Path(__file__).resolve().parents[2] / "scripts" / "build_demo.py"
HEX24 = re.compile(r"^[0-9a-f]{24}$")
STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
MEDIA_URL = re.compile(r"/media/demo/([A-Za-z0-9._-]+)")


@cache
def demo() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / "demo-workspace.json").read_text(encoding="utf-8"))
    return data


def articles(status: str | None = None) -> list[dict[str, Any]]:
    return [a for a in demo()["articles"] if status is None or a["status"] == status]


def all_blocks() -> list[dict[str, Any]]:
    return [block for article in articles() for block in article["blocks"]]


def strings(value: Any) -> Iterator[str]:
    """Every string anywhere in a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def load_builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_demo", BUILDER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def luminance(colour: str) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


# --- the file and its sources ---------------------------------------------------


def test_file_is_exactly_what_build_demo_writes() -> None:
    builder = load_builder()
    expected = builder.render(builder.build_workspace())
    assert (DATA / "demo-workspace.json").read_text(encoding="utf-8") == expected, (
        "demo-workspace.json is stale: run python scripts/build_demo.py")


def test_builder_turns_markdown_into_every_block_kind() -> None:
    body = ("Intro with **bold**\nand a soft break.\n\n## Head\n\n### Sub\n\n"
            "![A caption](/media/demo/x.svg)\n\n1. one\n2. two\n\n- a\n- b\n\n"
            "```toml\nkey = 1\n```\n\n!video[A clip](https://example.org/clip.mp4)\n\n"
            "> Said *twice*\n> over.\n>\n> — Ada, [A Work](https://example.org/w)\n\n"
            "> Unsourced.\n>\n> — Bo\n")
    blocks = load_builder().markdown_to_blocks(body, "sample")
    assert blocks == [
        {"type": "text", "content": "Intro with **bold** and a soft break."},
        {"type": "header", "content": "Head", "level": 2},
        {"type": "header", "content": "Sub", "level": 3},
        {"type": "image", "url": "/media/demo/x.svg", "caption": "A caption"},
        {"type": "list", "items": ["one", "two"], "ordered": True},
        {"type": "list", "items": ["a", "b"], "ordered": False},
        {"type": "code", "content": "key = 1", "language": "toml"},
        {"type": "video", "url": "https://example.org/clip.mp4", "title": "A clip"},
        {"type": "quote", "text": "Said *twice* over.", "attribution": "Ada",
         "source": "A Work", "url": "https://example.org/w"},
        {"type": "quote", "text": "Unsourced.", "attribution": "Bo"},
    ]


def test_builder_refuses_markdown_that_no_block_can_hold() -> None:
    with pytest.raises(SystemExit, match="hr"):
        load_builder().markdown_to_blocks("Above.\n\n---\n\nBelow.\n", "sample")
    with pytest.raises(SystemExit, match="a quotation ends with"):  # who said it is needed
        load_builder().markdown_to_blocks("> a quotation\n", "sample")


def test_builder_renders_video_lines_as_links_in_the_markdown_rendition() -> None:
    text = load_builder().blocks_to_markdown("Text.\n\n!video[Clip](https://example.org/c.mp4)\n")
    assert text == "Text.\n\n[Video: Clip](https://example.org/c.mp4)\n"


# --- shape and counts -------------------------------------------------------------


def test_top_level_shape_and_workspace() -> None:
    data = demo()
    assert set(data) == {"workspace", "agents", "clusters", "authorIdentities", "articles",
                         "socialPosts", "digest"}
    info = WorkspaceInfo.model_validate(data["workspace"])
    assert info.id == DEMO_WORKSPACE_ID
    assert info.plan == "Pro" and info.isActive is True
    assert info.name and info.description


def test_counts_by_status() -> None:
    counts = Counter(a["status"] for a in articles())
    assert set(counts) == {"published", "draft", "archived"}
    assert 28 <= len(articles()) <= 32
    assert 20 <= counts["published"] <= 24
    assert 3 <= counts["draft"] <= 5
    assert 3 <= counts["archived"] <= 5


def test_agents_have_distinct_voices() -> None:
    agents = [Agent.model_validate(raw) for raw in demo()["agents"]]
    assert len(agents) == 3
    for field in ("name", "model", "tone", "schedule", "prompt", "description"):
        values = [getattr(agent, field) for agent in agents]
        assert all(values) and len(set(values)) == 3, field
    cron = re.compile(r"^[\d*,/-]+( [\d*,/-]+){4}$")
    for agent in agents:
        assert agent.status in {"active", "inactive"}
        assert agent.executionMode in {"scheduled", "batched"}
        assert agent.schedule is not None and cron.match(agent.schedule), agent.schedule


def test_clusters_have_distinct_colours_legible_on_light_and_dark() -> None:
    clusters = [Cluster.model_validate(raw) for raw in demo()["clusters"]]
    assert len(clusters) == 4
    colours = [c.color or "" for c in clusters]
    assert len({c.lower() for c in colours}) == 4
    for cluster, colour in zip(clusters, colours, strict=True):
        assert re.fullmatch(r"#[0-9a-fA-F]{6}", colour), cluster.name
        assert cluster.description and cluster.contentCycleId
        assert contrast(colour, "#ffffff") >= 3.0, cluster.name
        assert contrast(colour, "#111111") >= 3.0, cluster.name


def test_author_identities_have_bios_and_images() -> None:
    authors = [AuthorIdentity.model_validate(raw) for raw in demo()["authorIdentities"]]
    assert len(authors) == 3
    for author in authors:
        assert author.name and author.bio and len(author.bio) > 40
        assert author.imageUrl and author.imageUrl.startswith("/media/demo/")


# --- articles ------------------------------------------------------------------------


def test_every_article_parses_and_reads_like_an_article() -> None:
    for raw in articles():
        article = Article.model_validate(raw)
        assert article.title and article.description and article.content, article.id
        assert article.status in {"published", "draft", "archived"}
        assert article.model and article.tone and article.language
        words = len(article.content.split())
        assert 250 <= words <= 600, f"{article.id} has {words} words"
        assert article.meta is not None and article.meta.description
        assert article.meta.keywords and ", " in article.meta.keywords
        assert article.tags and article.meta.tags


def test_every_block_is_a_known_type() -> None:
    for raw in all_blocks():
        parsed = parse_block(raw)
        assert not isinstance(parsed, UnknownBlock), raw
        assert parsed.type == raw["type"]


def test_every_block_type_and_variant_is_present() -> None:
    blocks = all_blocks()
    assert {b["type"] for b in blocks} == {block.name for block in block_types()}
    assert {b["level"] for b in blocks if b["type"] == "header"} >= {2, 3}
    assert {b["ordered"] for b in blocks if b["type"] == "list"} == {True, False}
    languages = {b["language"] for b in blocks if b["type"] == "code"}
    assert languages >= {"python", "bash", "toml", "json"}
    videos = [b["url"] for b in blocks if b["type"] == "video"]
    assert any(u.startswith("https://www.youtube.com/watch?v=") for u in videos)
    assert any(u.startswith("https://vimeo.com/") for u in videos)
    assert any(u.endswith(".mp4") for u in videos)
    assert all(b.get("title") for b in blocks if b["type"] == "video")
    assert all(b.get("caption") for b in blocks if b["type"] == "image")
    texts = " ".join(b["content"] for b in blocks if b["type"] == "text")
    for inline in (r"\*\*[^*]+\*\*", r"(?<!\*)\*[^*]+\*(?!\*)", r"`[^`]+`", r"\]\(https://"):
        assert re.search(inline, texts), inline


def test_about_half_of_the_articles_carry_blocks() -> None:
    with_blocks = [a for a in articles() if a["blocks"]]
    assert 0.35 <= len(with_blocks) / len(articles()) <= 0.65
    assert any(a["blocks"] for a in articles("published"))
    assert any(not a["blocks"] for a in articles("published"))


def test_markdown_only_articles_use_rich_markdown() -> None:
    text = "\n".join(a["content"] for a in articles() if not a["blocks"])
    for construct in (r"^## ", r"^\|---", r"^```\w+", r"^> ", r"^- ", r"^1\. ",
                      r"\]\(https?://"):
        assert re.search(construct, text, re.MULTILINE), construct


def test_several_languages_with_english_the_majority() -> None:
    published = Counter(a["language"] for a in articles("published"))
    assert len(published) >= 2
    overall = Counter(a["language"] for a in articles())
    assert {"en", "de", "fr"} <= set(overall)
    assert overall["en"] > len(articles()) / 2


def test_tags_are_shared_across_agents() -> None:
    agents_by_tag: dict[str, set[str]] = {}
    for article in articles():
        for tag in article["tags"]:
            agents_by_tag.setdefault(tag, set()).add(article["agentId"])
    assert any(len(agents) >= 2 for agents in agents_by_tag.values())


def test_the_demo_shows_the_tolerant_reader_at_work() -> None:
    published = articles("published")
    assert any(a["slug"] == "" for a in published), "one published article has an empty slug"
    assert any(not t.isascii() or " " in t for a in published for t in a["tags"])
    slugs = [a["slug"] for a in articles() if a["slug"]]
    assert len(slugs) == len(set(slugs))


def test_dates_are_fixed_ordered_and_span_2026() -> None:
    records = [demo()["workspace"], demo()["digest"], *demo()["agents"], *demo()["clusters"],
               *demo()["authorIdentities"], *articles(), *demo()["socialPosts"]]
    for record in records:
        assert STAMP.match(record["createdAt"]) and STAMP.match(record["updatedAt"])
        assert record["createdAt"] <= record["updatedAt"]
    created = sorted(a["createdAt"] for a in articles())
    assert all(stamp.startswith("2026-") for stamp in created)
    assert len({stamp[:7] for stamp in created}) >= 7
    assert any(a["updatedAt"][:10] > a["createdAt"][:10] for a in articles())


# --- ids and references ---------------------------------------------------------


def test_ids_are_unique_24_hex() -> None:
    data = demo()
    ids = [data["workspace"]["id"]] + [
        record["id"] for key in ("agents", "clusters", "authorIdentities", "articles",
                                 "socialPosts") for record in data[key]]
    assert all(HEX24.match(i) for i in ids)
    assert len(ids) == len(set(ids))


def test_references_resolve() -> None:
    data = demo()
    agents = {a["id"] for a in data["agents"]}
    clusters = {c["id"] for c in data["clusters"]}
    authors = {a["id"] for a in data["authorIdentities"]}
    for key in ("agents", "clusters", "authorIdentities", "articles", "socialPosts"):
        assert all(r["workspaceId"] == DEMO_WORKSPACE_ID for r in data[key]), key
    assert data["digest"]["workspaceId"] == DEMO_WORKSPACE_ID
    for article in articles():
        assert article["agentId"] in agents
        assert article["clusterId"] is None or article["clusterId"] in clusters
        assert article["authorIdentityId"] is None or article["authorIdentityId"] in authors
    published = articles("published")
    assert sum(a["clusterId"] is not None for a in published) >= 0.8 * len(published)
    assert sum(a["authorIdentityId"] is not None for a in published) >= 0.8 * len(published)
    assert any(a["clusterId"] is None for a in published)
    assert any(a["authorIdentityId"] is None for a in published)
    assert {a["agentId"] for a in published} == agents
    assert {a["clusterId"] for a in published} >= clusters
    assert {a["authorIdentityId"] for a in published} >= authors


# --- social posts and digest -------------------------------------------------------


def test_social_posts_have_all_three_images() -> None:
    posts = [SocialPost.model_validate(raw) for raw in demo()["socialPosts"]]
    assert 4 <= len(posts) <= 6
    for post in posts:
        assert post.title and post.slug and post.content
        assert post.selectedImageSlot in {"square", "portrait", "landscape"}
        assert post.images is not None
        assert post.images.square and post.images.portrait and post.images.landscape


def test_digest_is_enabled_weekly_and_within_the_v2_bounds() -> None:
    digest = demo()["digest"]
    body = DigestUpdate.model_validate(
        {k: digest[k] for k in ("enabled", "frequency", "subject", "previewText",
                                "senderName", "replyTo")})
    assert body.enabled is True and body.frequency == "weekly"


# --- media and content safety -----------------------------------------------------------


def referenced_media() -> set[str]:
    return {match for text in strings(demo()) for match in MEDIA_URL.findall(text)}


def test_every_referenced_media_file_exists_and_none_is_orphaned() -> None:
    referenced = referenced_media()
    on_disk = {p.name for p in MEDIA.iterdir() if p.is_file()}
    assert referenced and referenced <= on_disk, referenced - on_disk
    assert on_disk <= referenced, on_disk - referenced
    assert 8 <= len(on_disk) <= 16


def test_article_images_are_wide_and_captioned_where_they_are_used() -> None:
    in_articles = {m for a in articles() for m in MEDIA_URL.findall(a["content"])}
    for name in in_articles:
        with Image.open(MEDIA / name) as image:
            assert image.size == (1200, 630), name
    for a in articles():
        assert not re.search(r"!\[\]\(", a["content"]), "an image without alt text"


@pytest.mark.parametrize("path", sorted(MEDIA.iterdir()), ids=lambda p: p.name)
def test_media_are_small_clean_raster_images(path: Path) -> None:
    """Real raster files (the images stage decodes, resizes and re-encodes them), small
    enough to ship in the wheel, with no metadata to leak."""
    assert path.suffix in {".jpg", ".png"}
    assert 2000 <= path.stat().st_size <= 64 * 1024, path.name
    with Image.open(path) as image:
        assert image.format == {".jpg": "JPEG", ".png": "PNG"}[path.suffix]
        image.load()
        assert not image.getexif()


def test_no_markup_placeholders_or_hostile_text() -> None:
    for text in strings(demo()):
        lowered = text.lower()
        assert "lorem" not in lowered and "ipsum" not in lowered
        assert "javascript:" not in lowered
        assert not re.search(r"</?[a-z][^>]*>", text, re.IGNORECASE), text[:80]
