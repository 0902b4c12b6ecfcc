"""Hashed static assets: layering, CSS reference rewriting, URLs, and the beacon file."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sitegen.errors import BuildError
from sitegen.render.assets import AssetSet, beacon_source, collect_static, hashed_name


def test_names_carry_a_hash_of_the_bytes() -> None:
    assert re.fullmatch(r"static/css/style\.[0-9a-f]{8}\.css", hashed_name("css/style.css", b"a"))
    assert hashed_name("a.css", b"1") != hashed_name("a.css", b"2")
    assert re.fullmatch(r"static/LICENSE\.[0-9a-f]{8}", hashed_name("LICENSE", b"x"))


def test_a_higher_layer_wins_per_relative_path(tmp_path: Path) -> None:
    site, theme = tmp_path / "site", tmp_path / "theme"
    (site / "img").mkdir(parents=True)
    (theme / "img").mkdir(parents=True)
    (site / "style.css").write_text("site")
    (theme / "style.css").write_text("theme")
    (theme / "img" / "logo.svg").write_text("<svg/>")
    (theme / ".DS_Store").write_text("junk")
    (theme / ".git").mkdir()
    (theme / ".git" / "HEAD").write_text("ref")
    files, junk = collect_static([site, theme, tmp_path / "missing"])
    assert files == {"style.css": b"site", "img/logo.svg": b"<svg/>"}
    assert junk == {".DS_Store", ".git/HEAD"}
    assets = AssetSet(files, junk=junk)
    assert assets.url(".DS_Store") == "/static/.DS_Store"  # asked for, never published
    assert [a.name for a in assets.assets()] == ["img/logo.svg", "style.css"]


def test_css_references_are_rewritten_to_hashed_names() -> None:
    assets = AssetSet({
        "css/main.css": b"@import 'parts/a.css';\nbody{background:url(../img/bg.png?v=1#x)}"
                        b" .e{background:url('data:image/png;base64,AA')} .f{src:url(/abs.woff)}",
        "css/parts/a.css": b".a{background:url(\"../../img/bg.png\")}",
        "img/bg.png": b"PNG1",
    })
    main = next(a for a in assets.assets() if a.name == "css/main.css").data.decode()
    bg = assets.url("img/bg.png").removeprefix("/static/")
    part = assets.url("css/parts/a.css").removeprefix("/static/css/")
    assert f"url(../{bg}?v=1#x)" in main
    assert f"@import '{part}'" in main
    assert "data:image/png;base64,AA" in main and "url(/abs.woff)" in main
    # a changed image changes the name of every stylesheet that uses it
    changed = AssetSet({"css/main.css": b"a{background:url(../img/bg.png)}",
                        "img/bg.png": b"PNG2"})
    before = AssetSet({"css/main.css": b"a{background:url(../img/bg.png)}",
                       "img/bg.png": b"PNG1"})
    assert changed.url("css/main.css") != before.url("css/main.css")
    assert changed.fingerprint() != before.fingerprint()


def test_a_plain_import_of_the_same_folder_is_inlined_in_order() -> None:
    """One render-blocking file per page: `site.css` is its imports' text, in their order."""
    assets = AssetSet({
        "site.css": b'/* all */\n@import "style.css";\n@import \'code.css\';\n'
                    b'@import "print.css" print;\n',
        "style.css": b"a{background:url(img/bg.png)}", "code.css": b".c{color:red}",
        "print.css": b"p{}", "img/bg.png": b"PNG",
    })
    site = next(a for a in assets.assets() if a.name == "site.css").data.decode()
    bg = assets.url("img/bg.png").removeprefix("/static/")
    assert site.index(f"a{{background:url({bg})}}") < site.index(".c{color:red}")
    assert "@import \"style.css\"" not in site and "code.css" not in site
    printed = assets.url("print.css").removeprefix("/static/")
    assert f'@import "{printed}" print;' in site  # a media list keeps its own file
    assert "style.css" in assets  # each part is still published on its own


def test_an_import_cycle_is_a_clear_error() -> None:
    with pytest.raises(BuildError, match="cycle"):
        AssetSet({"a.css": b"@import 'b.css';", "b.css": b"@import 'a.css';"})


def test_urls_honour_the_site_base_path_and_unknown_names_fail() -> None:
    assets = AssetSet({"style.css": b"x"}, base_path="/blog/")
    assert re.fullmatch(r"/blog/static/style\.[0-9a-f]{8}\.css", assets.url("style.css"))
    assert AssetSet({"style.css": b"x"}).url("/style.css").startswith("/static/style.")
    with pytest.raises(BuildError, match="nope.css"):
        assets.url("nope.css")


def test_unsafe_static_names_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a\\b.css").write_text("x")
    with pytest.raises(BuildError, match="cannot be published"):
        collect_static([tmp_path])


def test_the_beacon_is_small_and_valid_javascript(tmp_path: Path) -> None:
    source = beacon_source()
    assert len(source) < 2048
    assert b"x-api-key" in source and b"keepalive" in source
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: syntax check skipped")
    script = tmp_path / "beacon.js"
    script.write_bytes(source)
    subprocess.run([node, "--check", str(script)], check=True)
