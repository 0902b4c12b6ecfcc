"""The AI disclosure (`[site] ai_disclosure`): beside every article's byline and in every
feed entry, in both built-in themes, naming the agent and the model, escaped; gone when off."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest
from markupsafe import escape
from render_factory import XSS, article, demo_workspace, make_config, make_workspace
from render_safety import problems

from sitegen.model import build_site
from sitegen.render.pages import Renderer
from sitegen.render.themes import ThemeSet
from sitegen.workspace import Workspace

THEMES = ("default", "magazine")
DISCLOSURE = re.compile(r'<p class="disclosure">(.*?)</p>', re.S)


def _render(tmp_path: Path, theme: str, workspace: Workspace,
            **site: object) -> tuple[Renderer, dict[str, str], list[str]]:
    config = make_config(tmp_path, theme=theme, **site)
    built = build_site(config, workspace)
    renderer = Renderer(config, built, ThemeSet(config))
    pages = {page.path: renderer.render(page).decode() for page in built.pages
             if page.kind == "article"}
    feeds = [renderer.render(page).decode() for page in built.files if page.kind == "feed"]
    return renderer, pages, feeds


@pytest.mark.parametrize("theme", THEMES)
def test_every_article_page_and_feed_entry_names_its_agent_and_model(
        tmp_path: Path, theme: str) -> None:
    renderer, pages, feeds = _render(tmp_path, theme, demo_workspace())
    site = renderer.site
    assert site.ai_disclosure and pages
    for item in site.articles:
        found = DISCLOSURE.findall(pages[item.path])
        assert len(found) == 1, item.path
        assert item.agent is not None and item.model
        assert f'<a href="{item.agent.url}">{escape(item.agent.name)}</a>' in found[0]
        assert str(escape(item.model)) in found[0]
        # in the article's language (the theme's catalogue), English as the fallback
        assert found[0].startswith(str(escape(
            renderer.translator(item.language)("Written by the AI agent"))))
    english = {a.id for a in site.articles if a.language.startswith("en")}
    assert english and len(english) < len(site.articles)  # the demo has others too
    assert any(DISCLOSURE.findall(pages[a.path])[0].startswith("Geschrieben vom KI-Agenten")
               for a in site.articles if a.language.startswith("de"))
    entries = [entry for feed in feeds for entry in feed.split("<entry")[1:]]
    assert entries
    for entry in entries:  # in the entry's HTML content, escaped
        assert '<p class="disclosure">' in unescape(entry) and "<p class" not in entry


@pytest.mark.parametrize("theme", THEMES)
def test_model_falls_back_to_the_agent_and_a_missing_agent_is_still_disclosed(
        tmp_path: Path, theme: str) -> None:
    workspace = make_workspace(
        [article(1, agentId="a" * 24), article(2, model="own-model-9")],
        agents=[{"id": "a" * 24, "name": "Scribe", "model": "agent-model-1"}])
    renderer, pages, _ = _render(tmp_path, theme, workspace)
    first, second = (pages[a.path] for a in sorted(renderer.site.articles, key=lambda a: a.id))
    assert "agent-model-1" in DISCLOSURE.findall(first)[0]
    assert DISCLOSURE.findall(second)[0].startswith("Written by an AI agent, using the model")
    assert "own-model-9" in DISCLOSURE.findall(second)[0]


@pytest.mark.parametrize("theme", THEMES)
def test_off_removes_it_from_pages_and_feeds(tmp_path: Path, theme: str) -> None:
    _, pages, feeds = _render(tmp_path, theme, demo_workspace(), ai_disclosure=False)
    assert pages
    for html in pages.values():
        assert 'class="disclosure"' not in html
        assert "AI agent" not in html
    assert not any("disclosure" in feed for feed in feeds)


@pytest.mark.parametrize("theme", THEMES)
def test_hostile_agent_names_and_models_are_escaped(tmp_path: Path, theme: str) -> None:
    workspace = make_workspace(
        [article(1, agentId="a" * 24, model=XSS), article(2, agentId="a" * 24)],
        agents=[{"id": "a" * 24, "name": XSS, "model": XSS}])
    _, pages, feeds = _render(tmp_path, theme, workspace)
    for html in pages.values():
        found = DISCLOSURE.findall(html)
        assert len(found) == 1
        assert str(escape(XSS)) in found[0]
        assert problems(html, allow_scripts=True) == []
    for feed in feeds:
        assert "<script" not in feed
