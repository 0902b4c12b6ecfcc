"""Words a visitor and a machine read, in a real browser, over the demo in both themes.

The demo workspace is built once per theme and served over loopback with its `_headers`
rules (its Content-Security-Policy). Checked as a visitor's browser sees the pages:
languages are named in their own name (the language page's heading and title, the
footer's switcher, each link with its `lang`); every image has a text alternative, or an
empty one only where it is decorative (a card's picture beside its linked title), and
text in another language than the page says so (`lang`); the AI persona is labelled as
one (the author box, the author page, the article's JSON-LD) and social post pages say an
AI agent wrote them; and what machines read — the article's JSON-LD image and raster
publisher logo, the feeds' absolute image URLs, the sitemap's dates of social posts and
each tag page's own description.
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from playwright.sync_api import Browser, Page

from tests.browser.served import THEMES, demo_sites

pytestmark = pytest.mark.browser

SITE_URL = "https://notes.example.test/"
TIMEOUT = 60_000
#: Where each theme's build was written (filled by the `sites` fixture).
OUTPUTS: dict[str, Path] = {}


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Base URLs of the demo built in each theme (with the site's public URL an https
    address, as published), served from loopback."""
    with demo_sites(tmp_path_factory.mktemp("words"), url=SITE_URL) as built:
        OUTPUTS.update((theme, output) for theme, (_, output) in built.items())
        yield {theme: base for theme, (base, _) in built.items()}


@pytest.fixture()
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(TIMEOUT)
    context.set_default_navigation_timeout(TIMEOUT)
    try:
        yield context.new_page()
    finally:
        context.close()


def _open(page: Page, base: str, path: str) -> None:
    response = page.goto(base + path, wait_until="domcontentloaded")
    assert response is not None and response.status == 200, path


def _jsonld(page: Page) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(
        page.locator('script[type="application/ld+json"]').first.text_content() or "{}")
    return found


@pytest.mark.parametrize("theme", THEMES)
def test_languages_are_named_in_their_own_name(sites: dict[str, str], page: Page,
                                               theme: str) -> None:
    _open(page, sites[theme], "/lang/fr/")
    assert page.locator("h1").first.inner_text().strip() == "Français"
    assert page.title().startswith("Français – ")
    switcher = page.locator(".site-footer a[hreflang]")
    names = {(switcher.nth(i).get_attribute("lang"), switcher.nth(i).inner_text().strip())
             for i in range(switcher.count())}
    assert {("de", "Deutsch"), ("en", "English"), ("fr", "Français")} <= names, names


#: Pages with every kind of image the demo shows: cards, figures, avatars, social cards.
IMAGE_PAGES = ("/", "/makefile-readme-that-runs/", "/le-levain-sans-dogme/",
               "/night-train-to-vienna/", "/authors/theo-marchand/",
               "/topics/the-fermenting-kitchen/", "/tags/shell/", "/social/",
               "/social/night-trains-are-back/", "/social/two-per-cent-salt/")
#: Each image of the page: its alt (None: no attribute), whether it sits in a card (a
#: list's card, or magazine's lead story: a picture beside its linked title), and the
#: page's h1 and document title.
IMAGES_JS = """() => [...document.querySelectorAll('img')].map(img => ({
    alt: img.getAttribute('alt'), src: img.currentSrc || img.src,
    card: !!img.closest('.card, .lead-story'), body: !!img.closest('.prose'),
    captioned: !!(img.closest('figure') && img.closest('figure').querySelector('figcaption')),
    h1: (document.querySelector('h1') || {}).textContent || '', title: document.title}))"""


@pytest.mark.parametrize("theme", THEMES)
def test_every_image_has_a_text_alternative_or_is_decoration_in_a_card(
        sites: dict[str, str], page: Page, theme: str) -> None:
    problems: list[str] = []
    named = 0
    for path in IMAGE_PAGES:
        _open(page, sites[theme], path)
        for image in page.evaluate(IMAGES_JS):
            alt, where = image["alt"], f"{path} {image['src']}"
            h1 = " ".join(image["h1"].split())
            if alt is None:
                problems.append(f"{where}: no alt attribute")
            elif not alt.strip():
                # (issue 53: in a body, an image whose content gives no alt has none, never
                # a guess, and a captioned one is named by its caption, read once)
                if not (image["card"] or image["captioned"] or image["body"]):
                    problems.append(f"{where}: empty alt outside a card or a body")
            else:
                named += 1
                if alt.strip() in (h1, image["title"], image["title"].split(" – ")[0]):
                    problems.append(f"{where}: alt {alt!r} repeats the page's title")
        share = page.locator('meta[property="og:image:alt"]')
        if share.count():
            text = share.get_attribute("content") or ""
            if text in (page.title(), page.title().split(" – ")[0]):
                problems.append(f"{path}: og:image:alt is the page's title")
    assert not problems, "\n".join(problems)
    assert named >= 10
    # the French article's author bio is English, and says so
    _open(page, sites[theme], "/le-levain-sans-dogme/")
    assert page.locator("html").get_attribute("lang") == "fr"
    bio = page.locator(".author-box__bio")
    assert bio.get_attribute("lang") == "en" and "ferments" in bio.inner_text()
    # a figure's image is named by its caption (read once: its alt does not repeat it), and
    # link previews describe it
    _open(page, sites[theme], "/makefile-readme-that-runs/")
    figure = page.locator("#article-body figure img").first
    caption = page.locator("#article-body figcaption").first.inner_text().strip()
    assert caption and figure.get_attribute("alt") == ""
    assert page.locator('meta[property="og:image:alt"]').get_attribute("content") == caption
    assert page.locator('meta[name="twitter:image:alt"]').get_attribute("content") == caption


