"""One code fingerprint: derived data follows any change of sitegen's code or libraries."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import sitegen
from sitegen.codeprint import code_fingerprint, code_signature, fingerprint_of, library_versions
from tests.render.render_factory import article

PACKAGE = Path(sitegen.__file__).resolve().parent


def _copy_package(into: Path) -> Path:
    target = into / "sitegen"
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def test_the_fingerprint_follows_code_themes_and_libraries(tmp_path: Path) -> None:
    package = _copy_package(tmp_path)
    versions = library_versions()
    base = fingerprint_of(package, versions)
    assert base == fingerprint_of(package, dict(versions)) == code_fingerprint()
    # a library that shapes the output, upgraded
    assert fingerprint_of(package, {**versions, "pygments": "0.0.1"}) != base
    # any module, not only a hand-kept list of them
    feed = package / "emit" / "search.py"
    feed.write_text(feed.read_text() + "\n# an edit\n")
    edited = fingerprint_of(package, versions)
    assert edited != base
    # a built-in theme's file (template or asset)
    css = next((package / "themes").rglob("*.css"))
    css.write_bytes(css.read_bytes() + b"\n")
    assert fingerprint_of(package, versions) != edited
    # content beside the code (the emulator's demo data) is not code
    demo = package / "emulator" / "data" / "demo-workspace.json"
    before = fingerprint_of(package, versions)
    demo.write_text(demo.read_text() + "\n")
    assert fingerprint_of(package, versions) == before


_BUILD = """
import json, sys
from pathlib import Path
import sitegen
from sitegen.build import BuildOptions, run_build
from sitegen.config import parse_config
from sitegen.workspace import Workspace

assert Path(sitegen.__file__).resolve().parent == Path(sys.argv[2]).resolve(), sitegen.__file__
workspace = Workspace.model_validate(json.loads(Path(sys.argv[1]).read_text()))
config = parse_config({
    "site": {"title": "Code", "url": "https://site.example.test/"},
    "api": {"url": "https://api.example.test", "workspace": "65f0c0ffee0123456789abcd"},
    "search": {"enabled": False}}, Path.cwd())
report = run_build(config, BuildOptions(output=Path("out"), workspace=workspace))
print(json.dumps([report.rendered, report.html_pages]))
"""


def test_a_changed_module_renders_every_page_again(tmp_path: Path) -> None:
    """An edit of a module the old hand-kept lists did not name (the records) makes every
    page and body stale: sitegen run from a copy of its package, built twice around it."""
    package = _copy_package(tmp_path / "code")
    site = tmp_path / "site"
    site.mkdir()
    content = site / "workspace.json"
    content.write_text(json.dumps({
        "api_version": "v2", "info": {"id": "65f0c0ffee0123456789abcd", "name": "W"},
        "articles": [article(n) for n in range(1, 4)], "agents": [], "clusters": [],
        "authors": [], "social_posts": []}))
    env = {**os.environ, "PYTHONPATH": str(package.parent)}

    def build() -> tuple[int, int]:
        done = subprocess.run([sys.executable, "-c", _BUILD, str(content), str(package)],
                              cwd=site, env=env, capture_output=True, text=True,
                              timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        rendered, pages = json.loads(done.stdout.strip().splitlines()[-1])
        return rendered, pages

    first, pages = build()
    assert first == pages > 3
    assert build() == (0, pages)  # nothing changed: every page kept
    records = package / "fetch" / "records.py"
    records.write_text(records.read_text() + "\n# a change of the code\n")
    assert build() == (pages, pages)


def test_the_signature_follows_what_the_fingerprint_reads(tmp_path: Path) -> None:
    """`code_signature` changes with a module written, a distribution added to a path entry
    or its metadata rewritten in place; not with another file of that folder."""
    package = _copy_package(tmp_path / "code")
    libs = tmp_path / "libs"
    (libs / "jinja2-3.1.0.dist-info").mkdir(parents=True)
    metadata = libs / "jinja2-3.1.0.dist-info" / "METADATA"
    metadata.write_text("Metadata-Version: 2.1\nName: Jinja2\nVersion: 3.1.0\n")
    path = [str(libs), str(tmp_path / "missing")]
    base = code_signature(package, path)
    assert code_signature(package, path) == base
    (libs / "report.json").write_text("{}")  # (the current folder's own files)
    assert code_signature(package, path) == base
    (libs / "pygments-99.0.dist-info").mkdir()
    added = code_signature(package, path)
    assert added != base
    with metadata.open("r+") as handle:  # the same size, in place: only its ctime tells
        handle.write(metadata.read_text().replace("3.1.0", "3.1.9"))
    rewritten = code_signature(package, path)
    assert rewritten != added
    module = package / "unchanged.py"
    module.write_text(module.read_text() + "# an edit\n")
    assert code_signature(package, path) != rewritten
