"""Authoring script: readable sources → the bundled demo workspace JSON.

Role: turn `sitegen/emulator/data/source/workspace.toml` (workspace, agents,
clusters, authors, social posts, digest) and `source/articles/NN-name.md` (TOML
front matter between `+++` lines, then a markdown body) into `demo-workspace.json`
beside them, in the format of demo-workspace-format.md. Ids and timestamps are
fixed, so the output is byte-identical on every run. An article whose front
matter says `blocks = true` also gets its body as v1-style blocks: each heading,
paragraph, list, fenced code block, lone image, `!video[title](url)` line and
quotation (a `>` block whose last paragraph is `— Who, [Work](https://…)`) becomes one
block, and its `content` is the same body as plain markdown. Run it
by hand after editing the sources (`python scripts/build_demo.py`; `--check` only
says whether the file is up to date); sitegen itself never runs it. It must never
reach the network or write anywhere but the demo's data folder.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from datetime import datetime
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

DATA = Path(__file__).resolve().parent.parent / "sitegen" / "emulator" / "data"
SOURCE = DATA / "source"
OUTPUT = DATA / "demo-workspace.json"
MEDIA_URL = "/media/demo/"
WORKSPACE_ID = "65f0c0ffee0123456789abcd"  # sitegen.config.DEMO_WORKSPACE_ID

# Each kind of record gets its own two hex digits after a fixed prefix.
_KINDS = {"user": "b0", "agent": "a0", "cluster": "c0", "cycle": "cc", "author": "d0",
          "article": "e0", "social": "f0"}
_VIDEO = re.compile(r"^!video\[(?P<title>[^\]]+)\]\((?P<url>\S+)\)$")
_FRONT = re.compile(r"\A\+\+\+\n(?P<meta>.*?)\n\+\+\+\n(?P<body>.*)\Z", re.DOTALL)


def make_id(kind: str, number: int) -> str:
    """A fixed 24-hex id: prefix, two hex digits for the kind, a 12-digit counter."""
    return f"65f0c0ffee{_KINDS[kind]}{number:012x}"


def stamp(value: datetime) -> str:
    """ISO 8601 UTC with milliseconds and a Z, as the service writes timestamps."""
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def media(name: str) -> str:
    return MEDIA_URL + name


def _inline_text(token: Token) -> str:
    return " ".join(line.strip() for line in token.content.splitlines())


def _paragraph_block(inline: Token) -> dict[str, Any]:
    text = _inline_text(inline)
    video = _VIDEO.match(text)
    if video:
        return {"type": "video", "url": video["url"], "title": video["title"]}
    children = inline.children or []
    if len(children) == 1 and children[0].type == "image":
        image = children[0]
        return {"type": "image", "url": str(image.attrs["src"]), "caption": image.content}
    return {"type": "text", "content": text}


def _quote_block(tokens: list[Token], where: str) -> dict[str, Any]:
    """A quotation: its paragraphs, then `— Who, [Work](url)` (the work and link optional)."""
    inlines = [t for t in tokens if t.type == "inline"]
    if len(inlines) < 2 or not inlines[-1].content.startswith("— "):
        raise SystemExit(f"{where}: a quotation ends with a paragraph '— Who, [Work](url)'")
    *said, credit = inlines
    block: dict[str, Any] = {"type": "quote", "text": " ".join(map(_inline_text, said))}
    children = credit.children or []
    link = next((i for i, c in enumerate(children) if c.type == "link_open"), None)
    who = "".join(c.content for c in children[:link] if c.type == "text")
    block["attribution"] = who.removeprefix("— ").strip().rstrip(",").strip()
    if link is not None:
        block["source"] = children[link + 1].content
        block["url"] = str(children[link].attrs["href"])
    return block


def markdown_to_blocks(body: str, where: str) -> list[dict[str, Any]]:
    """Split a markdown body into blocks; constructs blocks cannot express are refused."""
    tokens = MarkdownIt("commonmark").parse(body)
    blocks: list[dict[str, Any]] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.type == "heading_open":
            blocks.append({"type": "header", "content": _inline_text(tokens[index + 1]),
                           "level": int(token.tag[1])})
            index += 3
        elif token.type == "paragraph_open":
            blocks.append(_paragraph_block(tokens[index + 1]))
            index += 3
        elif token.type in ("bullet_list_open", "ordered_list_open"):
            close = token.type.replace("_open", "_close")
            items: list[str] = []
            index += 1
            while not (tokens[index].type == close and tokens[index].level == token.level):
                if tokens[index].type == "inline":
                    items.append(_inline_text(tokens[index]))
                index += 1
            blocks.append({"type": "list", "items": items,
                           "ordered": token.type == "ordered_list_open"})
            index += 1
        elif token.type == "blockquote_open":
            close = next(i for i in range(index + 1, len(tokens))
                         if tokens[i].type == "blockquote_close" and tokens[i].level == token.level)
            blocks.append(_quote_block(tokens[index + 1:close], where))
            index = close + 1
        elif token.type == "fence":
            blocks.append({"type": "code", "content": token.content.rstrip("\n"),
                           "language": token.info.strip() or "text"})
            index += 1
        else:
            raise SystemExit(f"{where}: '{token.type}' cannot be a block; use markdown only")
    return blocks


def blocks_to_markdown(body: str) -> str:
    """The markdown rendition of a blocks article: video lines become plain links."""
    lines = []
    for line in body.strip().splitlines():
        video = _VIDEO.match(line.strip())
        lines.append(f"[Video: {video['title']}]({video['url']})" if video else line)
    return "\n".join(lines) + "\n"


def read_article(path: Path) -> tuple[dict[str, Any], str]:
    match = _FRONT.match(path.read_text(encoding="utf-8"))
    if match is None:
        raise SystemExit(f"{path.name}: expected TOML front matter between '+++' lines")
    return tomllib.loads(match["meta"]), match["body"].strip() + "\n"


def build_article(path: Path, keys: dict[str, dict[str, Any]],
                  agents: dict[str, dict[str, Any]]) -> dict[str, Any]:
    meta, body = read_article(path)
    agent = agents[meta["agent"]]
    number = int(path.name.split("-", 1)[0])
    tags: list[str] = meta.get("tags", [])
    cluster, author = meta.get("cluster"), meta.get("author")
    record: dict[str, Any] = {
        "id": make_id("article", number),
        "workspaceId": WORKSPACE_ID,
        "agentId": agent["id"],
        "clusterId": keys["cluster"][cluster] if cluster else None,
        "authorIdentityId": keys["author"][author] if author else None,
        "title": meta["title"],
        "slug": meta["slug"],
        "description": meta["description"],
        "content": blocks_to_markdown(body) if meta.get("blocks") else body,
        "status": meta["status"],
        "language": meta.get("language", agent["language"]),
        "model": meta.get("model", agent["model"]),
        "tone": meta.get("tone", agent["tone"]),
        "tags": tags,
        "blocks": markdown_to_blocks(body, path.name) if meta.get("blocks") else [],
        "meta": {"keywords": meta.get("keywords", ", ".join(tags)),
                 "description": meta.get("meta_description", meta["description"]),
                 "tags": meta.get("meta_tags", tags)},
        "createdBy": keys["user"][meta.get("createdBy", "ines")],
        "updatedBy": keys["user"][meta.get("updatedBy", meta.get("createdBy", "ines"))],
        "createdAt": stamp(meta["createdAt"]),
        "updatedAt": stamp(meta.get("updatedAt", meta["createdAt"])),
    }
    return record


def _dates(item: dict[str, Any]) -> dict[str, str]:
    return {"createdAt": stamp(item["createdAt"]), "updatedAt": stamp(item["updatedAt"])}


def build_workspace(source: Path = SOURCE) -> dict[str, Any]:
    """The whole demo workspace as one JSON-ready dict (deterministic)."""
    data = tomllib.loads((source / "workspace.toml").read_text(encoding="utf-8"))
    keys: dict[str, dict[str, str]] = {
        "user": {key: make_id("user", n) for key, n in data["users"].items()},
        "cluster": {c["key"]: make_id("cluster", n) for n, c in enumerate(data["clusters"], 1)},
        "author": {a["key"]: make_id("author", n) for n, a in enumerate(data["authors"], 1)},
    }
    users = keys["user"]
    ws = data["workspace"]
    workspace = {"id": WORKSPACE_ID, "ownerId": users[ws["owner"]], "name": ws["name"],
                 "description": ws["description"], "plan": ws["plan"],
                 "isActive": ws["isActive"], **_dates(ws)}
    agents: dict[str, dict[str, Any]] = {}
    for n, a in enumerate(data["agents"], 1):
        agents[a["key"]] = {
            "id": make_id("agent", n), "workspaceId": WORKSPACE_ID, "name": a["name"],
            "description": a["description"], "status": a["status"],
            "executionMode": a["executionMode"], "schedule": a["schedule"], "model": a["model"],
            "tone": a["tone"], "language": a["language"], "prompt": a["prompt"],
            "isActive": a["status"] == "active", **_dates(a),
            "createdBy": users[a["createdBy"]], "updatedBy": users[a["updatedBy"]]}
    clusters = [{"id": keys["cluster"][c["key"]], "workspaceId": WORKSPACE_ID, "name": c["name"],
                 "description": c["description"], "color": c["color"],
                 "contentCycleId": make_id("cycle", c["cycle"]), **_dates(c)}
                for c in data["clusters"]]
    authors = [{"id": keys["author"][a["key"]], "workspaceId": WORKSPACE_ID, "name": a["name"],
                "bio": a["bio"], "imageUrl": media(a["image"]),
                "createdByUserId": users[a["createdBy"]], **_dates(a)}
               for a in data["authors"]]
    articles = [build_article(path, keys, agents)
                for path in sorted((source / "articles").glob("[0-9][0-9]-*.md"))]
    social = [{"id": make_id("social", n), "workspaceId": WORKSPACE_ID, "title": s["title"],
               "slug": s["slug"], "content": s["content"],
               "selectedImageSlot": s["selectedImageSlot"],
               "images": {slot: media(s[slot]) for slot in ("square", "portrait", "landscape")},
               "createdByUserId": users[s["createdBy"]], **_dates(s)}
              for n, s in enumerate(data["socialPosts"], 1)]
    digest = {"workspaceId": WORKSPACE_ID,
              **{k: v for k, v in data["digest"].items() if k not in ("createdAt", "updatedAt")},
              **_dates(data["digest"])}
    return {"workspace": workspace, "agents": list(agents.values()), "clusters": clusters,
            "authorIdentities": authors, "articles": articles, "socialPosts": social,
            "digest": digest}


def render(workspace: dict[str, Any]) -> str:
    """The exact text of demo-workspace.json."""
    return json.dumps(workspace, ensure_ascii=False, indent=2) + "\n"


def main(argv: list[str]) -> int:
    """Write demo-workspace.json, or with --check report whether it is up to date."""
    text = render(build_workspace())
    if "--check" in argv:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.is_file() else ""
        print("up to date" if current == text else "stale: run scripts/build_demo.py to rewrite it")
        return 0 if current == text else 1
    OUTPUT.write_text(text, encoding="utf-8")
    count = len(json.loads(text)["articles"])
    print(f"wrote {OUTPUT.name}: {count} articles, {len(text.encode()) // 1024} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
