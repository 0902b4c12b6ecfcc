"""Every page kind of the default theme is valid HTML (the current Nu checker, npm vnu-jar)."""

from __future__ import annotations

from pathlib import Path

from render_factory import article, hostile_workspace, make_config, make_workspace

from sitegen.emit.redirects import redirect_files
from sitegen.model import build_site
from sitegen.ownpages import parse_page
from sitegen.render.pages import BeaconSettings, Renderer
from sitegen.render.themes import ThemeSet
from tests.vnu import vnu_errors


def _workspace():  # type: ignore[no-untyped-def]
    blocks = [
        {"type": "header", "content": "Intro", "level": 1},
        {"type": "text", "content": "Some *text* with [a link](https://e.test/)."},
        {"type": "image", "url": "https://img.test/a.png", "caption": "A caption"},
        {"type": "image", "url": "/media/b.png"},
        {"type": "list", "items": ["one", "two"], "ordered": True},
        {"type": "list", "items": ["x"], "ordered": False},
        {"type": "code", "content": "print('hi')", "language": "python"},
        {"type": "code", "content": "plain", "language": "nope"},
        {"type": "video", "url": "https://youtu.be/dQw4w9WgXcQ", "title": "YT"},
        {"type": "video", "url": "https://vimeo.com/1234"},
        {"type": "video", "url": "https://cdn.test/v.webm"},
        {"type": "video", "url": "https://example.test/watch"},
    ]
    markdown = ("# Top\n\nText with `code` and ~~strike~~.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
                "```js\nconst a = 1;\n```\n\n> quote\n\n---\n\n![img](/x.png)\n\n"
                "## One\n\n### Two\n\n## Three\n")
    arts = [article(n, agentId="a" * 24, clusterId="c" * 24, authorIdentityId="b" * 24,
                    language="fr" if n == 4 else "en", tags=["Alpha", "Beta"],
                    meta={"keywords": "k1, k2", "description": "d"},
                    blocks=blocks if n % 2 else None, content=markdown)
            for n in range(1, 6)]
    return make_workspace(
        arts, agents=[{"id": "a" * 24, "name": "Bot", "description": "An agent"}],
        clusters=[{"id": "c" * 24, "name": "Topic", "color": "#0a7", "description": "T"}],
        authors=[{"id": "b" * 24, "name": "Ann", "bio": "Bio", "imageUrl": "https://i.test/a"}],
        social_posts=[{"id": "d" * 24, "title": "Post", "content": "One\n\nTwo",
                       "selectedImageSlot": "square", "images": {"square": "https://i.test/s"},
                       "createdAt": "2024-01-01T00:00:00Z"}])


def test_every_page_kind_validates(tmp_path: Path) -> None:
    config = make_config(tmp_path / "site", per_page=2)
    out = tmp_path / "out"
    written: set[Path] = set()
    own = [parse_page("pages/about.md", '+++\ntitle = "About"\nmenu = 1\n+++\n'
                      "## One\n\nText [link](javascript:x).\n\n## Two\n\n## Three\n\n"
                      "```python\nprint(1)\n```\n")]
    for ws in (_workspace(), hostile_workspace()):
        site = build_site(config, ws, own)
        renderer = Renderer(config, site, ThemeSet(config), beacon=BeaconSettings(
            "https://api.test/api/v2/workspaces/w/analytics", "key", "slug", "/static/b.js"))
        kinds = set()
        for page in site.pages:
            if page.kind in kinds and page.kind != "article":
                continue
            kinds.add(page.kind)
            target = out / str(len(written)) / page.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(renderer.render(page))
            written.add(target)
        for path, data in redirect_files(site, {"/moved/": site.articles[0].url},
                                          renderer.translator):
            if path.endswith(".html"):
                target = out / str(len(written)) / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                written.add(target)
    assert len(written) >= 12
    assert vnu_errors(sorted(written)) == []
