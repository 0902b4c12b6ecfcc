"""Hostile sizes and names in the model: tag caps, duplicate slugs in linear time, and
Windows device names never a path segment of the output."""

from __future__ import annotations

import logging
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "render"))

from render_factory import article, make_config, make_workspace  # noqa: E402

from sitegen.errors import ConfigError  # noqa: E402
from sitegen.model import build_site  # noqa: E402
from sitegen.model.slugs import (  # noqa: E402
    DEVICE_NAMES,
    SlugAllocator,
    expand_permalink,
    is_device_name,
)
from sitegen.model.tags import MAX_TAGS  # noqa: E402

DEVICES = ["con", "prn", "aux", "nul", "com1", "com9", "lpt1", "lpt9"]


def _first_free(taken: set[str], wanted: str) -> str:
    """The allocation rule as first written: the first free of wanted, wanted-2, wanted-3..."""
    if wanted not in taken:
        return wanted
    n = 2
    while f"{wanted}-{n}" in taken:
        n += 1
    return f"{wanted}-{n}"


def test_the_allocator_gives_what_first_free_gave() -> None:
    import random

    rng = random.Random(7)
    allocator, taken = SlugAllocator(), set(DEVICE_NAMES)
    for _ in range(3000):
        wanted = rng.choice(["a", "b", "a-2", "a-3", "b-2-2", "c", "a-2-2"])
        expected = _first_free(taken, wanted)
        taken.add(expected)
        assert allocator.allocate(wanted) == expected


class _CountingSet(set[str]):
    """A set that counts membership probes (the allocator's unit of work)."""

    probes = 0

    def __contains__(self, item: object) -> bool:
        _CountingSet.probes += 1
        return super().__contains__(item)


def test_sixteen_thousand_equal_slugs_take_linear_time() -> None:
    allocator = SlugAllocator()
    allocator._taken = _CountingSet(allocator._taken)
    _CountingSet.probes = 0
    slugs = [allocator.allocate("same") for _ in range(16_000)]
    assert slugs[:3] == ["same", "same-2", "same-3"] and slugs[-1] == "same-16000"
    # linear: a few probes a slug (first-free from -2 each time made ~128 million)
    assert _CountingSet.probes < 3 * 16_000, _CountingSet.probes


def test_an_article_keeps_its_first_50_tags_with_one_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    tags = [f"tag {n}" for n in range(10_000)]
    workspace = make_workspace([article(1, tags=tags), article(2, tags=["tag 7", "other"])])
    with caplog.at_level(logging.WARNING):
        site = build_site(make_config(tmp_path), workspace)
    first = next(a for a in site.articles if a.id == f"{1:024x}")
    assert [t.name for t in first.tags] == tags[:MAX_TAGS] and MAX_TAGS == 50
    assert len(site.tags) == 51  # the 50 kept and "other"
    warnings = [r.getMessage() for r in caplog.records if "tags" in r.getMessage()]
    assert warnings == [f"article {1:024x} has more than 50 tags; only its first 50 were kept"]


@pytest.mark.parametrize("name", [*DEVICES, "CON", "Nul", "con.txt", "LPT1.tar.gz", "aux "])
def test_device_names_are_recognised(name: str) -> None:
    assert is_device_name(name)


@pytest.mark.parametrize("name", ["console", "com10", "lpt0", "com", "nulls", "icon", "a.con"])
def test_other_names_are_not(name: str) -> None:
    assert not is_device_name(name)


def test_no_output_path_has_a_device_name_segment(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    records = [article(n, slug=name, title=name.upper(), tags=[name, name.upper()],
                       agentId=f"ag{n}", clusterId=f"c{n}", authorIdentityId=f"au{n}",
                       language="en" if n % 2 else "con")
               for n, name in enumerate(DEVICES, start=1)]
    workspace = make_workspace(
        records,
        agents=[{"id": f"ag{n}", "name": name} for n, name in enumerate(DEVICES, start=1)],
        clusters=[{"id": f"c{n}", "name": name.upper()} for n, name in enumerate(DEVICES, 1)],
        authors=[{"id": f"au{n}", "name": name} for n, name in enumerate(DEVICES, start=1)],
        social_posts=[{"id": f"{n:024x}", "slug": name, "title": name, "content": "x"}
                      for n, name in enumerate(DEVICES, start=1)])
    with caplog.at_level(logging.WARNING):
        site = build_site(make_config(tmp_path), workspace)
    paths = [page.path for page in site.pages] + [
        s.feed_url for s in (*site.agents, *site.clusters, *site.authors, *site.tags,
                             *site.languages)]
    assert len(site.articles) == len(DEVICES) and site.agents and site.tags
    assert len(site.languages) == 2
    for path in paths:
        assert not any(is_device_name(segment) for segment in path.split("/")), path
    assert not any(is_device_name(post.slug) for post in site.social_posts)
    assert {a.slug for a in site.articles} == {f"{name}-2" for name in DEVICES}
    text = caplog.text
    assert "article 000000000000000000000001 slug 'con' is a reserved name; using 'con-2'" in text
    assert "agent ag1 slug 'con' is a reserved name; using 'con-2' instead" in text
    assert "tag 'con' slug 'con' is a reserved name; using 'con-tag' instead" in text
    # deterministic: the same workspace gives the same slugs
    again = build_site(make_config(tmp_path), workspace)
    assert [p.path for p in again.pages] == [p.path for p in site.pages]


@pytest.mark.parametrize("pattern", ["/con/{slug}/", "/{lang}/aux/{slug}/"])
def test_a_permalink_with_a_device_segment_is_a_config_error(pattern: str) -> None:
    with pytest.raises(ConfigError) as caught:
        expand_permalink(pattern, "a", datetime(2024, 1, 1, tzinfo=UTC), "en", "x")
    assert "reserves for a device" in str(caught.value)


def test_a_device_language_in_a_permalink_is_renamed() -> None:
    url = expand_permalink("/{lang}/{slug}/", "a", datetime(2024, 1, 1, tzinfo=UTC), "con", "x")
    assert url == "/con-lang/a/"
