"""Images drawn for generated workspaces: real JPEG bytes for any `/media/generated/` name.

Role: `python -m sitegen.emulator.generator` names its images root-relative
(`/media/generated/<article id>-<n>.jpg`, `author-<id>.jpg`, `social-<id>-<slot>.jpg`), so
they resolve at whatever emulator serves the workspace, as the demo's do; `drawn_jpeg` paints
the image a name stands for: a gradient and a few discs in colours taken from the name's
hash, sized by its kind (square avatars and social squares, a portrait, landscapes). The same
name always gives the same bytes, and nothing is stored. It must never read or write files.
"""

from __future__ import annotations

import hashlib
import io
from functools import lru_cache

SIZES = {"author": (320, 320), "square": (600, 600), "portrait": (480, 600),
         "landscape": (800, 450)}
"""Pixel sizes by kind of name; an article's image is a landscape."""


def size_for(name: str) -> tuple[int, int]:
    """The size of the image *name* stands for."""
    stem = name.rsplit(".", 1)[0]
    if stem.startswith("author-"):
        return SIZES["author"]
    return SIZES.get(stem.rsplit("-", 1)[-1], SIZES["landscape"])


def _colour(seed: bytes, at: int) -> tuple[int, int, int]:
    """A mid-toned colour from three bytes of *seed* (never near black or white)."""
    return (48 + seed[at] % 160, 48 + seed[at + 1] % 160, 48 + seed[at + 2] % 160)


@lru_cache(maxsize=256)
def drawn_jpeg(name: str) -> bytes:
    """The JPEG bytes of the generated image *name*; the same name, the same bytes."""
    from PIL import Image, ImageDraw

    seed = hashlib.sha256(name.encode()).digest()
    width, height = size_for(name)
    turned = Image.linear_gradient("L").rotate(seed[0] * 360 // 256, expand=True,
                                               resample=Image.Resampling.BILINEAR)
    middle = (turned.width - 180) // 2  # the part of the turned square with no corner in it
    mask = turned.crop((middle, middle, middle + 180, middle + 180)).resize((width, height))
    image = Image.composite(Image.new("RGB", (width, height), _colour(seed, 1)),
                            Image.new("RGB", (width, height), _colour(seed, 4)), mask)
    draw = ImageDraw.Draw(image)
    for disc in range(3):
        at = 7 + disc * 6
        radius = min(width, height) * (10 + seed[at] % 20) // 100
        x, y = seed[at + 1] * width // 255, seed[at + 2] * height // 255
        draw.ellipse((x - radius, y - radius, x + radius, y + radius),
                     fill=_colour(seed, at + 3))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=85)
    return out.getvalue()
