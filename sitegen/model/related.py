"""Related articles and newer/older links, derived deterministically.

Role: for each article pick up to three related articles — same cluster first,
then most shared tags, then newest, then id — and link each article to its
neighbours in the newest-first order. The choice depends only on each article's
position, cluster and tags. Must never do I/O, log, or look at bodies.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from operator import itemgetter

from sitegen.model.views import ArticleView

MAX_RELATED = 3


def link_neighbours(articles: Sequence[ArticleView]) -> None:
    """Set `newer`/`older` along *articles* (newest first)."""
    for index, article in enumerate(articles):
        article.newer = articles[index - 1] if index > 0 else None
        article.older = articles[index + 1] if index + 1 < len(articles) else None


def link_related(articles: Sequence[ArticleView], limit: int = MAX_RELATED) -> None:
    """Set `related` on every article (articles are newest first; rank = position).

    Score, highest first: same cluster, number of shared tags, newer, then id.
    An article is related only when it shares the cluster or at least one tag.
    """
    for article, chosen in zip(articles, _score(articles, limit), strict=True):
        article.related = [articles[i] for i in chosen]


def _score(articles: Sequence[ArticleView], limit: int) -> list[list[int]]:
    """The related positions of every article (see `link_related`)."""
    by_tag: dict[str, list[int]] = {}
    by_cluster: dict[str, list[int]] = {}
    by_cluster_tag: dict[tuple[str, str], list[int]] = {}
    tag_sets: list[frozenset[str]] = []
    positions: list[list[int]] = []
    for index, article in enumerate(articles):
        tags = frozenset(t.slug for t in article.tags)
        tag_sets.append(tags)
        for slug in tags:
            by_tag.setdefault(slug, []).append(index)
        if article.cluster is not None:
            by_cluster.setdefault(article.cluster.id, []).append(index)
            for slug in tags:
                by_cluster_tag.setdefault((article.cluster.id, slug), []).append(index)
    for index, article in enumerate(articles):
        tags = tag_sets[index]
        chosen: list[int] = []
        if article.cluster is not None:
            chosen = _same_cluster(index, article.cluster.id, tags, by_cluster, by_cluster_tag,
                                   limit)
        if len(chosen) < limit and tags:
            counts: Counter[int] = Counter()
            for slug in tags:
                counts.update(by_tag[slug])
            del counts[index]
            for other in chosen:  # fewer than `limit`: every cluster member is taken
                del counts[other]
            chosen += _best(counts, limit - len(chosen))
        positions.append(chosen)
    return positions


def _best(counts: Counter[int], limit: int) -> list[int]:
    """The *limit* positions with the highest counts, the newest (lowest) first on ties.

    Two stable sorts in C (by position, then by count, reversed stably) instead of a
    heap over Python tuples: this runs once or twice per article.
    """
    ranked = sorted(sorted(counts.items()), key=itemgetter(1), reverse=True)
    return [other for other, _ in ranked[:limit]]


def _same_cluster(index: int, cluster: str, tags: frozenset[str],
                  by_cluster: dict[str, list[int]],
                  by_cluster_tag: dict[tuple[str, str], list[int]], limit: int) -> list[int]:
    """Up to *limit* other members of the cluster: most shared tags first, then newest.

    Only members sharing a tag are counted; the rest (no shared tag) rank by position,
    which `by_cluster` already holds in order.
    """
    shared: Counter[int] = Counter()
    for slug in tags:
        shared.update(by_cluster_tag[(cluster, slug)])
    del shared[index]
    chosen = _best(shared, limit)
    if len(chosen) < limit:
        for other in by_cluster[cluster]:
            if other != index and other not in shared:
                chosen.append(other)
                if len(chosen) == limit:
                    break
    return chosen
