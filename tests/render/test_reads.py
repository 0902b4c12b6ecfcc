"""Reads are recorded per entity: however a template reaches into an entity, one read of it."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from render_factory import article, make_config, make_workspace

from sitegen.model import build_site, views
from sitegen.render.pages import Renderer
from sitegen.render.reads import RecordingEnvironment
from sitegen.render.themes import ThemeSet


@dataclass(eq=False)
class Person:
    name: str


@dataclass(eq=False)
class Post:
    title: str
    author: Person = field(repr=False)


def recorded(source: str, **values: object) -> set[str]:
    """The reads *source* makes rendered with *values* (a post is `post:1`, its author
    `person:1`)."""
    env = RecordingEnvironment()
    env.observe_filters()
    keys = {}
    for value in values.values():
        if isinstance(value, Post):
            keys[id(value)], keys[id(value.author)] = "post:1", "person:1"
    with env.recording(keys) as recorder:
        env.from_string(source).render(**values)
    return recorder.reads


@pytest.mark.parametrize("source", [
    "{{ post.title }}", "{{ post['title'] }}", "{{ post.title }}{{ post['title'] }}",
    "{{ post }}", "{{ post|string }}", "{{ post|attr('title') }}", "{{ [post]|join }}",
    "{{ '{0.title}'.format(post) }}", "{{ '{p}'.format_map({'p': post}) }}",
    "{% if post is lower %}{% endif %}", "{% for p in [post] %}{{ p.title }}{% endfor %}",
])
def test_an_attribute_read_and_a_whole_use_record_the_same_one_read(source: str) -> None:
    """`post.title`, `post["title"]`, a filter, a test or a format that sees the post
    whole: each is the one read `post:1` (its author is not shown, so not read)."""
    assert recorded(source, post=Post("Hello", Person("Ann"))) == {"post:1"}


def test_an_entity_passed_along_unseen_is_not_read() -> None:
    """Reaching an entity without looking inside it reads nothing of it."""
    post = Post("Hello", Person("Ann"))
    assert recorded("{% set p = post %}{{ [post]|length }}{% if p is sameas post %}"
                    "{% endif %}", post=post) == set()
    assert recorded("{{ post.author.name }}", post=post) == {"post:1", "person:1"}


def test_a_format_field_reads_each_entity_it_walks_through() -> None:
    """`{p.author.name}` in a format looks at the post and at its author."""
    post = Post("Hello", Person("Ann"))
    assert recorded("{{ '{p.author.name}'.format(p=post) }}", post=post) == {
        "post:1", "person:1"}
    assert recorded("{{ '{0.author}'.format(post) }}", post=post) == {"post:1", "person:1"}
    assert recorded("{{ '{0.title:>{1}}'.format(post, 9) }}", post=post) == {"post:1"}


def test_a_message_of_t_reads_what_its_fields_show(tmp_path: Path) -> None:
    """`t()` formats its message with its values: a field of an entity is a read of it."""
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "search.html").write_text(
        "{{ t('Oldest: {a.title} by {a.author.name}', a=site.articles[-1]) }}")
    config = make_config(tmp_path)
    site = build_site(config, make_workspace(
        [article(n, authorIdentityId="b" * 24) for n in (1, 2)],
        authors=[{"id": "b" * 24, "name": "Ann"}]))
    renderer = Renderer(config, site, ThemeSet(config))
    page = next(p for p in site.pages if p.template == "search.html")
    data, reads = renderer.render_recorded(page)
    oldest = site.articles[-1]
    assert oldest.author is not None
    assert f"Oldest: {oldest.title} by Ann".encode() in data
    assert {f"article:{oldest.id}", f"author:{oldest.author.id}"} <= reads
    assert f"article:{site.articles[0].id}" not in reads


def test_the_sites_lists_are_reads_of_their_own(tmp_path: Path) -> None:
    """Every page reads the site (its title): an article added changes the site's lists,
    read apart (`site.articles`), and not the read of the site's other fields."""
    config = make_config(tmp_path)

    def renderer(count: int) -> Renderer:
        site = build_site(config, make_workspace([article(n) for n in range(1, count + 1)]))
        return Renderer(config, site, ThemeSet(config))

    one, two = renderer(1), renderer(2)
    page = next(p for p in one.site.pages if p.kind == "404")
    reads = one.render_recorded(page)[1]
    assert "site" in reads and "site.articles" not in reads and "site.pages" not in reads
    assert one.fingerprints.of("site") == two.fingerprints.of("site")
    assert one.fingerprints.of("site.articles") != two.fingerprints.of("site.articles")
    assert recorded_site(one, "{{ site.articles|length }}") == {"site.articles"}
    assert recorded_site(one, "{{ site['tags']|length }}{{ site.title }}") == {
        "site.tags", "site"}
    assert "site.pages" in recorded_site(one, "{{ site }}")


def recorded_site(renderer: Renderer, source: str) -> set[str]:
    """The reads of *source* rendered with the renderer's site."""
    env = renderer.env
    with env.recording(renderer.registry.keys) as recorder:
        env.from_string(source).render(site=renderer.site)
    return recorder.reads


def test_the_models_methods_take_no_entity() -> None:
    """Entity methods are reached by an attribute read (a read of their entity), and what
    they are given is not looked at: so they must take plain values only."""
    plain = {"str", "int", "float", "bool", "None"}
    for kind in (views.Site, views.ArticleView, views.Page, views.Section, views.OwnPage,
                 views.SocialPostView, views.SectionIndex):
        for name, method in inspect.getmembers(kind, inspect.isfunction):
            if name.startswith("_"):
                continue
            for parameter in list(inspect.signature(method).parameters.values())[1:]:
                assert set(str(parameter.annotation).replace(" ", "").split("|")) <= plain, (
                    f"{kind.__name__}.{name}({parameter.name}) may take an entity: note its "
                    "read (sitegen/render/reads.py)")
