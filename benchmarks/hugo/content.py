"""Write a workspace's published articles as a Hugo source folder.

Role: the Hugo half of the A/B benchmark. Given the workspace JSON that the emulator
serves (see demo-workspace-format.md), write `config.toml`, one `content/posts/<id>.md`
per published article (TOML front matter: title, date, lastmod, tags, slug,
description; body = the article's markdown `content`) and copy the minimal layout set
(article page, paginated home page, paginated tag pages, tag list, RSS, 404).
Slugs are cleaned and de-duplicated the way sitegen does it, so both sites have the
same URLs. It must never run Hugo, never write outside the folder it is given, and
never include drafts or archived articles.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from slugify import slugify

LAYOUTS = Path(__file__).resolve().parent / "layouts"

#: First URL segments the Hugo site itself uses (or sitegen reserves): never an article slug.
RESERVED = frozenset({
    "tags", "page", "agents", "topics", "authors", "index", "404", "feed", "sitemap", "robots",
    "static", "media", "posts",
})

CONFIG = """\
baseURL = {base_url}
title = {title}
languageCode = "en"
paginate = {per_page}
enableRobotsTXT = true
disableKinds = ["section"]

[taxonomies]
  tag = "tags"

[permalinks]
  posts = "/:slug/"

[outputs]
  home = ["HTML", "RSS"]
  taxonomy = ["HTML"]
  term = ["HTML"]

[services.rss]
  limit = {feed_size}

[markup.goldmark.renderer]
  unsafe = false
"""


def toml_string(value: str) -> str:
    """*value* as a TOML basic string (quotes, backslashes and control characters escaped)."""
    out = ['"']
    for char in value:
        code = ord(char)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        elif 0xD800 <= code <= 0xDFFF:  # a lone surrogate cannot be written as UTF-8
            out.append("\uFFFD")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def is_published(article: Mapping[str, Any]) -> bool:
    """True for an article sitegen would publish: status published, an id, a title or body."""
    if article.get("status") != "published" or not article.get("id"):
        return False
    return bool(_text(article.get("title")) or _text(article.get("content")))


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _tags(article: Mapping[str, Any]) -> list[str]:
    raw = article.get("tags")
    if not isinstance(raw, list) or not raw:
        meta = article.get("meta")
        raw = meta.get("tags") if isinstance(meta, Mapping) else None
    tags: list[str] = []
    for tag in raw if isinstance(raw, list) else []:
        name = _text(tag)
        if name and slugify(name) and name not in tags:
            tags.append(name)
    return tags


def assign_slugs(articles: Iterable[Mapping[str, Any]]) -> list[tuple[str, Mapping[str, Any]]]:
    """(slug, article) pairs: slug cleaned, else from the title, else the id; unique."""
    taken: set[str] = set(RESERVED)
    pairs: list[tuple[str, Mapping[str, Any]]] = []
    for article in articles:
        wanted = (slugify(_text(article.get("slug")), max_length=80, word_boundary=True)
                  or slugify(_text(article.get("title")), max_length=80, word_boundary=True)
                  or slugify(str(article["id"])))
        slug, n = wanted, 2
        while slug in taken:
            slug, n = f"{wanted}-{n}", n + 1
        taken.add(slug)
        pairs.append((slug, article))
    return pairs


def front_matter(article: Mapping[str, Any], slug: str) -> str:
    """The TOML front matter block (between `+++` lines) for one article."""
    meta = article.get("meta")
    description = _text(article.get("description")) or (
        _text(meta.get("description")) if isinstance(meta, Mapping) else "")
    lines = ["+++", f"title = {toml_string(_text(article.get('title')) or slug)}"]
    for key, field in (("date", "createdAt"), ("lastmod", "updatedAt")):
        stamp = _text(article.get(field))
        if stamp:
            lines.append(f"{key} = {toml_string(stamp)}")
    lines.append(f"slug = {toml_string(slug)}")
    if description:
        lines.append(f"description = {toml_string(description)}")
    lines.append("tags = [" + ", ".join(toml_string(t) for t in _tags(article)) + "]")
    lines.append("+++")
    return "\n".join(lines) + "\n"


def hugo_body(markdown: str) -> str:
    """The article markdown with Hugo shortcode openers defused (content is not a template)."""
    return markdown.replace("{{<", "{ {<").replace("{{%", "{ {%")


def write_hugo_site(
    workspace: Mapping[str, Any],
    dest: Path,
    *,
    title: str = "Benchmark",
    base_url: str = "https://bench.example.test/",
    per_page: int = 10,
    feed_size: int = 20,
) -> int:
    """Write a Hugo source folder for *workspace*'s published articles into *dest*.

    *dest* is replaced if it exists. Returns the number of articles written.
    """
    if dest.exists():
        shutil.rmtree(dest)
    posts = dest / "content" / "posts"
    posts.mkdir(parents=True)
    shutil.copytree(LAYOUTS, dest / "layouts")
    (dest / "config.toml").write_text(CONFIG.format(
        base_url=toml_string(base_url), title=toml_string(title), per_page=per_page,
        feed_size=feed_size), encoding="utf-8")
    articles = [a for a in workspace.get("articles", []) if is_published(a)]
    for slug, article in assign_slugs(articles):
        body = article.get("content") if isinstance(article.get("content"), str) else ""
        text = front_matter(article, slug) + "\n" + hugo_body(str(body)) + "\n"
        (posts / f"{slugify(str(article['id']))}.md").write_text(text, encoding="utf-8")
    return len(articles)
