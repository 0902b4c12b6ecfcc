"""Cards, their pictures and the phone header, measured in a real browser, in both themes.

The demo workspace is built once per theme and served over loopback with its `_headers`
rules (as `test_themes_a11y` serves it). What a visitor would see is measured from the
boxes Chromium lays out, never from the HTML alone:

- no card or lead story draws a single letter larger than its own headline, and a card
  without a picture is, on a phone, no taller than its words and its padding;
- at 1280 px the cards of a row end evenly: no card has a stretch of blank space (below its
  content, or a hole where a line is pushed to the bottom) more than 8 px taller than the
  fullest card of its row has;
- at 375 px the header is at most two rows of text (its name, links and Search, each
  line of each counted), Tab reaches every link of it and a focused link is never hidden
  (at least 24 px of it in view: Chromium scrolls a link only partly in view no further),
  and a magazine article shows body text on the first 375×667 screen;
- at 1280×800 no image in the first screen of a list page waits to be lazy-loaded;
- at 1280 px each card picture's chosen file is at most twice as wide as it is shown
  (`sizes` matches the grid), and at 375 px a byline's author name stays on one line;
- every page waits for one stylesheet only, under 14 kB gzipped (one round trip).
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser

from tests.browser.served import THEMES, demo_sites, open_page

pytestmark = pytest.mark.browser

LISTS = {
    "home": "/",
    "page-2": "/page/2/",
    "topic": "/topics/the-fermenting-kitchen/",
    "tag": "/tags/shell/",
    "author": "/authors/mara-lindqvist/",
}
ARTICLE = "/makefile-readme-that-runs/"
#: Every card of a page, and the lead story of magazine's home.
CARDS = ".card, .lead-story"


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Base URLs of the demo site built in each theme, served from loopback."""
    with demo_sites(tmp_path_factory.mktemp("cards")) as built:
        yield {theme: base for theme, (base, _) in built.items()}


# -- point 3: no giant letters; a card without a picture is as tall as its words ------------

#: [card, text, font size, headline size] of every single letter a card draws (its text or a
#: ::before/::after `content`, an `attr()` resolved) larger than the card's headline.
_BIG_LETTERS = """sel => [...document.querySelectorAll(sel)].flatMap(card => {
  const title = card.querySelector('.card__title, .lead-story__title');
  const limit = parseFloat(getComputedStyle(title).fontSize);
  const found = [];
  for (const el of [card, ...card.querySelectorAll('*')]) {
    const own = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.data).join('');
    const texts = [[own, getComputedStyle(el)]];
    for (const pseudo of ['::before', '::after']) {
      const style = getComputedStyle(el, pseudo);
      let text = style.content;
      const attr = /^attr\\(([\\w-]+)\\)$/.exec(text);
      if (attr) text = el.getAttribute(attr[1]) || '';
      else if (/^["'].*["']$/.test(text)) text = text.slice(1, -1);
      else text = '';
      if (style.display !== 'none') texts.push([text, style]);
    }
    for (const [text, style] of texts) {
      const size = parseFloat(style.fontSize);
      if (/^\\p{L}$/u.test(text.trim()) && size > limit)
        found.push([title.textContent.trim(), text.trim(), size, limit]);
    }
  }
  return found; })"""

#: [headline, card height, height its words and padding need] of each card without a picture
#: (no <img>) taller than its text (first text box's top to last one's bottom) and padding.
_TALL_TEXT_CARDS = """sel => [...document.querySelectorAll(sel)]
  .filter(card => !card.querySelector('img')).map(card => {
    const boxes = [...card.querySelectorAll('*')]
      .filter(el => [...el.childNodes].some(n => n.nodeType === 3 && n.data.trim()))
      .map(el => el.getBoundingClientRect()).filter(r => r.height > 0);
    const style = getComputedStyle(card), box = card.getBoundingClientRect();
    const frame = ['paddingTop', 'paddingBottom', 'borderTopWidth', 'borderBottomWidth']
      .reduce((sum, name) => sum + parseFloat(style[name]), 0);
    const need = Math.max(...boxes.map(r => r.bottom)) - Math.min(...boxes.map(r => r.top)) + frame;
    const title = card.querySelector('.card__title, .lead-story__title').textContent.trim();
    return [title, box.height, need];
  })"""


