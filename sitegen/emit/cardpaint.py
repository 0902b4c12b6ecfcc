"""Drawing a share card: the PNG of a card's words, 1200×630, with Pillow and a bundled font.

Role: for `sitegen.emit.sharecards`, turn what a card shows (title, site name, topic colour,
author persona: `CardText`, which the render's `sitegen.render.sharecard.CardFacts` are)
into PNG bytes: a light card with a
band in the topic's colour, the site's name, the title in large bold type wrapped to at most
four lines (smaller type for a long one, an ellipsis past that), and the persona's name
beside a dot of the colour — or the same words over the owner's template picture. The
type is DejaVu Sans (Bitstream Vera licence, see `fonts/LICENSE`), bundled, so a card draws
the same on any machine; it covers Latin, Greek and Cyrillic. Must never read the
store, write a file or know where a card is served.
"""

from __future__ import annotations

import io
from functools import lru_cache
from importlib import resources
from typing import Protocol

from PIL import Image, ImageDraw, ImageFont, ImageOps


class CardText(Protocol):
    """What a card shows (the render decides it: `sitegen.render.sharecard.card_facts`)."""

    @property
    def title(self) -> str: ...
    @property
    def site(self) -> str: ...
    @property
    def colour(self) -> str: ...
    @property
    def persona(self) -> str: ...


SIZE = (1200, 630)
MARGIN = 80
INK, MUTED, PAPER = "#15171a", "#4a4f57", "#faf8f4"
#: Title sizes tried, largest first, until the title fits in `MAX_LINES` lines.
TITLE_SIZES, MAX_LINES = (76, 66, 58, 50), 4


@lru_cache(maxsize=16)
def _font(bold: bool, size: int) -> ImageFont.FreeTypeFont:
    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    data = resources.files("sitegen.emit").joinpath("fonts", name).read_bytes()
    return ImageFont.truetype(io.BytesIO(data), size)


def _wrap(draw: ImageDraw.ImageDraw, text: str, font: ImageFont.FreeTypeFont,
          width: int) -> list[str]:
    """*text* in lines no wider than *width* (split at spaces; a word wider than a line, or a
    script without spaces, split between characters)."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        trial = f"{line} {word}".strip()
        if draw.textlength(trial, font=font) <= width:
            line = trial
            continue
        if line:
            lines.append(line)
        line = ""
        for char in word:
            if draw.textlength(line + char, font=font) > width and line:
                lines.append(line)
                line = ""
            line += char
    if line:
        lines.append(line)
    return lines


def _title(draw: ImageDraw.ImageDraw, title: str, width: int
           ) -> tuple[ImageFont.FreeTypeFont, list[str]]:
    """The title's font and lines: the largest size that fits, else the smallest, cut."""
    for size in TITLE_SIZES:
        font = _font(True, size)
        lines = _wrap(draw, title, font, width)
        if len(lines) <= MAX_LINES:
            return font, lines
    lines = lines[:MAX_LINES]
    while lines[-1] and draw.textlength(lines[-1] + "…", font=font) > width:
        lines[-1] = lines[-1][:-1]
    lines[-1] = lines[-1].rstrip() + "…"
    return font, lines


def _base(template: bytes | None) -> Image.Image:
    if template is None:
        return Image.new("RGB", SIZE, PAPER)
    with Image.open(io.BytesIO(template)) as picture:
        fitted = ImageOps.fit(picture.convert("RGB"), SIZE)
    veil = Image.new("RGB", SIZE, PAPER)  # (the words stay readable over any picture)
    return Image.blend(fitted, veil, 0.82)


def paint(facts: CardText, template: bytes | None = None) -> bytes:
    """The PNG of the card that shows *facts* (over *template*, a picture, if given)."""
    card = _base(template)
    draw = ImageDraw.Draw(card)
    width = SIZE[0] - 2 * MARGIN
    draw.rectangle((0, 0, SIZE[0], 18), fill=facts.colour)
    draw.rectangle((0, 0, 18, SIZE[1]), fill=facts.colour)
    site_font = _font(False, 34)
    draw.text((MARGIN, 70), facts.site, font=site_font, fill=MUTED)
    font, lines = _title(draw, facts.title, width)
    step = round(font.size * 1.18)
    top = 150 + max(0, (MAX_LINES - len(lines)) * step // 3)
    for number, line in enumerate(lines):
        draw.text((MARGIN, top + number * step), line, font=font, fill=INK)
    if facts.persona:
        bottom = SIZE[1] - 80
        draw.ellipse((MARGIN, bottom - 14, MARGIN + 28, bottom + 14), fill=facts.colour)
        persona_font = _font(True, 32)
        name = _wrap(draw, facts.persona, persona_font, width - 48)[0]
        draw.text((MARGIN + 46, bottom), name, font=persona_font, fill=INK, anchor="lm")
    out = io.BytesIO()  # (64 colours: the words stay smooth, the file ~20 kB instead of ~50)
    card.quantize(64).save(out, "PNG")
    return out.getvalue()
