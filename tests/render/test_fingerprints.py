"""Fingerprints: what a read gives, told apart as a template would tell it apart, and the
same in every process (the next build compares them with this one's)."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from markupsafe import Markup
from render_factory import article, make_config, make_workspace

from sitegen.model import build_site
from sitegen.render.fingerprints import Fingerprints
from sitegen.render.pages import Renderer
from sitegen.render.themes import ThemeSet


def fingerprints(root: Path) -> Fingerprints:
    config = make_config(root)
    site = build_site(config, make_workspace([article(1), article(2)]))
    return Renderer(config, site, ThemeSet(config)).fingerprints


def test_values_a_template_tells_apart_have_other_fingerprints(tmp_path: Path) -> None:
    found = fingerprints(tmp_path)
    one, two = (found.registry.objects[f"article:{n:024x}"] for n in (1, 2))
    moment = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    pairs: list[tuple[Any, Any]] = [
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),  # a template iterating it shows the order
        ([1, 2], (1, 2)), ("1", 1), (1, 1.0), (1, True), ("<b>", Markup("<b>")),
        ([one, two], [two, one]), ([one], ["E", f"article:{1:024x}"]),
        ([one], [("E", f"article:{1:024x}")]), (moment, moment.isoformat()),
        (moment, moment.date()), ({"x"}, frozenset({"x"})), (None, ""), ([], ()),
    ]
    def written(value: object) -> bytes:  # (what is digested)
        return marshal.dumps(found.plain(value), 2)

    for first, second in pairs:
        assert written(first) != written(second), (first, second)
    assert written({"a": [one, 1]}) == written({"a": [one, 1]})


SET_DIGEST = """
import hashlib, marshal, sys
from pathlib import Path
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from test_fingerprints import fingerprints
found = fingerprints(Path(sys.argv[3]))
value = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta"}
print(hashlib.sha256(marshal.dumps(found.plain(value), 2)).hexdigest())
"""


def test_a_set_has_one_fingerprint_whatever_the_processs_hash_seed(tmp_path: Path) -> None:
    here = Path(__file__).resolve().parent
    digests = set()
    for seed in ("1", "2", "3"):
        done = subprocess.run(
            [sys.executable, "-c", SET_DIGEST, str(here), str(here.parents[1]),
             str(tmp_path / seed)],
            env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True, text=True,
            timeout=120, check=True)
        digests.add(done.stdout.strip())
    assert len(digests) == 1
