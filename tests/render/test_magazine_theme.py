"""The `magazine` built-in theme: every page kind renders, cards carry topic colours, the
lead story and text cards (no picture), readable label colours, small self-contained CSS."""

from __future__ import annotations

import dataclasses
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markupsafe import escape
from render_factory import (
    XSS,
    article,
    hostile_workspace,
    make_config,
    make_workspace,
    page_kinds,
)
from render_safety import problems

from sitegen.config import Config, demo_config
from sitegen.model import Site, build_site
from sitegen.render.filters import contrast_ratio, contrast_text
from sitegen.render.pages import Renderer
from sitegen.render.themes import ThemeSet, builtin_themes_root
from sitegen.workspace import Workspace
from tests.content import synced

THEME = builtin_themes_root() / "magazine"


class Cards(HTMLParser):
    """Collects each `<article class="card">`: its style, label style, link, picture, byline."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.cards: list[dict[str, str]] = []
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        classes = a.get("class", "").split()
        if tag == "article" and "card" in classes:
            self.cards.append({"style": a.get("style", "")})
            if "card--text" in classes:
                self.cards[-1]["text"] = "yes"
            self._depth = 1
            return
        if not self._depth:
            return
        if tag == "article":
            self._depth += 1
        card = self.cards[-1]
        if "label" in classes:
            card["label"] = a.get("style", "")
        if "card__link" in classes:
            card["href"] = a["href"]
        if "art__image" in classes:
            card["image"] = a["src"]
            card["loading"] = a.get("loading", "eager")
            card["priority"] = a.get("fetchpriority", "")
        if "byline__image" in classes:
            card["avatar"] = a["src"]

    def handle_endtag(self, tag: str) -> None:
        if tag == "article" and self._depth:
            self._depth -= 1


def cards(html: str) -> list[dict[str, str]]:
    parser = Cards()
    parser.feed(html)
    return parser.cards


@pytest.fixture(scope="module")
def demo_workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    root = tmp_path_factory.mktemp("demo")
    return synced(demo_config(None, root))


def magazine(root: Path, **site: object) -> Config:
    return make_config(root, theme="magazine", **site)


def render_all(config: Config, workspace: Workspace) -> tuple[Site, Renderer, dict[str, str]]:
    site = build_site(config, workspace)
    renderer = Renderer(config, site, ThemeSet(config))
    return site, renderer, {p.path: renderer.render(p).decode() for p in site.pages}


def test_magazine_is_a_builtin_theme_that_extends_default(tmp_path: Path) -> None:
    themes = ThemeSet(magazine(tmp_path))
    assert themes.theme_dir == THEME
    assert themes.template_dirs()[-1] == builtin_themes_root() / "default" / "templates"
    # It inherits what it does not change: no copy of default's shell or partials.
    own = {p.relative_to(THEME / "templates").as_posix() for p in THEME.rglob("*.html")}
    assert "base.html" not in own and "partials/tags.html" not in own
    assert {"home.html", "article.html", "partials/card.html"} <= own


def test_every_demo_page_kind_renders(tmp_path: Path, demo_workspace: Workspace) -> None:
    config = magazine(tmp_path, per_page=5)
    site, _, pages = render_all(config, demo_workspace)
    assert {p.kind for p in site.pages} == page_kinds()
    stylesheet = '<link rel="stylesheet" href="/static/site.css">'  # the one stylesheet
    for page in site.pages:
        html = pages[page.path]
        assert html.startswith("<!doctype html>"), page.path
        assert html.count("<h1") == 1, page.path
        assert stylesheet in html and 'class="skip-link" href="#main"' in html
        canonical = f'<link rel="canonical" href="https://site.example.test{page.url}">'
        assert (canonical in html) == (page.kind != "404"), page.path
        assert ("rel=\"canonical\"" in html) == (page.kind != "404"), page.path
        assert '<main id="main"' in html and "<footer" in html
        assert problems(html, allow_scripts=True) == [], page.path
    listing = [p for p in site.pages if p.kind in {"agent", "cluster", "author", "tag"}]
    assert listing and all(cards(pages[p.path]) for p in listing)


def test_home_has_a_lead_story_then_cards(tmp_path: Path, demo_workspace: Workspace) -> None:
    config = magazine(tmp_path)
    site, renderer, _ = render_all(config, demo_workspace)
    home = next(p for p in site.pages if p.kind == "home" and p.number == 1)
    with_image = next(a for a in site.articles if a.image)
    others = [a for a in home.articles if a is not with_image]
    for lead in (home.articles[0], with_image):
        page = dataclasses.replace(home, articles=[lead, *others])
        html = renderer.render(page).decode()
        story = html[html.index('<article class="lead-story'):html.index("</article>")]
        assert f'href="{lead.url}"' in story and str(escape(lead.title)) in story
        if lead.image:
            assert f'src="{lead.image}"' in story and 'fetchpriority="high"' in story
        else:  # a text lead: no picture, no stand-in for one (no letter drawn)
            assert '<article class="lead-story lead-story--text"' in html
            assert "<img" not in story.split("byline")[0] and "data-mark" not in story
        grid = cards(html)
        assert [c["href"] for c in grid] == [a.url for a in page.articles[1:]]
    # Continuation pages show the grid only.
    second = next(p for p in site.pages if p.kind == "home" and p.number == 2)
    html = renderer.render(second).decode()
    assert "lead-story" not in html
    assert [c["href"] for c in cards(html)] == [a.url for a in second.articles]


def test_a_list_s_first_picture_comes_first_its_first_screen_at_once_the_rest_lazily(
        tmp_path: Path, demo_workspace: Workspace) -> None:
    """The first card's picture has `fetchpriority="high"`; the rest of a wide screen's first
    two rows (six cards) load at once; later ones lazily."""
    config = magazine(tmp_path)
    site, renderer, _ = render_all(config, demo_workspace)
    topic = next(p for p in site.pages if p.kind == "cluster")
    pictured = [a for a in site.articles if a.image][:2]
    assert len(pictured) == 2
    expected = ["high"] + ["eager"] * 5 + ["lazy"]
    for first, second in (pictured, pictured[::-1]):  # the same card, first and not first
        page = dataclasses.replace(topic, articles=[first] + [second] * 6)
        html = renderer.render(page).decode()
        grid = cards(html)
        assert [c["priority"] or c["loading"] for c in grid] == expected, grid
        assert html.count('fetchpriority="high"') == 1
    later = next(p for p in site.pages if p.kind == "home" and p.number == 2)
    html = renderer.render(dataclasses.replace(later, articles=[pictured[0]] + [pictured[1]] * 6))
    assert [c["priority"] or c["loading"] for c in cards(html.decode())] == expected


def test_cards_use_their_topic_colour_with_readable_labels(
    tmp_path: Path, demo_workspace: Workspace
) -> None:
    config = magazine(tmp_path, per_page=50)
    site, renderer, _ = render_all(config, demo_workspace)
    home = next(p for p in site.pages if p.kind == "home")
    by_url = {a.url: a for a in site.articles}
    grid = cards(renderer.render(home).decode())
    assert len(grid) == len(site.articles) - 1
    colours = set()
    for card in grid:
        art = by_url[card["href"]]
        if art.cluster is None:
            assert "label" not in card and "--accent" not in card["style"]
            continue
        colour = art.cluster.colour
        colours.add(colour)
        assert card["style"] == f"--accent: {colour}"
        assert card["label"] == f"--field: {colour}; --on-field: {contrast_text(colour)}"
        assert contrast_ratio(colour, contrast_text(colour)) >= 4.5
        if art.image:
            assert card["image"] == art.image and "text" not in card
        else:
            assert card["text"] and "image" not in card
        if art.author is not None and art.author.image:
            assert card["avatar"] == art.author.image
    assert len(colours) == len(site.clusters) >= 2


def test_fallback_without_topic_and_hostile_content(tmp_path: Path) -> None:
    config = magazine(tmp_path)
    plain = make_workspace([article(1, title="Plain", tags=["Gardening"])])
    site, _, pages = render_all(config, plain)
    grid_page = next(p for p in site.pages if p.kind == "tag")
    (card,) = cards(pages[grid_page.path])
    assert card["text"] and "--accent" not in card["style"] and "image" not in card
    assert "data-mark" not in pages[grid_page.path]
    _, _, pages = render_all(config, hostile_workspace())
    for path, html in pages.items():
        assert problems(html, allow_scripts=True) == [], path
        assert "<script>alert" not in html and XSS not in html


def test_a_listing_records_that_its_cards_show_the_byline_image(tmp_path: Path) -> None:
    """Magazine cards show the author's picture, so a new picture must re-render listings."""
    config = magazine(tmp_path)
    ws = make_workspace([article(1, authorIdentityId="b" * 24)], authors=[
        {"id": "b" * 24, "name": "Ann", "imageUrl": "https://img.example.test/a.png"}])
    site = build_site(config, ws)
    renderer = Renderer(config, site, ThemeSet(config))
    listing = next(p for p in site.pages if p.kind == "tag")
    _, reads = renderer.render_recorded(listing)
    author = site.articles[0].author
    assert author is not None
    read = f"author:{author.id}"
    assert read in reads
    before = renderer.fingerprints.of(read)
    author.image = "https://img.example.test/b.png"
    assert Renderer(config, site, ThemeSet(config)).fingerprints.of(read) != before


