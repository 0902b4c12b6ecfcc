"""Versions from metadata folder names agree with importlib.metadata, without importing it."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

from sitegen.pkgversions import installed_versions, normalized, versions_of
from sitegen.render.bodies import RENDER_LIBRARIES


def _metadata_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def test_every_installed_distribution_as_importlib_metadata_says() -> None:
    names = sorted({d.metadata["Name"] for d in importlib.metadata.distributions()})
    assert len(names) > 20  # the test environment: pydantic, jinja2, pytest, ...
    found = installed_versions([*names, "no-such-distribution-here"])
    assert found == {**{n: _metadata_version(n) for n in names},
                     "no-such-distribution-here": None}


def test_render_libraries_as_importlib_metadata_says() -> None:
    found = installed_versions(RENDER_LIBRARIES)
    assert found == {name: _metadata_version(name) for name in RENDER_LIBRARIES}
    assert found["jinja2"] and found["markdown-it-py"]


def test_names_not_found_in_folders_are_asked_of_importlib_metadata(tmp_path: Path) -> None:
    """A library on no plain folder of the path (a zip, a custom finder) still has its version."""
    (tmp_path / "jinja2-0.0.1.dist-info").mkdir()
    found = versions_of(["jinja2", "pygments", "absent-here"], [str(tmp_path)])
    assert found == {"jinja2": "0.0.1", "pygments": _metadata_version("pygments"),
                     "absent-here": None}
    assert found["pygments"] is not None


def test_names_compare_normalized() -> None:
    assert normalized("Markdown_It.py") == normalized("markdown-it-py") == "markdown-it-py"
    found = installed_versions(["MarkupSafe", "Jinja2", "markdown_it_py"])
    assert found == {"MarkupSafe": _metadata_version("markupsafe"),
                     "Jinja2": _metadata_version("jinja2"),
                     "markdown_it_py": _metadata_version("markdown-it-py")}


def test_folder_forms_and_order(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    (first / "Pygments-2.14.0.dist-info").mkdir(parents=True)
    (first / "jinja2-3.1.2-py3.11.egg-info").mkdir()
    bare = first / "cryptography.egg-info"  # no version in the name: PKG-INFO has it
    bare.mkdir()
    (bare / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: cryptography\n"
                                   "Version: 38.0.4\n\nVersion: not a header\n")
    (first / "egg_file-1.0.egg-info").write_text("not a folder")
    (first / "versionless.egg-info").write_text("Name: versionless\nVersion: 0.9\n")
    (first / "broken.dist-info").mkdir()  # no version anywhere: not this one
    (second / "pygments-9.9.dist-info").mkdir(parents=True)  # shadowed by the first folder
    (second / "broken-2.0.dist-info").mkdir()
    (second / "markupsafe-3.0.0.dist-info").mkdir()
    path = [str(tmp_path / "missing"), str(tmp_path / "a-file.zip"), str(first), str(second)]
    (tmp_path / "a-file.zip").write_bytes(b"PK")
    found = installed_versions(["pygments", "jinja2", "cryptography", "egg-file",
                                "versionless", "broken", "markupsafe", "absent"], path)
    assert found == {"pygments": "2.14.0", "jinja2": "3.1.2", "cryptography": "38.0.4",
                     "egg-file": "1.0", "versionless": "0.9", "broken": "2.0",
                     "markupsafe": "3.0.0", "absent": None}


_BATCH_BUILD = """
import sys
from sitegen import cli
cli._as_batch("build")
status = cli.main(sys.argv[1:])
loader = sys.modules.get("pydantic.plugin._loader")
print(status, "importlib.metadata" in sys.modules, getattr(loader, "__file__", None) is None)
"""


def _batch_build(tmp_path: Path, *args: str, env: dict[str, str]) -> list[str]:
    environment = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    result = subprocess.run([sys.executable, "-c", _BATCH_BUILD, *args], capture_output=True,
                            text=True, cwd=tmp_path, env={**environment, **env}, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def _site_with_cache(root: Path) -> Path:
    """A site folder (not the demo: that build loads the emulator) with a filled cache."""
    import httpx

    from sitegen.config import DEMO_API_URL, DEMO_WORKSPACE_ID, resolve_config
    from sitegen.emulator.app import create_app
    from sitegen.emulator.demo import load_demo
    from sitegen.fetch.sync import sync

    config_path = root / "site.toml"
    config_path.write_text(
        '[site]\ntitle = "T"\nurl = "https://t.example.test/"\n'
        f'[api]\nurl = "{DEMO_API_URL}"\nworkspace = "{DEMO_WORKSPACE_ID}"\n',
        encoding="utf-8")
    transport = httpx.ASGITransport(app=create_app(load_demo()))
    sync(resolve_config(str(config_path), False), key="demo", transport=transport)
    return config_path


def _rebuild(tmp_path: Path, plugins: str | None) -> list[str]:
    """An offline build after a page went missing (so it loads the config and renders)."""
    config, out = tmp_path / "site.toml", tmp_path / "_site"
    if not out.is_dir():
        config = _site_with_cache(tmp_path)
        _batch_build(tmp_path, "build", "-q", "--offline", "-c", str(config), env={})
    (out / "404.html").unlink()
    env = {} if plugins is None else {"PYDANTIC_DISABLE_PLUGINS": plugins}
    result = _batch_build(tmp_path, "build", "-q", "--offline", "-c", str(config), env=env)
    assert (out / "404.html").is_file()
    return result


def test_a_batch_build_never_imports_importlib_metadata(tmp_path: Path) -> None:
    """pydantic's plugin loader is stood in for, and the render caches' key needs no lookup."""
    assert _rebuild(tmp_path, None) == ["0", "False", "True"]
    assert _rebuild(tmp_path, "1") == ["0", "False", "True"]


def test_named_plugins_keep_pydantics_own_loader(tmp_path: Path) -> None:
    for value in ("some-plugin", ""):  # plugins named, or an explicit empty setting
        assert _rebuild(tmp_path, value) == ["0", "True", "False"]
