"""What a generated share card shows, where it is served, which cards a site needs: no drawing.

Role: `wanted_cards` names the cards a site's pages name as `og:image` — each article and social
post with no image the site shows (no hero, no body image, no social image) — for the emit
stage to draw (`sitegen.emit.sharecards`); for one of them, `card_facts` gives what
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
from collections.abc import Callable, Mapping, Sequence
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


def card_url(facts: CardFacts) -> str:
    """The site-relative address of the card that shows *facts*."""
    return f"/{FOLDER}/{facts.key()[:24]}.png"


def article_image(article: ArticleView, absolute_image: Callable[[str], str],
                  body_images: Mapping[str, Sequence[str]] | None) -> str:
    """The first image of *article*'s body the site shows (absolute), or ""."""
    others = body_images.get(article.body_hash, ()) if body_images is not None else ()
    return next((i for i in map(absolute_image, others) if i), "")


def wanted_cards(site: Site, shown: Callable[[str], str],
                 body_images: Mapping[str, Sequence[str]] | None) -> dict[str, CardFacts]:
    """The facts of every card a page names, by `card_url`: each article and social post
    without an image the site shows (*shown*: an image URL as written → the one served, ""
    when none; *body_images*: a body's images, by its hash)."""
    wanted = []
    for article in site.articles:
        hero = shown(article.image) if article.image else ""
        if not hero and not article_image(article, shown, body_images):
            wanted.append(card_facts(site, article))
    for post in site.social_posts:
        if not (post.share_image and shown(post.share_image)):
            wanted.append(card_facts(site, post))
    return {card_url(facts): facts for facts in wanted}