def test_css_is_small_and_self_contained() -> None:
    css = (THEME / "static" / "style.css").read_text(encoding="utf-8")
    assert len(css.encode()) < 20 * 1024
    assert "@import" not in css and "@font-face" not in css
    assert re.findall(r"url\(", css) == []
    assert "prefers-color-scheme: dark" in css and ":focus-visible" in css
    for path in THEME.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text, re.I), path


@given(st.from_regex(r"\A#[0-9a-fA-F]{6}\Z") | st.from_regex(r"\A#[0-9a-fA-F]{3}\Z"))
def test_contrast_text_always_reaches_aa(colour: str) -> None:
    text = contrast_text(colour)
    assert text in {"#000000", "#ffffff"}
    assert contrast_ratio(colour, text) >= 4.5
    if len(colour) == 4:
        assert contrast_text("#" + "".join(c * 2 for c in colour[1:])) == text


def test_magazine_pages_are_valid_html(tmp_path: Path, demo_workspace: Workspace) -> None:
    from tests.vnu import vnu_errors

    config = magazine(tmp_path / "site", per_page=4)
    site, _, pages = render_all(config, demo_workspace)
    seen: set[str] = set()
    written = []
    for page in site.pages:
        if page.kind in seen and page.kind != "article":
            continue
        seen.add(page.kind)
        target = tmp_path / "out" / page.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(pages[page.path], encoding="utf-8")
        written.append(target)
    assert vnu_errors(sorted(written)) == []


