"""Related articles and newer/older links, derived deterministically.

Role: for each article pick up to three related articles — same cluster first,
then most shared tags, then newest, then id — and link each article to its
neighbours in the newest-first order. Tags are counted over each article's first
`MAX_RELATED_TAGS` tags (its leading ones, in its own order). The choice depends
only on each article's position, cluster and tags, and costs a bounded amount per
article whatever the site's size. Must never do I/O, log, or look at bodies.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from itertools import combinations

from sitegen.model.views import ArticleView

MAX_RELATED = 3
#: Tags of an article that count for its related articles: its first ones. The ranking
#: indexes every subset of them (2**6 lists an article at most), which keeps it linear.
MAX_RELATED_TAGS = 6

#: The subsets of an article's counted tags, by size, the largest first.
Levels = tuple[tuple[str, ...], ...]


def link_neighbours(articles: Sequence[ArticleView]) -> None:
    """Set `newer`/`older` along *articles* (newest first)."""
    for index, article in enumerate(articles):
        article.newer = articles[index - 1] if index > 0 else None
        article.older = articles[index + 1] if index + 1 < len(articles) else None


def link_related(articles: Sequence[ArticleView], limit: int = MAX_RELATED) -> None:
    """Set `related` on every article (articles are newest first; rank = position).

    Score, highest first: same cluster, number of shared tags (of each article's first
    `MAX_RELATED_TAGS`), newer, then id. An article is related only when it shares the
    cluster or at least one of those tags.
    """
    for article, chosen in zip(articles, _score(articles, limit), strict=True):
        article.related = [articles[i] for i in chosen]


def related_tags(article: ArticleView) -> tuple[str, ...]:
    """The tag slugs of *article* that count for related articles, sorted."""
    return tuple(sorted({t.slug for t in article.tags[:MAX_RELATED_TAGS]}))


def _score(articles: Sequence[ArticleView], limit: int) -> list[list[int]]:
    """The related positions of every article (see `link_related`).

    Every article is listed, in position order, under each subset of its counted tags,
    once for the whole site and once within its cluster (the empty subset: every member).
    An article sharing exactly *c* tags with another is in exactly one of the other's
    *c*-subset lists, so walking the other's subsets from the most shared down to the
    fewest, and taking the newest not yet chosen at each level, ranks as counting every
    pair would, with a bounded look at each list's head instead. (Subsets are strings and
    lists are arrays: neither is an object the garbage collector has to visit.)
    """
    site: dict[str, array[int]] = {}
    clusters: dict[str, dict[str, array[int]]] = {}
    shapes: list[tuple[str | None, Levels]] = []
    made: dict[tuple[str, ...], Levels] = {}  # articles share tag sets: each made once
    for position, article in enumerate(articles):
        tags = related_tags(article)
        levels = made.get(tags)
        if levels is None:
            levels = made[tags] = _levels(tags)
        cluster = article.cluster.id if article.cluster is not None else None
        shapes.append((cluster, levels))
        _list(site, levels[:-1], position)
        if cluster is not None:
            _list(clusters.setdefault(cluster, {}), levels, position)
    found: list[list[int]] = []
    for position, (cluster, levels) in enumerate(shapes):
        chosen: list[int] = []
        taken = {position}
        scopes = [(site, levels[:-1])]  # the empty subset: the cluster's members only
        if cluster is not None:
            scopes.insert(0, (clusters[cluster], levels))
        for lists, walk in scopes:
            for level in walk:
                need = limit - len(chosen)
                if need <= 0:
                    break
                newest = _newest([lists.get(subset, ()) for subset in level], taken, need)
                chosen += newest
                taken.update(newest)
        found.append(chosen)
    return found


def _list(lists: dict[str, array[int]], levels: Levels, position: int) -> None:
    """Add *position* to the list of each subset in *levels*."""
    for level in levels:
        for subset in level:
            positions = lists.get(subset)
            if positions is None:
                lists[subset] = array("q", (position,))
            else:
                positions.append(position)


def _levels(tags: tuple[str, ...]) -> Levels:
    """The subsets of *tags* by size, the largest first (the last level: the empty one);
    each subset as its slugs joined by spaces (a slug has none)."""
    return tuple(tuple(" ".join(subset) for subset in combinations(tags, size))
                 for size in range(len(tags), -1, -1))


def _newest(lists: Iterable[Sequence[int]], taken: set[int], need: int) -> list[int]:
    """The *need* lowest positions not *taken* in *lists*.

    Each list is in position order, so only the first *need* untaken entries of each
    can be among them.
    """
    heads: set[int] = set()
    for positions in lists:
        found = 0
        for other in positions:
            if other not in taken:
                heads.add(other)
                found += 1
                if found == need:
                    break
    return sorted(heads)[:need]
