"""Languages: interface strings from the theme catalogue, Babel dates and numbers, `lang`."""

from __future__ import annotations

import logging
import re
from datetime import date
from pathlib import Path

import pytest
from render_factory import article, demo_workspace, make_config, make_workspace

from sitegen.model import build_site
from sitegen.render.i18n import SHIPPED, Catalogue, og_locale
from sitegen.render.pages import Renderer
from sitegen.render.themes import ThemeSet, builtin_themes_root


def renderer_for(tmp_path: Path, theme: str = "default") -> Renderer:
    config = make_config(tmp_path, theme=theme)
    return Renderer(config, build_site(config, demo_workspace()), ThemeSet(config))


def html_of(renderer: Renderer, slug: str) -> str:
    page = next(p for p in renderer.site.pages if p.article and p.article.slug == slug)
    return renderer.render(page).decode()


@pytest.mark.parametrize("theme", ["default", "magazine"])
def test_french_and_german_articles_are_french_and_german_pages(
        tmp_path: Path, theme: str) -> None:
    renderer = renderer_for(tmp_path, theme)
    french = html_of(renderer, "le-levain-sans-dogme")
    assert '<html lang="fr">' in french
    head = french[:french.index('id="article-body"')]  # related cards speak their own
    assert "min de lecture" in head and "min read" not in head
    assert 'content="fr_FR"' in french and "Aller au contenu" in french
    assert re.search(r">\d{1,2} (janvier|février|mars|avril|mai|juin|juillet|août|septembre|"
                     r"octobre|novembre|décembre) 20\d\d<", french)
    german = html_of(renderer, "sauerkraut-mit-waage")
    assert '<html lang="de">' in german and "Min. Lesezeit" in german
    assert "Zum Inhalt springen" in german and "Skip to content" not in german
    assert re.search(r">\d{1,2}\. [A-ZÄ][a-zä]+ 20\d\d<", german)


def test_cards_carry_their_language_on_list_pages(tmp_path: Path) -> None:
    renderer = renderer_for(tmp_path)
    home = next(p for p in renderer.site.pages if p.kind == "home" and p.number == 1)
    html = renderer.render(home).decode()
    assert '<html lang="en">' in html
    langs = re.findall(r'<article class="card" lang="([a-z-]+)"', html)
    assert "en" in langs and {"fr", "de"} & set(langs), langs
    card = html[html.index('<article class="card" lang="de"'):]
    card = card[:card.index("</article>")]
    assert "Min. Lesezeit" in card  # the card speaks its article's language throughout


def test_every_shipped_language_translates_every_message() -> None:
    root = builtin_themes_root()
    for theme in ("default", "magazine"):
        tables = [root / theme / "messages.toml", root / "default" / "messages.toml"]
        catalogue = Catalogue(tables)
        assert set(catalogue.messages) == set(SHIPPED) - {"en"}
        assert catalogue.missing(SHIPPED) == {}, theme


