"""The share-card stage: a picture for every article or social post without an image.

Role: after the pages are rendered (`sitegen.build`'s files stage), name to the writer the
share card (`share-cards/<digest>.png`, 1200×630) of each article and social post whose
`og:image` is its generated card — the cards the render names, by their address
(`sitegen.render.sharecard.wanted_cards`: no hero, no body image the site shows, no social
image) — drawn by `sitegen.emit.cardpaint`. A card is kept in the store's derived data
(`kind = sharecard`) under the digest of what it shows and of the owner's template
(`[share_cards] template`), so a rebuild draws only the cards whose words changed; cards no
page names any more are dropped from the store with the build. A missing or unreadable
template is a ConfigError naming the key. Must never write the output itself (the writer
does), decide which cards a page names (the render does), nor import the render.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PIL import Image, UnidentifiedImageError

from sitegen.emit.cardpaint import CardText, paint
from sitegen.errors import ConfigError

if TYPE_CHECKING:
    from sitegen.emit.writer import OutputWriter
    from sitegen.model.views import Site
    from sitegen.store import Store

KIND = "sharecard"


class Card(CardText, Protocol):
    """A card to draw: its words, and a digest of them and of their drawing's version."""

    def key(self) -> str: ...


def _template(site: Site) -> bytes | None:
    """The owner's template picture (`[share_cards] template`), or None."""
    name = site.config.share_cards.template
    if not name:
        return None
    path = Path(site.config.root) / name
    try:
        data = path.read_bytes()
        with Image.open(path) as picture:
            picture.verify()
    except (OSError, UnidentifiedImageError) as error:
        raise ConfigError(
            f"[share_cards] template = {name!r} could not be read as a PNG or JPEG picture "
            f"({getattr(error, 'strerror', None) or error}); the previous output was kept: "
            "fix the path (relative to the site folder) or remove the key") from None
    return data


def share_cards(site: Site, writer: OutputWriter, store: Store,
                cards: Mapping[str, Card]) -> int:
    """Name every wanted card (*cards*: by the address it is served at) to the writer (from
    the store, else drawn; several at once); how many were drawn."""
    if not site.config.share_cards.enabled:
        return 0
    template = _template(site)
    salt = hashlib.sha256(template).hexdigest() if template is not None else ""
    keys = {url: hashlib.sha256(f"{facts.key()}|{salt}".encode()).hexdigest()
            for url, facts in cards.items()}
    stored = store.derived(KIND, keys.values()) if keys else {}
    todo = [url for url in sorted(cards) if keys[url] not in stored]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        drawn = dict(zip(todo, pool.map(lambda url: paint(cards[url], template), todo),
                         strict=True))
    for url in sorted(cards):
        writer.write(url.lstrip("/"), drawn[url] if url in drawn else stored[keys[url]])
    store.save_derived(KIND, {keys[url]: data for url, data in drawn.items()}, keys.values())
    return len(drawn)
