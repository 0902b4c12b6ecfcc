"""Related articles: the indexed ranking equals a brute-force ranking on any small site."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.model.related import MAX_RELATED, MAX_RELATED_TAGS, link_related
from sitegen.model.views import ArticleView

ARTICLES = st.lists(
    st.tuples(st.lists(st.sampled_from("abcdefghij"), max_size=MAX_RELATED_TAGS + 3,
                       unique=True),
              st.one_of(st.none(), st.sampled_from(["c1", "c2", "c3"]))),
    max_size=30,
)


def _articles(shapes: list[tuple[list[str], str | None]]) -> list[Any]:
    return [SimpleNamespace(
        id=f"a{n}", tags=[SimpleNamespace(slug=slug) for slug in tags],
        cluster=SimpleNamespace(id=cluster) if cluster else None, related=[])
        for n, (tags, cluster) in enumerate(shapes)]


def _expected(articles: list[Any], index: int) -> list[str]:
    """Same cluster first, then most shared tags (of each one's first `MAX_RELATED_TAGS`),
    then newest (lowest position)."""
    me = articles[index]
    mine = {t.slug for t in me.tags[:MAX_RELATED_TAGS]}
    ranked = []
    for other, article in enumerate(articles):
        if other == index:
            continue
        same = me.cluster is not None and article.cluster is not None \
            and article.cluster.id == me.cluster.id
        shared = len(mine & {t.slug for t in article.tags[:MAX_RELATED_TAGS]})
        if same or shared:
            ranked.append(((-int(same), -shared, other), article.id))
    return [article_id for _, article_id in sorted(ranked)[:MAX_RELATED]]


@settings(max_examples=300, deadline=None)
@given(ARTICLES)
def test_related_matches_the_brute_force_ranking(
        shapes: list[tuple[list[str], str | None]]) -> None:
    articles = _articles(shapes)
    link_related(cast(list[ArticleView], articles))
    for index, article in enumerate(articles):
        assert [r.id for r in article.related] == _expected(articles, index)


def test_only_an_articles_first_tags_count_for_related() -> None:
    """An article's leading tags are its topic: a tag after its sixth relates nothing, so
    the ranking stays linear however many tags an article has."""
    many = [f"t{n}" for n in range(MAX_RELATED_TAGS + 4)]
    articles = _articles([
        (["x"], None),                                   # a0: newest, shares nothing
        (many[MAX_RELATED_TAGS:], None),                 # a1: only the late tags
        ([many[0]], None),                               # a2: one leading tag
        (many, None),                                    # a3: every tag
        (list(reversed(many)), None),                    # a4: the late ones lead here
    ])
    link_related(cast(list[ArticleView], articles))
    # a3 counts t0-t5: a2 shares t0; a4's first six are t9..t4, of which t4, t5 count
    assert [r.id for r in articles[3].related] == ["a4", "a2"]
    # a1's first six (t6..t9) meet a4's t9..t6 (four shared), and a3's t6.. not at all
    assert [r.id for r in articles[1].related] == ["a4"]
