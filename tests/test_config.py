"""site.toml validation: strict, every error names its key, all reported at once, keys from env."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitegen.config import demo_config, load_config, resolve_config
from sitegen.errors import ConfigError

VALID = """
[site]
title = "Acme Notes"
url = "https://notes.acme.test"

[api]
url = "https://cas.example.com"
workspace = "65f0c0ffee0123456789abcd"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "site.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_minimal_config_gets_defaults(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, VALID))
    assert config.site.title == "Acme Notes"
    assert config.site.per_page == 10
    assert config.api.version == "auto"
    assert config.api.key_env == "SITEGEN_API_KEY"
    assert config.cache_path == (tmp_path / ".sitegen").resolve()
    assert config.output_path() == (tmp_path / "_site").resolve()


def test_output_override_is_relative_to_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = load_config(write(tmp_path, VALID))
    other = tmp_path / "elsewhere"
    other.mkdir()
    monkeypatch.chdir(other)
    assert config.output_path("out") == (other / "out").resolve()


def test_every_problem_is_reported_at_once_naming_keys(tmp_path: Path) -> None:
    text = VALID.replace('title = "Acme Notes"', 'title = "Acme"\nper_page = "ten"\ncolour = 1')
    text = text.replace('workspace = "65f0c0ffee0123456789abcd"', 'workspace = "nope"')
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, text))
    message = str(caught.value)
    assert "site.per_page" in message
    assert "unknown key 'site.colour'" in message
    assert "api.workspace" in message
    assert caught.value.exit_code == 2


def test_missing_required_key_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="missing required key 'site.title'"):
        load_config(write(tmp_path, VALID.replace('title = "Acme Notes"\n', "")))


def test_invalid_toml_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(write(tmp_path, "[site\ntitle="))


def test_missing_file_suggests_init(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="sitegen init"):
        load_config(tmp_path / "site.toml")


def test_a_key_in_site_toml_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="api.key"):
        load_config(write(tmp_path, VALID + 'key = "secret"\n'))


def test_api_key_comes_from_the_named_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = load_config(write(tmp_path, VALID.replace("[api]", '[api]\nkey_env = "ACME_KEY"')))
    monkeypatch.delenv("ACME_KEY", raising=False)
    with pytest.raises(ConfigError, match="ACME_KEY"):
        config.api_key()
    monkeypatch.setenv("ACME_KEY", "k-123")
    assert config.api_key() == "k-123"


def test_permalink_must_contain_slug(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="site.permalink"):
        load_config(write(tmp_path, VALID.replace("[api]", 'permalink = "/posts/"\n[api]')))


def test_demo_config_keeps_the_users_site_section(tmp_path: Path) -> None:
    base = load_config(write(tmp_path, VALID))
    demo = demo_config(base, tmp_path)
    assert demo.site.title == "Acme Notes"
    assert demo.api.workspace == "65f0c0ffee0123456789abcd"
    assert demo.analytics.enabled is False


def test_resolve_config_demo_without_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = resolve_config("site.toml", demo=True)
    assert config.site.title
    with pytest.raises(ConfigError):
        resolve_config("site.toml", demo=False)


@pytest.mark.parametrize(("given", "base_url"), [
    ("https://Notes.ACME.test", "https://notes.acme.test"),
    ("http://notes.acme.test:80/blog/", "http://notes.acme.test/blog"),
    ("https://bücher.test/a b/", "https://xn--bcher-kva.test/a%20b"),
    ("http://localhost:8000", "http://localhost:8000"),
])
def test_urls_are_normalised_as_urls(tmp_path: Path, given: str, base_url: str) -> None:
    config = load_config(write(tmp_path, VALID.replace("https://notes.acme.test", given)))
    assert config.site.base_url == base_url
    assert demo_config(config, tmp_path).site.base_url == base_url  # dumps and loads again


@pytest.mark.parametrize(("given", "problem"), [
    ("ftp://notes.acme.test", "URL scheme should be 'http' or 'https'"),
    ("notes.acme.test", "Input should be a valid URL"),
    ("https://", "Input should be a valid URL, empty host"),
])
def test_a_url_that_is_not_http_is_refused(tmp_path: Path, given: str, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, VALID.replace("https://cas.example.com", given)))
    assert f"'api.url': {problem}" in str(caught.value)


def test_loading_a_config_and_the_records_leaves_pydantic_networks_alone() -> None:
    """Builds never send digest or analytics bodies: what their e-mail check imports is not paid."""
    import subprocess
    import sys

    probe = ("import sys, sitegen.config, sitegen.fetch.records, sitegen.fetch.stored; "
             "print(sorted(m for m in ('pydantic.networks', 'email_validator') "
             "if m in sys.modules))")
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                           check=True).stdout.strip()
    assert found == "[]"
