"""Deterministic filler text for generated workspaces: titles, markdown bodies, blocks.

Role: given a seeded `random.Random`, produce plausible article text of a few paragraphs
(headings, lists, links, inline code, code fences, tables) and the matching structured blocks of
every type, quickly enough for thousands of articles. It must never read the clock, the network
or any global random state.
"""

from __future__ import annotations

import random
import re
import unicodedata
from typing import Any

WORDS = (
    "static site generator build cache render template theme page feed sitemap content "
    "agent article draft publish archive workflow pipeline deploy preview markdown block "
    "image video code list header table link search index tag cluster author voice digest "
    "reader audience traffic analytics beacon privacy speed latency request response api "
    "version schema record field token quota retry backoff budget schedule batch model "
    "prompt tone language locale slug canonical redirect asset bundle script style layout"
).split()
TITLE_WORDS = {
    "en": ("Practical", "Guide", "Faster", "Builds", "Why", "Static", "Sites", "Win", "Notes",
           "on", "Caching", "Lessons", "from", "Shipping", "Content", "Pipelines", "Modern",
           "Publishing", "Patterns", "Fewer", "Requests", "Better", "Feeds", "Quiet", "Wins"),
    "de": ("Schnelle", "Seiten", "Über", "Inhalte", "Grüße", "aus", "der", "Praxis", "Bauen",
           "mit", "Vorlagen", "Größere", "Projekte", "Leitfaden", "für", "Redaktionen", "Tipps",
           "zum", "Veröffentlichen", "Straßen", "Daten"),
    "fr": ("Guide", "pratique", "des", "sites", "statiques", "Élan", "éditorial", "Café",
           "numérique", "Publier", "mieux", "Leçons", "apprises", "Modèles", "légers",
           "Contenus", "générés", "à", "la", "chaîne"),
}
TAGS = tuple(
    "python rust javascript typescript go css html markdown seo performance caching cdn "
    "security privacy analytics accessibility design typography writing editing ai llm "
    "automation devops ci testing benchmarks web static-sites jamstack hugo eleventy astro "
    "pelican jinja templates feeds rss sitemaps images video tutorials guides news release "
    "opinion case-study interview research data api open-source tooling workflow productivity "
    "marketing newsletter social strategy".split()
)
CODE_SAMPLES = (
    ("python", "def build(site):\n    for page in site.pages:\n        page.render()\n"),
    ("bash", "sitegen build --report report.json\nls _site/\n"),
    ("toml", '[site]\ntitle = "Acme Notes"\nper_page = 10\n'),
    ("javascript", "const views = await fetch('/api/stats').then((r) => r.json());\n"),
)


def slugify(text: str) -> str:
    """Lower-case ASCII words joined by hyphens ("Über Größe!" → "uber-grosse")."""
    folded = unicodedata.normalize("NFKD", text.replace("ß", "ss"))
    ascii_text = folded.encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text).strip("-") or "untitled"


_POOL_BITS = 10
_pools: dict[tuple[int, int], tuple[str, ...]] = {}


def _pool(low: int, high: int) -> tuple[str, ...]:
    """1024 sentences of low..high words, the same in every run (built once, then shared)."""
    pool = _pools.get((low, high))
    if pool is None:
        maker = random.Random(f"sitegen-prose-{low}-{high}")
        pool = tuple(" ".join(maker.choices(WORDS, k=maker.randint(low, high))).capitalize()
                     + "." for _ in range(1 << _POOL_BITS))
        _pools[(low, high)] = pool
    return pool


def sentence(rng: random.Random, low: int = 8, high: int = 18) -> str:
    """One sentence, drawn by `rng` from a fixed pool (fast for thousands of articles)."""
    return _pool(low, high)[rng.getrandbits(_POOL_BITS)]


def paragraph(rng: random.Random, sentences: int = 3) -> str:
    pool = _pool(8, 18)
    return " ".join(pool[rng.getrandbits(_POOL_BITS)] for _ in range(sentences))


def title(rng: random.Random, language: str) -> str:
    words = rng.sample(TITLE_WORDS[language], rng.randint(3, 6))
    text = " ".join(words)
    return text[0].upper() + text[1:]


def _table(rng: random.Random) -> str:
    rows = [f"| {w} | {rng.randint(1, 999)} ms | {rng.choice(('yes', 'no'))} |"
            for w in rng.sample(WORDS, 3)]
    return "\n".join(["| Stage | Time | Cached |", "|---|---:|---|", *rows])


def markdown(rng: random.Random, heading: str, *, rich: bool) -> str:
    """A body of a few paragraphs; `rich` guarantees every markdown feature appears once."""
    parts = [paragraph(rng, rng.randint(2, 4))]
    for section in range(rng.randint(2, 4)):
        parts.append(f"## {heading} {section + 1}: {' '.join(rng.sample(WORDS, 2))}")
        parts.append(paragraph(rng) + f" See [the {rng.choice(WORDS)} notes]"
                     f"(https://example.com/{rng.choice(WORDS)}) and `{rng.choice(WORDS)}()`.")
        if rich or rng.random() < 0.5:
            marker = "1." if rng.random() < 0.3 else "-"
            parts.append("\n".join(f"{marker} {sentence(rng, 3, 7)}" for _ in range(3)))
        if rich or rng.random() < 0.35:
            language, code = rng.choice(CODE_SAMPLES)
            parts.append(f"```{language}\n{code}```")
        if rich or rng.random() < 0.2:
            parts.append(_table(rng))
        if rich or rng.random() < 0.2:
            parts.append(f"### Notes on {rng.choice(WORDS)}\n\n> {sentence(rng)}")
        rich = False
    return "\n\n".join(parts) + "\n"


def blocks(rng: random.Random, heading: str, article_id: str, *, every_type: bool) -> list[
        dict[str, Any]]:
    """Structured blocks; `every_type` guarantees every block type appears."""
    out: list[dict[str, Any]] = [{"type": "text", "content": paragraph(rng)}]
    for section in range(rng.randint(2, 4)):
        out.append({"type": "header", "content": f"{heading} {section + 1}",
                    "level": rng.choice((2, 2, 3))})
        out.append({"type": "text", "content": paragraph(rng, rng.randint(1, 3))})
        roll = rng.random()
        if every_type or roll < 0.3:
            out.append({"type": "list", "items": [sentence(rng, 3, 6) for _ in range(3)],
                        "ordered": rng.random() < 0.3})
        if every_type or 0.3 <= roll < 0.5:
            language, code = rng.choice(CODE_SAMPLES)
            out.append({"type": "code", "content": code, "language": language})
        if every_type or 0.5 <= roll < 0.7:
            image: dict[str, Any] = {
                "type": "image", "url": f"/media/generated/{article_id}-{section}.jpg"}
            if rng.random() < 0.7:
                image["caption"] = sentence(rng, 4, 8)
            out.append(image)
        if every_type or 0.7 <= roll < 0.78:
            video_id = "".join(rng.choices("abcdefghijklmnopqrstuvwxyz0123456789", k=11))
            out.append({"type": "video", "url": f"https://www.youtube.com/watch?v={video_id}",
                        "title": sentence(rng, 3, 6)[:-1]})
        if every_type or 0.78 <= roll < 0.86:
            who = " ".join(rng.choice(WORDS).title() for _ in range(2))
            out.append({"type": "quote", "text": f"{sentence(rng, 5, 10)[:-1]}, *truly*.",
                        "attribution": who, "url": f"https://example.com/{rng.choice(WORDS)}"})
        every_type = False
    return out
