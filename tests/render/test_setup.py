"""The render's set-up (`sitegen.render.setup`): one theme chain per build, the beacon's
script among the hashed files the emit stage is handed."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitegen.build import BuildOptions, run_build
from sitegen.config import parse_config
from sitegen.render import themes
from tests.render.render_factory import demo_workspace


def test_a_build_reads_the_theme_chain_once_and_hands_emit_the_beacon_script(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hashed assets used to be gathered from a second `ThemeSet` (the chain found and
    its owned folders walked again); now the renderer's own one serves both."""
    made: list[object] = []
    real = themes.ThemeSet.__init__

    def counted(self: themes.ThemeSet, *args: object, **kwargs: object) -> None:
        made.append(self)
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(themes.ThemeSet, "__init__", counted)
    monkeypatch.setenv("SITEGEN_ANALYTICS_KEY", "pk_public_setup_test")
    config = parse_config({
        "site": {"title": "Setup", "url": "https://notes.acme.test/blog/"},
        "api": {"url": "https://cas.example.test", "workspace": "65f0c0ffee0123456789abcd"},
        "analytics": {"enabled": True, "site_slug": "setup"},
        "search": {"enabled": False},
    }, tmp_path)
    out = tmp_path / "out"
    report = run_build(config, BuildOptions(output=out, workspace=demo_workspace()))
    assert report.rendered > 0
    assert len(made) == 1
    [script] = (out / "static").glob("sitegen-beacon.*.js")
    assert script.read_bytes().startswith(b"/* sitegen page-view beacon")
    assert not list((out / "static").glob("search.*.js"))  # (search off: no page loads it)
    home = (out / "index.html").read_text(encoding="utf-8")
    assert f'src="/blog/static/{script.name}"' in home