@pytest.mark.parametrize("theme", THEMES)
def test_cards_draw_no_giant_letters_and_text_cards_fit_their_words(
        sites: dict[str, str], browser: Browser, theme: str) -> None:
    problems: list[str] = []
    text_cards = 0
    for width in (375, 1280):
        page = open_page(browser, width)
        try:
            for name, path in {**LISTS, "article": ARTICLE}.items():
                page.goto(sites[theme] + path)
                for title, letter, size, limit in page.evaluate(_BIG_LETTERS, CARDS):
                    problems.append(f"{width} px {name}: {title!r} draws {letter!r} at "
                                    f"{size:.0f} px, its headline {limit:.0f} px")
                if width != 375:
                    continue
                for title, height, need in page.evaluate(_TALL_TEXT_CARDS, CARDS):
                    text_cards += 1
                    if height > need + 8:
                        problems.append(f"375 px {name}: the card {title!r} is {height:.0f} px "
                                        f"tall, its words and padding need {need:.0f} px")
        finally:
            page.context.close()
    assert text_cards > 0, "no card without a picture was measured"
    assert not problems, f"{theme}:\n" + "\n".join(problems)


# -- point 4: the cards of a row end evenly --------------------------------------------------

#: Per card: [top, headline, blank px] — the tallest stretch of its content box that the
#: boxes of its content (its children; a wrapper that holds blocks is looked into) leave
#: blank: the room below its content, or a hole above a line pushed to the bottom.
_BLANK = """() => [...document.querySelectorAll('.cards > .card')].map(card => {
  const leaf = el => el.matches('p, h1, h2, h3, h4, h5, h6, img, .byline, .art, .chip, .label');
  const kids = el => [...el.children].flatMap(k =>
    getComputedStyle(k).display === 'contents' ? [...k.children] : [k]);
  const boxes = el => {
    const blocks = kids(el).filter(k => !['none', 'inline'].includes(getComputedStyle(k).display));
    if (el !== card && (leaf(el) || !blocks.length)) return [el.getBoundingClientRect()];
    return blocks.flatMap(boxes);
  };
  const style = getComputedStyle(card), box = card.getBoundingClientRect();
  const top = box.top + parseFloat(style.borderTopWidth) + parseFloat(style.paddingTop);
  const bottom = box.bottom - parseFloat(style.borderBottomWidth) - parseFloat(style.paddingBottom);
  const spans = boxes(card).filter(r => r.height > 0)
    .map(r => [Math.max(r.top, top), Math.min(r.bottom, bottom)])
    .filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0]);
  let hole = 0, end = top;
  for (const [a, b] of spans) { hole = Math.max(hole, a - end); end = Math.max(end, b); }
  return [Math.round(box.top + scrollY), card.querySelector('.card__title').textContent.trim(),
          Math.max(hole, bottom - end)];
})"""


@pytest.mark.parametrize("theme", THEMES)
def test_the_cards_of_a_row_end_evenly(sites: dict[str, str], browser: Browser,
                                       theme: str) -> None:
    page = open_page(browser, 1280)
    problems: list[str] = []
    rows_seen = 0
    try:
        for name, path in LISTS.items():
            page.goto(sites[theme] + path)
            rows: dict[int, list[tuple[str, float]]] = {}
            for top, title, blank in page.evaluate(_BLANK):
                row = next((r for r in rows if abs(r - top) <= 2), top)
                rows.setdefault(row, []).append((title, blank))
            for cards in rows.values():
                rows_seen += len(cards) > 1
                fullest = min(blank for _, blank in cards)
                problems += [f"{name}: {title!r} has {blank - fullest:.0f} px more blank space "
                             "than the fullest card of its row"
                             for title, blank in cards if blank - fullest > 8]
    finally:
        page.context.close()
    assert rows_seen >= 5, "too few rows of several cards were measured"
    assert not problems, f"{theme}:\n" + "\n".join(problems)


# -- point 5: the phone header is two rows ---------------------------------------------------