def test_fallback_is_english_and_warned_only_under_strict(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    partial = tmp_path / "messages.toml"
    partial.write_text('[fr]\n"Contents" = "Sommaire"\n[de]\n"Contents" = "Inhalt"\n'
                       '"Older" = "Älter"\n', encoding="utf-8")
    catalogue = Catalogue([partial])
    french = catalogue.translator("fr-CA")
    assert french("Contents") == "Sommaire" and french("Older") == "Older"
    assert french("{n} min read", n=2) == "2 min read"
    assert catalogue.translator("ja")("Contents") == "Contents"
    assert catalogue.missing(["en", "fr", "de", "ja"]) == {"fr": ["Older"],
                                                           "ja": ["Contents", "Older"]}
    renderer = renderer_for(tmp_path / "site")
    renderer.catalogue = catalogue
    with caplog.at_level(logging.WARNING):
        assert renderer.warn_missing_messages() == 1  # the demo is en, fr, de
    assert "'fr'" in caplog.text and "Older" in caplog.text


def test_dates_numbers_and_og_locale_come_from_cldr() -> None:
    catalogue = Catalogue([])
    assert catalogue.translator("fr").date(date(2026, 6, 3)) == "3 juin 2026"
    assert catalogue.translator("de").date(date(2026, 6, 3)) == "3. Juni 2026"
    assert catalogue.translator("en").date(date(2026, 6, 3)) == "June 3, 2026"
    assert catalogue.translator("de").number(1234.5) == "1.234,5"
    assert catalogue.translator("not a language").date(None) == ""
    assert [og_locale(x) for x in ("en", "fr", "pt-BR", "en-GB", "nl", "zz")] == [
        "en_US", "fr_FR", "pt_BR", "en_GB", "nl_NL", "en_US"]


def test_a_catalogue_change_changes_every_page_context(tmp_path: Path) -> None:
    renderer = renderer_for(tmp_path)
    page = renderer.site.pages[0]
    before = renderer.context_fingerprint(page)
    local = tmp_path / "themes" / "default"
    (local / "templates").mkdir(parents=True)
    (local / "messages.toml").write_text('[fr]\n"Contents" = "Table"\n', encoding="utf-8")
    changed = renderer_for(tmp_path)
    assert changed.catalogue.translator("fr")("Contents") == "Table"
    assert changed.context_fingerprint(changed.site.pages[0]) != before


def test_counts_follow_each_language_plural_rules() -> None:
    catalogue = Catalogue([builtin_themes_root() / "default" / "messages.toml"])
    forms = ("{n} article", "{n} articles")
    assert catalogue.translator("en").count(0, *forms) == "0 articles"
    assert catalogue.translator("fr").count(0, *forms) == "0 article"  # CLDR: 0 is "one"
    assert catalogue.translator("de").count(1234, *forms) == "1.234 Artikel"
    assert catalogue.translator("it").count(2, *forms) == "2 articoli"


#: English interface text that once stood untranslated in the built-in templates.
_ENGLISH_FURNITURE = re.compile(
    r"Social posts|Read the article|Promotes|· page \d|\(page \d|\d (topics?|tags?|authors?|"
    r"agents?)<|> articles?</span>|Page not found|>(Topics|Tags|Authors|Agents)<|Articles: |All "
    r"(topics|tags|authors|agents) of|More stories|>Stories<")


@pytest.mark.parametrize("theme", ["default", "magazine"])
def test_a_german_site_speaks_german_on_every_page_kind(tmp_path: Path, theme: str) -> None:
    """Pagination headings, the social pages and the index counts come from the catalogue."""
    config = make_config(tmp_path, theme=theme, language="de", per_page=2)
    renderer = Renderer(config, build_site(config, demo_workspace()), ThemeSet(config))
    english: dict[str, list[str]] = {}
    seen: set[str] = set()
    for page in renderer.site.pages:
        html = renderer.render(page).decode()
        if '<html lang="de">' not in html:
            continue  # an English or French article speaks its own language
        seen.add(page.kind + ("-2" if page.number > 1 else ""))
        found = [m.group(0) for m in _ENGLISH_FURNITURE.finditer(html)]
        if found:
            english[page.url] = found
    assert {"social", "social-2", "social_post", "terms", "cluster-2", "author-2",
            "agent-2"} <= seen, seen
    assert english == {}


def test_a_german_site_s_social_post_and_index_pages_read_german(tmp_path: Path) -> None:
    config = make_config(tmp_path, language="de", per_page=2)
    workspace = demo_workspace()
    posts = list(workspace.social_posts or [])
    promoted = next(a for a in workspace.articles if a.status == "published" and a.slug)
    posts[0] = posts[0].model_copy(update={"articleId": promoted.id})
    # (a post's page takes its article's language: a German article, as on a German site)
    articles = [a.model_copy(update={"language": "de"}) if a.id == promoted.id else a
                for a in workspace.articles]
    workspace = workspace.model_copy(update={"social_posts": posts, "articles": articles})
    renderer = Renderer(config, build_site(config, workspace), ThemeSet(config))
    html = {page.url: renderer.render(page).decode() for page in renderer.site.pages}
    assert "<h1>Social-Media-Beiträge" in html["/social/"]
    assert "· Seite 2</span></h1>" in html["/topics/cities-on-foot/page/2/"]
    post = html[f"/social/{posts[0].slug}/"]
    assert "Zum Artikel:" in post and ">Social-Media-Beiträge</a>" in post
    assert re.search(r">\d{1,2}\. [A-ZÄ][a-zä]+ 20\d\d<", post)
    assert '<p class="meta">4 Themen</p>' in html["/topics/"]
    assert '<span class="visually-hidden">1 Artikel</span>' in html["/tags/"]
    assert "<title>Themen – Test Site</title>" in html["/topics/"]
    assert "<title>Cities on Foot (Seite 2) – Test Site</title>" in html[
        "/topics/cities-on-foot/page/2/"]
    assert "<title>Seite nicht gefunden – Test Site</title>" in html["/404.html"]
    assert 'content="Alle Themen von Test Site"' in html["/topics/"]
    assert re.search(r'content="1 Artikel mit dem Schlagwort bash auf Test Site: [^"]+"',
                     html["/tags/bash/"])


@pytest.mark.parametrize("theme", ["default", "magazine"])
def test_titles_of_other_languages_carry_their_lang_outside_cards(
        tmp_path: Path, theme: str) -> None:
    """The previous/next links and the magazine's lead story (WCAG 3.1.2, language of parts)."""
    config = make_config(tmp_path, theme=theme)
    workspace = make_workspace([article(1, title="Older one"), article(2, title="Middle one"),
                                article(3, title="Grüße aus Wien", language="de")])
    renderer = Renderer(config, build_site(config, workspace), ThemeSet(config))
    html = {page.url: renderer.render(page).decode() for page in renderer.site.pages}
    middle = html["/article-2/"]
    assert '<span lang="de">Grüße aus Wien</span></a>' in middle
    assert '<span lang="en">Older one</span></a>' in middle
    if theme == "magazine":
        lead = html["/"][html["/"].index('<article class="lead-story'):]
        assert re.search(r'<h2 class="lead-story__title" id="lead-title" lang="de">', lead)
