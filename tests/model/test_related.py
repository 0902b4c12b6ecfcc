"""Related articles: the indexed ranking equals a brute-force ranking on any small site."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.model.related import MAX_RELATED, RelatedMemo, link_related
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


@settings(max_examples=150, deadline=None)
@given(ARTICLES, ARTICLES)
def test_a_memo_is_used_only_for_the_same_order_clusters_and_tags(
        before: list[tuple[set[str], str | None]],
        after: list[tuple[set[str], str | None]]) -> None:
    """Links from a memo equal fresh ones; a memo of another site is not used."""
    old = _articles(before)
    memo = link_related(cast(list[ArticleView], old))
    new = _articles(after)
    again = link_related(cast(list[ArticleView], new), memo=memo)
    for index, article in enumerate(new):
        assert [r.id for r in article.related] == _expected(new, index)
    assert (again is memo) == (before == after)


def test_a_damaged_memo_of_the_right_key_is_not_trusted() -> None:
    shapes: list[tuple[set[str], str | None]] = [({"a"}, "c1"), ({"a"}, None), (set(), "c1")]
    articles = _articles(shapes)
    memo = link_related(cast(list[ArticleView], articles))
    assert memo.positions == ((2, 1), (0,), (0,))
    for bad in [((5,), (0,), (0,)), ((0,), (0,), (0,)), ((1,), (0,)), ((1, 2, 0, 1),) * 3]:
        fresh = _articles(shapes)
        again = link_related(cast(list[ArticleView], fresh), memo=RelatedMemo(memo.key, bad))
        assert again == memo and [[r.id for r in a.related] for a in fresh] == [
            ["a2", "a1"], ["a0"], ["a0"]]
