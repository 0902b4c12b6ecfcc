"""Share cards: a generated picture for every article or social post without an image.

Issue 53. The demo is built (real files, the real store) and its pages read: an article
without any image the site shows names its card as `og:image`, `twitter:image` and in
its JSON-LD; the file is there, a 1200×630 PNG; an article with a picture keeps its own;
the next build draws no card again (the store has them); `[share_cards] enabled = false`
names none and writes none; a template changes the cards' pixels, not their addresses; a
missing template is a ConfigError naming the key, and the previous output is kept.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from sitegen.build import BuildOptions, run_build
from sitegen.config import DEMO_WORKSPACE_ID, demo_config, parse_config
from sitegen.emit import cardpaint, sharecards
from sitegen.errors import ConfigError
from sitegen.render.sharecard import VERSION, CardFacts
from tests.content import synced

IMAGELESS = "structured-logs-you-can-read"
PICTURED = "lyon-a-pied"
_OG = re.compile(r'<meta property="og:image" content="([^"]*)"')
_LD = re.compile(r'<script type="application/ld\+json">(.*?)</script>', re.S)


def _build(site: Path, **cards: Any) -> Path:
    site.mkdir(parents=True, exist_ok=True)
    config = parse_config({
        "site": {"title": "Northwind Field Notes", "url": "https://notes.example.org/"},
        "api": {"url": "http://127.0.0.1:9/", "workspace": DEMO_WORKSPACE_ID},
        "analytics": {"enabled": False}, "search": {"enabled": False},
        "share_cards": cards,
    }, site)
    output = site / "_site"
    run_build(config, BuildOptions(output=output, demo=True,
                                   workspace=synced(demo_config(None, site))))
    return output


def _og(output: Path, slug: str) -> str:
    found = _OG.search((output / slug / "index.html").read_text(encoding="utf-8"))
    return found.group(1) if found else ""


def _drawn(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The titles of the cards drawn from now on."""
    titles: list[str] = []
    real = cardpaint.paint

    def counted(facts: Any, template: bytes | None = None) -> bytes:
        titles.append(facts.title)
        return real(facts, template)

    monkeypatch.setattr(cardpaint, "paint", counted)
    return titles


def test_an_article_without_an_image_shares_its_card(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    drawn = _drawn(monkeypatch)
    output = _build(tmp_path / "site")
    url = _og(output, IMAGELESS)
    assert url.startswith("https://notes.example.org/share-cards/") and url.endswith(".png")
    page = (output / IMAGELESS / "index.html").read_text(encoding="utf-8")
    assert f'<meta name="twitter:image" content="{url}">' in page
    assert json.loads(_LD.search(page).group(1))["image"] == url  # type: ignore[union-attr]
    card = output / url.removeprefix("https://notes.example.org/")
    with Image.open(card) as picture:
        assert (picture.format, picture.size) == ("PNG", (1200, 630))
    assert "/share-cards/" not in _og(output, PICTURED)
    assert "Structured Logs You Can Actually Read" in drawn
    social = sorted((output / "social").glob("*/index.html"))
    assert social and all(_OG.search(p.read_text(encoding="utf-8")) for p in social)
    # The next build draws nothing: every card comes from the store, byte for byte.
    before = card.read_bytes()
    drawn.clear()
    _build(tmp_path / "site")
    assert drawn == [] and card.read_bytes() == before


def test_a_card_the_output_holds_intact_is_kept_without_its_picture(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's pictures are read only for cards the output lacks: with every stored
    picture gone, the next build draws nothing (the output holds each card intact, as its
    recorded sha256 says); a card then removed from the output is drawn again, once."""
    output = _build(tmp_path / "site")
    card = output / _og(output, IMAGELESS).removeprefix("https://notes.example.org/")
    before = card.read_bytes()
    with sqlite3.connect(next((tmp_path / "site").rglob("*.sqlite*"))) as db:
        assert db.execute("DELETE FROM derived WHERE kind = ?", (sharecards.KIND,)).rowcount
    drawn = _drawn(monkeypatch)
    _build(tmp_path / "site")
    assert drawn == [] and card.read_bytes() == before
    card.unlink()
    _build(tmp_path / "site")
    assert drawn == ["Structured Logs You Can Actually Read"] and card.read_bytes() == before


def test_a_card_s_address_is_the_digest_of_what_it_shows() -> None:
    """The digest is JSON of the sorted fields (as `dataclasses.asdict` with `sort_keys`):
    a card's address must not change with the code that computes it."""
    facts = CardFacts(title='Ünï "x"\n', site="S", colour="#fff", persona="P", language="de")
    data = json.dumps([VERSION, dataclasses.asdict(facts)], ensure_ascii=False, sort_keys=True)
    assert facts.key() == hashlib.sha256(data.encode("utf-8")).hexdigest()


def test_cards_can_be_turned_off(tmp_path: Path) -> None:
    output = _build(tmp_path / "site", enabled=False)
    assert _og(output, IMAGELESS) == ""
    assert not (output / "share-cards").exists()


def test_a_template_is_drawn_under_the_words(tmp_path: Path) -> None:
    plain = _build(tmp_path / "plain")
    site = tmp_path / "templated"
    site.mkdir()
    Image.new("RGB", (600, 315), "#204060").save(site / "card.png")
    templated = _build(site, template="card.png")
    url = _og(templated, IMAGELESS)
    assert url == _og(plain, IMAGELESS)
    rel = url.removeprefix("https://notes.example.org/")
    with Image.open(io.BytesIO((templated / rel).read_bytes())) as one, \
            Image.open(io.BytesIO((plain / rel).read_bytes())) as other:
        assert one.size == other.size == (1200, 630)
        assert one.convert("RGB").getpixel((600, 600)) != other.convert("RGB").getpixel((600, 600))


def test_a_missing_template_names_the_key_and_keeps_the_output(tmp_path: Path) -> None:
    output = _build(tmp_path / "site")
    kept = (output / IMAGELESS / "index.html").read_bytes()
    with pytest.raises(ConfigError, match=r"\[share_cards\] template = 'nope.png'"):
        _build(tmp_path / "site", template="nope.png")
    assert (output / IMAGELESS / "index.html").read_bytes() == kept
