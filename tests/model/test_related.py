"""Related articles: the indexed ranking equals a brute-force ranking on any small site."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.model.related import MAX_RELATED, link_related
from sitegen.model.views import ArticleView

ARTICLES = st.lists(
    st.tuples(st.sets(st.sampled_from("abcdef"), max_size=4),
              st.one_of(st.none(), st.sampled_from(["c1", "c2", "c3"]))),
    max_size=30,
)


def _articles(shapes: list[tuple[set[str], str | None]]) -> list[Any]:
    return [SimpleNamespace(
        id=f"a{n}", tags=[SimpleNamespace(slug=slug) for slug in sorted(tags)],
        cluster=SimpleNamespace(id=cluster) if cluster else None, related=[])
        for n, (tags, cluster) in enumerate(shapes)]


def _expected(articles: list[Any], index: int) -> list[str]:
    """Same cluster first, then most shared tags, then newest (lowest position)."""
    me = articles[index]
    mine = {t.slug for t in me.tags}
    ranked = []
    for other, article in enumerate(articles):
        if other == index:
            continue
        same = me.cluster is not None and article.cluster is not None \
            and article.cluster.id == me.cluster.id
        shared = len(mine & {t.slug for t in article.tags})
        if same or shared:
            ranked.append(((-int(same), -shared, other), article.id))
    return [article_id for _, article_id in sorted(ranked)[:MAX_RELATED]]


@settings(max_examples=300, deadline=None)
@given(ARTICLES)
def test_related_matches_the_brute_force_ranking(shapes: list[tuple[set[str], str | None]]) -> None:
    articles = _articles(shapes)
    link_related(cast(list[ArticleView], articles))
    for index, article in enumerate(articles):
        assert [r.id for r in article.related] == _expected(articles, index)