def test_site_overrides_extend_magazine_templates(tmp_path: Path) -> None:
    """A site's `templates/` override that extends `theme/…` fills magazine's blocks too."""
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "article.html").write_text(
        '{% extends "theme/article.html" %}'
        '{% block after_body %}<p class="disclosure">Written by an agent.</p>{% endblock %}')
    (tmp_path / "templates" / "home.html").write_text(
        '{% extends "theme/home.html" %}{% block intro %}<h1>Front page</h1>{% endblock %}')
    config = magazine(tmp_path)
    site, _, pages = render_all(config, make_workspace([article(1), article(2)]))
    art = next(p for p in site.pages if p.kind == "article")
    html = pages[art.path]
    assert html.index('id="article-body"') < html.index("Written by an agent.")
    assert html.index("Written by an agent.") < html.index('class="article__footer"')
    home = pages["index.html"]
    assert "<h1>Front page</h1>" in home and "lead-story" in home


def test_a_site_card_macro_without_eager_still_draws_every_list(
        tmp_path: Path, demo_workspace: Workspace) -> None:
    """A `partials/card.html` override written before `eager` existed keeps working."""
    own = tmp_path / "templates" / "partials"
    own.mkdir(parents=True)
    (own / "card.html").write_text('{% macro card(article, heading="h2") %}<p class="mine">'
                                   "{{ article.title }}</p>{% endmacro %}\n")
    site, _, pages = render_all(magazine(tmp_path), demo_workspace)
    topic = next(p for p in site.pages if p.kind == "cluster")
    assert pages[topic.path].count('<p class="mine">') == len(topic.articles)
