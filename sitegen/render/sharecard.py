"""What a generated share card shows, and where it is served: pure facts, no drawing.

Role: for an article or a social post that has no image of its own, `card_facts` gives what
its share card (1200×630, `sitegen.emit.sharecards` draws it) shows — the title, the site's
name, the topic's colour, the author persona or agent, the language — and `card_url` the
address it is served at, derived from those facts and the drawing's version alone (so
`sitegen.render.seo` names it as `og:image` and in JSON-LD before it is drawn, and a card
whose words change gets a new address that no share cache holds). Must never draw, read a
file or touch the store.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from sitegen.model.views import ArticleView, Site, SocialPostView

#: Where the cards are served, and the version of their drawing (a new one redraws all).
FOLDER, VERSION = "share-cards", "1"
#: The colour of a card whose article has no topic.
NEUTRAL = "#4b5563"


@dataclass(frozen=True, slots=True)
class CardFacts:
    """Everything a share card shows."""

    title: str
    site: str
    colour: str
    persona: str
    language: str

    def key(self) -> str:
        """A digest of what the card shows and of the drawing's version."""
        shown = {"colour": self.colour, "language": self.language, "persona": self.persona,
                 "site": self.site, "title": self.title}  # (sorted: as `asdict`, sort_keys)
        data = json.dumps([VERSION, shown], ensure_ascii=False)
        return hashlib.sha256(data.encode("utf-8")).hexdigest()


def card_facts(site: Site, obj: ArticleView | SocialPostView) -> CardFacts:
    """What the share card of *obj* shows."""
    if isinstance(obj, SocialPostView):
        article = obj.article
        language = (article.language if article is not None else "") or site.language
    else:
        article = obj
        language = obj.language or site.language
    who = (article.author or article.agent) if article is not None else None
    colour = article.cluster.colour if article is not None and article.cluster else NEUTRAL
    return CardFacts(title=obj.title, site=site.title, colour=colour,
                     persona=who.name if who is not None else "", language=language)


def card_url(facts: CardFacts, key: str | None = None) -> str:
    """The site-relative address of the card that shows *facts* (*key*: its `key()`, when
    the caller has it already)."""
    return f"/{FOLDER}/{(key or facts.key())[:24]}.png"