@pytest.mark.parametrize("theme", THEMES)
def test_the_ai_persona_is_labelled_and_social_posts_disclose_their_writer(
        sites: dict[str, str], page: Page, theme: str) -> None:
    for path, label, description in (
            ("/makefile-readme-that-runs/", "AI persona", "An AI persona of Northwind"),
            ("/le-levain-sans-dogme/", "Persona d’IA", "Un persona d’IA de Northwind")):
        _open(page, sites[theme], path)
        name = page.locator(".author-box__name")
        assert (name.locator(".persona-label").text_content() or "").strip() == label
        assert name.locator(".persona-label").is_visible()
        # beside the name: on its line, to its right
        link, tag = name.locator("a").bounding_box(), name.locator(".persona-label").bounding_box()
        assert link is not None and tag is not None
        assert tag["x"] >= link["x"] + link["width"] and abs(tag["y"] - link["y"]) < link["height"]
        author = _jsonld(page)["author"]
        assert author["@type"] == "Person" and author["description"].startswith(description)
    _open(page, sites[theme], "/authors/priya-raman/")
    assert (page.locator(".author-intro .persona-label").text_content() or "").strip() \
        == "AI persona"
    for slug in ("night-trains-are-back", "two-per-cent-salt"):
        _open(page, sites[theme], f"/social/{slug}/")
        line = page.locator(".social-post__disclosure")
        assert line.is_visible()
        assert line.inner_text().strip() == "Written by an AI agent for Northwind Field Notes"


@pytest.mark.parametrize("theme", THEMES)
def test_structured_data_feeds_sitemap_and_tag_descriptions(
        sites: dict[str, str], page: Page, theme: str) -> None:
    base = sites[theme]
    _open(page, base, "/makefile-readme-that-runs/")
    data = _jsonld(page)
    assert data["image"].startswith(SITE_URL + "media/") and data["image"].endswith(".jpg")
    logo = data["publisher"]["logo"]["url"]
    assert logo.startswith(SITE_URL) and logo.endswith(".png")
    shown = page.request.get(base + "/" + logo.removeprefix(SITE_URL))
    assert shown.ok and shown.headers["content-type"] == "image/png"
    width, height = struct.unpack(">II", shown.body()[16:24])  # the PNG's IHDR
    assert width >= 112 and height >= 112
    # every image and link of every feed entry is absolute
    feeds = ["/feed.xml", "/tags/shell/feed.xml", "/topics/the-fermenting-kitchen/feed.xml"]
    relative: list[str] = []
    entries = 0
    for feed in feeds:
        answer = page.request.get(base + feed)
        assert answer.ok, feed
        tree = ElementTree.fromstring(answer.body())
        for content in tree.iter("{http://www.w3.org/2005/Atom}content"):
            entries += 1
            html = content.text or ""
            urls = re.findall(r'\s(?:src|href)="([^"]*)"', html)
            for srcset in re.findall(r'\ssrcset="([^"]*)"', html):
                urls += [part.split()[0] for part in srcset.split(",") if part.strip()]
            relative += [f"{feed}: {url}" for url in urls
                         if not url.startswith(("https://", "http://", "mailto:"))]
    assert entries > 10 and not relative, relative[:10]
    assert any("srcset" in (c.text or "") for c in ElementTree.fromstring(
        page.request.get(base + "/feed.xml").body()).iter("{http://www.w3.org/2005/Atom}content"))
    # social posts are dated in the sitemap
    sitemap = ElementTree.fromstring(page.request.get(base + "/sitemap.xml").body())
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    social = {u.findtext("s:loc", namespaces=ns): u.findtext("s:lastmod", namespaces=ns)
              for u in sitemap.findall("s:url", ns)
              if "/social/" in (u.findtext("s:loc", namespaces=ns) or "")}
    assert len(social) >= 5 and all(social.values()), social
    # each tag page has its own description
    described = {}
    for tag in ("shell", "travel"):
        _open(page, base, f"/tags/{tag}/")
        described[tag] = page.locator('meta[name="description"]').get_attribute("content") or ""
        assert f"tagged {tag} on Northwind Field Notes: " in described[tag]
    assert described["shell"] != described["travel"]
