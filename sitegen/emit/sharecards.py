"""The share-card stage: a picture for every article or social post without an image.

Role: after the pages are rendered (`sitegen.build`'s files stage), name to the writer the
share card (`share-cards/<digest>.png`, 1200×630) of each article and social post whose
`og:image` is its generated card — the cards the render names, by their address
(`sitegen.render.sharecard.wanted_cards`: no hero, no body image the site shows, no social
image) — drawn by `sitegen.emit.cardpaint`. A card is kept in the store's derived data
(`kind = sharecard`) under the digest of what it shows and of the owner's template
(`[share_cards] template`), so a rebuild draws only the cards whose words changed; cards no
page names any more are dropped from the store with the build. The sha256 of each stored
card is kept beside it (`kind = sharecard-sha`), so a card the output still holds intact is
kept without reading its picture; Pillow and the painter are imported only when a card is
drawn or a template read. A missing or unreadable template is a ConfigError naming the
key. Must never write the output itself (the writer does), decide which cards a page names
(the render does), nor import the render.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from sitegen.errors import ConfigError

if TYPE_CHECKING:
    from sitegen.emit.cardpaint import CardText
    from sitegen.emit.writer import OutputWriter
    from sitegen.model.views import Site
    from sitegen.store import Store

    class Card(CardText, Protocol):
        """A card to draw: its words, and a digest of them and of their drawing's version."""

        def key(self) -> str: ...

KIND = "sharecard"
SHA_KIND = "sharecard-sha"  #: the sha256 (hex) of each stored card, by the same key


def _template(site: Site) -> bytes | None:
    """The owner's template picture (`[share_cards] template`), or None."""
    name = site.config.share_cards.template
    if not name:
        return None
    from PIL import Image, UnidentifiedImageError  # (only for an owner's template)

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
    shas = store.derived(SHA_KIND, keys.values()) if keys else {}
    kept = _kept(keys, shas, writer)
    wanted = [keys[url] for url in sorted(cards) if url not in kept]
    stored = store.derived(KIND, wanted) if wanted else {}
    todo = [url for url in sorted(cards) if url not in kept and keys[url] not in stored]
    drawn = _draw({url: cards[url] for url in todo}, template)
    written = {keys[url]: writer.write(url.lstrip("/"), drawn.get(url) or stored[keys[url]])
               for url in sorted(cards) if url not in kept}
    store.save_derived(KIND, {keys[url]: data for url, data in drawn.items()}, keys.values())
    store.save_derived(SHA_KIND, {k: sha.encode("ascii") for k, sha in written.items()},
                       keys.values())
    return len(drawn)


def _kept(keys: Mapping[str, str], shas: Mapping[str, bytes], writer: OutputWriter
          ) -> set[str]:
    """The card URLs (*keys*: URL → store key) the output holds intact as stored (*shas*:
    store key → sha256), each kept by the writer."""
    return {url for url, key in keys.items() if (sha := shas.get(key)) is not None
            and writer.recorded(url.lstrip("/")) == sha.decode("ascii", "replace")
            and writer.keep(url.lstrip("/"))}


def _draw(cards: Mapping[str, Card], template: bytes | None) -> dict[str, bytes]:
    """Each card of *cards* drawn (several at once), by URL."""
    if not cards:
        return {}
    from sitegen.emit.cardpaint import paint  # (Pillow: only when a card is drawn)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        return dict(zip(cards, pool.map(lambda url: paint(cards[url], template), cards),
                        strict=True))