#: The tops and bottoms of every line of text in the header (its name, links and Search).
_HEADER_LINES = """() => [...document.querySelectorAll(
    '.site-header .brand, .site-header nav a, .site-header .search-link')]
  .flatMap(el => { const range = document.createRange(); range.selectNodeContents(el);
    return [...range.getClientRects()].filter(r => r.width > 0 && r.height > 0)
      .map(r => [r.top, r.bottom]); })"""
#: [text, left, right] of the element the keyboard focused, null once it left the header.
_FOCUSED = """async () => { for (const _ of [1, 2]) await new Promise(requestAnimationFrame);
  const el = document.activeElement, inside = el && el.closest('.site-header');
  if (!inside || el.matches('.brand')) return inside ? [] : null;
  const r = el.getBoundingClientRect(); return [el.textContent.trim(), r.left, r.right]; }"""
_LINK_TEXTS = """() => [...document.querySelectorAll(
  '.site-header nav a, .site-header .search-link')].map(a => a.textContent.trim())"""
#: The top of the article body's first line of text (null without one).
_BODY_TOP = """() => { const body = document.querySelector('#article-body');
  const first = body && [...body.querySelectorAll('p, li')].find(el => el.textContent.trim());
  return first ? first.getBoundingClientRect().top : null; }"""


def _rows(lines: list[list[float]]) -> int:
    """How many rows lines of text form (lines whose boxes overlap vertically are one row)."""
    rows: list[list[float]] = []
    for top, bottom in sorted(lines):
        if rows and top < rows[-1][1] - 2:
            rows[-1][1] = max(rows[-1][1], bottom)
        else:
            rows.append([top, bottom])
    return len(rows)


@pytest.mark.parametrize("theme", THEMES)
def test_the_phone_header_is_two_rows_and_every_link_is_reachable(
        sites: dict[str, str], browser: Browser, theme: str) -> None:
    page = open_page(browser, 375, 667)
    problems: list[str] = []
    try:
        for name, path in {"home": "/", "article": ARTICLE}.items():
            page.goto(sites[theme] + path)
            rows = _rows(page.evaluate(_HEADER_LINES))
            if rows > 2:
                problems.append(f"{name}: the header is {rows} rows of text")
            reached = set()
            for _ in range(40):  # Tab through the header: each link is then in view
                page.keyboard.press("Tab")
                focused = page.evaluate(_FOCUSED)
                if focused is None and reached:
                    break
                if focused:
                    text, left, right = focused
                    reached.add(text)
                    if min(right, 375) - max(left, 0) < 24:  # WCAG 2.4.11: not hidden
                        problems.append(f"{name}: the link {text!r}, focused, is out of view "
                                        f"({left:.0f}–{right:.0f} px)")
            links = set(page.evaluate(_LINK_TEXTS))
            if links - reached:
                problems.append(f"{name}: Tab never reached {sorted(links - reached)}")
            if name == "article" and theme == "magazine":
                page.evaluate("scrollTo(0, 0)")
                top = page.evaluate(_BODY_TOP)
                if top is None or top > 667 - 20:
                    problems.append(f"article: body text starts at {top} px, below the "
                                    "first 375×667 screen")
    finally:
        page.context.close()
    assert not problems, f"{theme}:\n" + "\n".join(problems)


# -- point 8: no image of a list's first screen is lazy --------------------------------------

_LAZY_IN_VIEW = """() => [...document.images].filter(img => {
  const r = img.getBoundingClientRect();
  return r.width > 0 && r.bottom > 0 && r.top < innerHeight && r.left < innerWidth
    && img.loading === 'lazy'; }).map(img => [img.className, img.currentSrc || img.src])"""


@pytest.mark.parametrize("theme", THEMES)
def test_no_image_in_a_wide_lists_first_screen_is_lazy(
        sites: dict[str, str], browser: Browser, theme: str) -> None:
    page = open_page(browser, 1280, 800)
    problems: list[str] = []
    try:
        for name, path in LISTS.items():
            page.goto(sites[theme] + path)
            problems += [f"{name}: {cls} {src}" for cls, src in page.evaluate(_LAZY_IN_VIEW)]
    finally:
        page.context.close()
    assert not problems, f"{theme}: lazy images in the first 1280×800 screen:\n" + \
        "\n".join(problems)


