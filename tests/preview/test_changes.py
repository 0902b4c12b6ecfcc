"""Change classification: a batch of changed paths → config, template, static or ignored."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitegen.config import parse_config
from sitegen.preview.changes import (
    ChangeKind,
    ChangeSet,
    WatchPlan,
    classify_changes,
    classify_path,
    plan_for,
)

ROOT = Path("/site")


@pytest.fixture()
def plan() -> WatchPlan:
    return WatchPlan(config_file=ROOT / "site.toml", root=ROOT, theme="mine",
                     excluded=(ROOT / "_site", ROOT / ".sitegen"))


@pytest.mark.parametrize(("relative", "kind"), [
    ("site.toml", ChangeKind.CONFIG),
    ("pages/about.md", ChangeKind.TEMPLATE),
    ("pages", ChangeKind.TEMPLATE),
    ("static/CNAME", ChangeKind.STATIC),
    ("static/.well-known/security.txt", ChangeKind.STATIC),
    ("templates/base.html", ChangeKind.TEMPLATE),
    ("templates/blocks/image.html", ChangeKind.TEMPLATE),
    ("templates", ChangeKind.TEMPLATE),
    ("themes/mine/templates/page.html", ChangeKind.TEMPLATE),
    ("themes/mine/theme.toml", ChangeKind.TEMPLATE),
    ("themes/mine/static/style.css", ChangeKind.STATIC),
    ("themes/mine/static/img/logo.svg", ChangeKind.STATIC),
    ("themes/other/templates/page.html", ChangeKind.IGNORED),
    ("themes/other/static/style.css", ChangeKind.IGNORED),
    ("_site/index.html", ChangeKind.IGNORED),
    (".sitegen/preview/index.html", ChangeKind.IGNORED),
    (".sitegen/cache.json", ChangeKind.IGNORED),
    ("templates/.base.html.swp", ChangeKind.IGNORED),
    ("templates/base.html~", ChangeKind.IGNORED),
    ("templates/.#base.html", ChangeKind.IGNORED),
    ("templates/4913", ChangeKind.IGNORED),
    ("templates/base.html___jb_tmp___", ChangeKind.IGNORED),
    ("templates/.git/index", ChangeKind.IGNORED),
    ("README.md", ChangeKind.IGNORED),
    ("site.toml.bak", ChangeKind.IGNORED),
    ("", ChangeKind.IGNORED),
])
def test_classify_path(plan: WatchPlan, relative: str, kind: ChangeKind) -> None:
    assert classify_path(ROOT / relative, plan) is kind


def test_output_inside_templates_is_still_ignored() -> None:
    plan = WatchPlan(config_file=ROOT / "site.toml", root=ROOT,
                     excluded=(ROOT / "templates" / "out",))
    assert classify_path(ROOT / "templates" / "out" / "index.html", plan) is ChangeKind.IGNORED
    assert classify_path(ROOT / "templates" / "page.html", plan) is ChangeKind.TEMPLATE


def test_a_batch_sorted_by_kind(plan: WatchPlan) -> None:
    changes = classify_changes([
        ROOT / "templates/base.html", ROOT / "templates/base.html",
        ROOT / "themes/mine/static/style.css", ROOT / "_site/index.html",
    ], plan)
    assert changes.templates == (ROOT / "templates/base.html",)
    assert changes.static == (ROOT / "themes/mine/static/style.css",)
    assert changes.ignored == (ROOT / "_site/index.html",)
    assert changes.kinds == {ChangeKind.TEMPLATE, ChangeKind.STATIC}
    assert not changes.css_only
    assert changes.describe() == "template and static change"


def test_css_only_batch(plan: WatchPlan) -> None:
    changes = classify_changes([ROOT / "themes/mine/static/style.css",
                                ROOT / "themes/mine/static/.style.css.swp"], plan)
    assert changes.css_only
    assert changes.describe() == "CSS change"
    with_image = classify_changes([ROOT / "themes/mine/static/style.css",
                                   ROOT / "themes/mine/static/logo.png"], plan)
    assert not with_image.css_only
    assert with_image.describe() == "static change"


def test_only_ignored_is_empty(plan: WatchPlan) -> None:
    changes = classify_changes([ROOT / "_site/a.html", ROOT / "notes.txt"], plan)
    assert changes.is_empty
    assert changes.describe() == "no change"
    assert ChangeSet(config=(ROOT / "site.toml",)).describe() == "config change"


def test_plan_for_excludes_output_and_cache_inside_the_site(tmp_path: Path) -> None:
    config = parse_config({
        "site": {"title": "T", "url": "https://x.test/", "output": "templates/_out",
                 "theme": "mine"},
        "api": {"url": "https://api.test", "workspace": "65f0c0ffee0123456789abcd"},
    }, tmp_path)
    root = tmp_path.resolve()
    plan = plan_for(config, tmp_path / "site.toml", excluded=(tmp_path / ".sitegen/preview",))
    assert plan.theme == "mine"
    assert classify_path(root / "templates/_out/index.html", plan) is ChangeKind.IGNORED
    assert classify_path(root / ".sitegen/preview/index.html", plan) is ChangeKind.IGNORED
    assert classify_path(root / "templates/page.html", plan) is ChangeKind.TEMPLATE
    assert classify_path(root / "site.toml", plan) is ChangeKind.CONFIG


def test_output_equal_to_the_site_folder_does_not_hide_everything(tmp_path: Path) -> None:
    config = parse_config({
        "site": {"title": "T", "url": "https://x.test/", "output": "."},
        "api": {"url": "https://api.test", "workspace": "65f0c0ffee0123456789abcd"},
    }, tmp_path)
    plan = plan_for(config, tmp_path / "site.toml")
    assert classify_path(tmp_path.resolve() / "templates/a.html", plan) is ChangeKind.TEMPLATE
