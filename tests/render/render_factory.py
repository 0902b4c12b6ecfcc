"""Builders for the render and model tests: configs, workspaces in code, a hostile one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sitegen.config import Config, parse_config
from sitegen.model.kinds import KINDS
from sitegen.workspace import Workspace

OID = "65f0c0ffee0123456789abc{}"


def make_config(root: Path, **site: Any) -> Config:
    """A valid config rooted at *root*, with [site] keys overridden by *site*."""
    return parse_config({
        "site": {"title": "Test Site", "url": "https://site.example.test/", **site},
        "api": {"url": "https://api.example.test", "workspace": "65f0c0ffee0123456789abcd"},
    }, root)


def article(n: int, **fields: Any) -> dict[str, Any]:
    """A published article record with id n (a 24-hex id) and a distinct date."""
    base: dict[str, Any] = {
        "id": f"{n:024x}", "title": f"Article {n}", "slug": f"article-{n}",
        "status": "published", "createdAt": f"2024-01-{(n % 28) + 1:02d}T10:00:00.000Z",
        "updatedAt": f"2024-02-{(n % 28) + 1:02d}T10:00:00.000Z",
        "content": f"Body of article {n}.\n\n## A heading\n\nMore text.",
        "tags": ["news"], "language": "en",
    }
    base.update(fields)
    return base


def make_workspace(articles: list[dict[str, Any]], **extra: Any) -> Workspace:
    """A v2 Workspace snapshot from raw article dicts (and agents, clusters...)."""
    return Workspace.model_validate({
        "api_version": "v2", "info": {"id": "65f0c0ffee0123456789abcd", "name": "W"},
        "articles": articles, "agents": extra.get("agents", []),
        "clusters": extra.get("clusters", []), "authors": extra.get("authors", []),
        "social_posts": extra.get("social_posts", []),
    })


def demo_workspace() -> Workspace:
    """The bundled demo workspace, as a sync would hand it over."""
    from sitegen.emulator.demo import load_demo

    raw = load_demo()
    return Workspace.model_validate({
        "api_version": "v2", "info": raw["workspace"], "agents": raw["agents"],
        "articles": raw["articles"], "clusters": raw["clusters"],
        "authors": raw["authorIdentities"], "social_posts": raw["socialPosts"]})


XSS = '<script>alert(1)</script><img src=x onerror=alert(2)>"\'><svg onload=alert(3)>'


def hostile_workspace() -> Workspace:
    """Every field an attacker controls, filled with markup and bad URLs."""
    blocks = [
        {"type": "text", "content": f"Text {XSS} [link](javascript:alert(1)) "
                                    "[d](data:text/html,<script>alert(1)</script>)"},
        {"type": "header", "content": f"Head {XSS}", "level": 1},
        {"type": "image", "url": "javascript:alert(1)", "caption": XSS},
        {"type": "image", "url": "https://img.example.test/a.png\" onerror=\"alert(1)",
         "caption": XSS},
        {"type": "list", "items": [XSS, "[x](vbscript:msgbox(1))"], "ordered": True},
        {"type": "code", "content": "</code></pre><script>alert(1)</script>",
         "language": '"><script>alert(1)</script>'},
        {"type": "video", "url": "javascript:alert(1)", "title": XSS},
        {"type": "video", "url": "https://www.youtube.com/watch?v=dQw4w9WgXcQ", "title": XSS},
        {"type": "video", "url": "https://evil.example.test/x\"onload=\"alert(1)",
         "title": XSS},
        {"type": "script", "content": "alert(1)"},
    ]
    markdown = (f"# {XSS}\n\n{XSS}\n\n[a](javascript:alert(1)) [b](JaVaScRiPt:alert(1)) "
                "[c](java\tscript:alert(1)) ![i](javascript:alert(1)) <javascript:alert(1)> "
                "[e](&#106;avascript:alert(1)) [f](data:text/html;base64,PHNjcmlwdD4=)\n\n"
                "<iframe src=javascript:alert(1)></iframe>\n\n```\"><script>alert(1)</script>\n"
                "x\n```\n")
    return make_workspace(
        [
            article(1, title=XSS, slug="../../etc/passwd", description=XSS, tags=[XSS, "/", ".."],
                    blocks=blocks, agentId="a" * 24, clusterId="c" * 24,
                    authorIdentityId="b" * 24,
                    meta={"keywords": XSS, "description": XSS}),
            article(2, title=f"MD {XSS}", slug="<script>", content=markdown,
                    language='en"><script>', agentId="a" * 24, clusterId="c" * 24),
        ],
        agents=[{"id": "a" * 24, "name": XSS, "description": XSS}],
        clusters=[{"id": "c" * 24, "name": XSS, "color": "red;background:url(javascript:x)",
                   "description": XSS}],
        authors=[{"id": "b" * 24, "name": XSS, "bio": XSS, "imageUrl": "javascript:alert(1)"}],
        social_posts=[{"id": "d" * 24, "title": XSS, "slug": "../x", "content": XSS,
                       "selectedImageSlot": "square",
                       "images": {"square": "javascript:alert(1)"}}],
    )




def page_kinds() -> set[str]:
    """The page kinds a built site shows (from the registry): every registered kind but the
    site files (feeds, sitemap, robots.txt), the drafts preview's, and the owner's own pages
    (`pages/`, which these sites have none of)."""
    return {kind.name for kind in KINDS.values()
            if not kind.file and not kind.preview_only and kind.name != "own"}