# -- point 11: card pictures fetched at their size; names kept whole -------------------------

#: [file, its width (from the srcset's `w`), shown width] of each card picture, once loaded.
_CHOSEN = """async () => {
  const imgs = [...document.querySelectorAll('.card img, .lead-story img')]
    .filter(img => !img.closest('.byline'));
  for (const img of imgs) {
    img.scrollIntoView();
    if (!img.complete || !img.currentSrc) await new Promise(done => {
      img.addEventListener('load', done, {once: true});
      img.addEventListener('error', done, {once: true}); });
  }
  return imgs.map(img => { const src = img.currentSrc;
    const entry = (img.closest('picture') || img).outerHTML.match(
      new RegExp(src.split('/').pop().replace(/[.]/g, '[.]') + ' (\\\\d+)w'));
    return [src, entry ? +entry[1] : null, img.getBoundingClientRect().width]; }); }"""


@pytest.mark.parametrize("theme", THEMES)
def test_card_pictures_are_fetched_no_wider_than_twice_their_size(
        sites: dict[str, str], browser: Browser, theme: str) -> None:
    page = open_page(browser, 1280)
    try:
        page.goto(sites[theme] + "/")
        chosen: list[Any] = page.evaluate(_CHOSEN)
    finally:
        page.context.close()
    assert chosen, "no card picture on the home page"
    wide = [f"{src} is {width} px wide, shown at {shown:.0f} px"
            for src, width, shown in chosen if width is None or width > 2 * shown]
    assert not wide, f"{theme}:\n" + "\n".join(wide)


#: [name, lines] of each card's author name: the text after the last "·" of its meta line
#: (default) or its byline's name (magazine), as a range over that text.
_NAME_LINES = """() => [...document.querySelectorAll('.card .meta, .card .byline__name')]
  .map(el => {
    const nodes = []; const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    while (walk.nextNode()) nodes.push(walk.currentNode);
    const node = nodes.filter(n => n.data.trim() && n.data.trim() !== '·').pop();
    if (!node) return null;
    const text = node.data.replace(/\\s+$/, ''), start = text.length - text.trimStart().length;
    const range = document.createRange();
    range.setStart(node, start); range.setEnd(node, text.length);
    const tops = new Set([...range.getClientRects()].filter(r => r.width > 0)
      .map(r => Math.round(r.top)));
    return [text.trim(), tops.size]; }).filter(Boolean)"""


@pytest.mark.parametrize("theme", THEMES)
def test_a_bylines_author_name_stays_on_one_line(sites: dict[str, str], browser: Browser,
                                                 theme: str) -> None:
    page = open_page(browser, 375, 667)
    problems: list[str] = []
    names = 0
    try:
        for name, path in LISTS.items():
            page.goto(sites[theme] + path)
            for author, lines in page.evaluate(_NAME_LINES):
                names += 1
                if lines != 1:
                    problems.append(f"{name}: {author!r} spans {lines} lines")
    finally:
        page.context.close()
    assert names > 0, "no author name was measured"
    assert not problems, f"{theme}:\n" + "\n".join(problems)


#: The stylesheets the head links (each one holds the first paint back).
_BLOCKING = """() => [...document.querySelectorAll('head link[rel~="stylesheet"]')]
  .filter(l => !l.media || matchMedia(l.media).matches).map(l => l.href)"""


@pytest.mark.parametrize("theme", THEMES)
def test_a_page_waits_for_one_small_stylesheet(sites: dict[str, str], browser: Browser,
                                               theme: str) -> None:
    page = open_page(browser, 375, 667)
    problems: list[str] = []
    try:
        for name, path in {**LISTS, "article": ARTICLE}.items():
            page.goto(sites[theme] + path)
            links = page.evaluate(_BLOCKING)
            sizes = [len(gzip.compress(page.request.get(href).body())) for href in links]
            if len(links) != 1 or sum(sizes) > 14_000:
                problems.append(f"{name}: {len(links)} stylesheets, {sizes} bytes gzipped")
    finally:
        page.context.close()
    assert not problems, f"{theme}:\n" + "\n".join(problems)
