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
    assert '[site] per_page must be a whole number without quotes, e.g. 8, not "ten"' in message
    assert "unknown key [site] colour" in message
    assert '[api] workspace must be 24 hexadecimal digits (the workspace id), not "nope"' in (
        message)
    assert "String should match pattern" not in message
    assert caught.value.exit_code == 2


def test_missing_required_key_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing required key \[site\] title"):
        load_config(write(tmp_path, VALID.replace('title = "Acme Notes"\n', "")))


def test_invalid_toml_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(write(tmp_path, "[site\ntitle="))


def test_missing_file_suggests_init(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="sitegen init"):
        load_config(tmp_path / "site.toml")


def test_a_key_in_site_toml_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\[api\] key"):
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


@pytest.mark.parametrize("line", [
    'permalink = "/media/{slug}/"', 'permalink = "/static/{slug}/"',
    'permalink = "/pagefind/index/{slug}/"', 'redirects = { "/media/old/" = "/new/" }',
    'redirects = { "/static/x.html" = "/x/" }'])
def test_no_page_may_live_in_a_folder_cached_for_a_year(tmp_path: Path, line: str) -> None:
    """`/static/`, `/media/` and Pagefind's index hold only hash-named files, which hosts
    cache for a year (`immutable`): a page or a redirect page there would never update."""
    with pytest.raises(ConfigError, match=r"cache every file for a year"):
        load_config(write(tmp_path, VALID.replace("[api]", f"{line}\n[api]")))
    load_config(write(tmp_path, VALID.replace("[api]", 'permalink = "/media-notes/{slug}/"\n'
                                                       'redirects = { "/old/" = "/media/x/" }'
                                                       "\n[api]")))


@pytest.mark.parametrize("language, good", [
    ("en", True), ("pt-BR", True), ("zh-Hant-TW", True), ("fr", True),
    ("not a lang", False), ("pt_BR", False), ("e", False), ("english!", False), ("", False)])
def test_the_site_language_is_a_code_html_accepts(tmp_path: Path, language: str,
                                                   good: bool) -> None:
    """It becomes `<html lang>`: "not a lang" was written there as it was."""
    path = write(tmp_path, VALID.replace("[api]", f'language = "{language}"\n[api]'))
    if good:
        assert load_config(path).site.language == language
        return
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert ('[site] language must be a language code such as "en", "de" or "pt-BR", not '
            f'"{language}"') in str(caught.value)


def test_permalink_must_contain_slug(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\[site\] permalink"):
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
    assert "[api] url must be an http(s) URL with a host" in str(caught.value)
    assert problem in str(caught.value)


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


# --- issue 24: strict types, plain words, the TOML line, checks before any request ---------


@pytest.mark.parametrize(("line", "words"), [
    ('concurrency = "8"', '[api] concurrency must be a whole number without quotes, e.g. 8, '
                          'not "8"'),
    ("timeout = true", "[api] timeout must be a number without quotes, e.g. 10.0, not true"),
    ('version = "v3"', "[api] version must be one of 'auto', 'v2' or 'v1', not \"v3\""),
    ("max_retries = 99", "[api] max_retries must be at most 20, not 99"),
])
def test_wrong_types_are_refused_in_plain_words(tmp_path: Path, line: str, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, VALID + line + "\n"))
    assert words in str(caught.value)
    assert "Input should" not in str(caught.value) and caught.value.exit_code == 2


def test_a_toml_syntax_error_names_the_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, VALID.replace('"Acme Notes"', "Acme Notes")))
    assert "site.toml is not valid TOML at line 3, column 9" in str(caught.value)


def test_the_placeholder_api_url_is_named_before_any_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from sitegen.cli import main

    monkeypatch.setenv("SITEGEN_API_KEY", "some-key-1234")
    path = write(tmp_path, VALID)
    for command in (["build"], ["fetch"]):
        assert main([*command, "-c", str(path)]) == 2
        last = capsys.readouterr().err.strip().splitlines()[-1]
        assert "replace the placeholder [api] url in site.toml" in last, last
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site.toml"]


def test_an_analytics_key_equal_to_the_api_key_is_refused_before_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from sitegen.cli import main

    monkeypatch.setenv("SITEGEN_API_KEY", "same-key-1234")
    monkeypatch.setenv("SITEGEN_ANALYTICS_KEY", "same-key-1234")
    # 127.0.0.1:9 (discard) refuses connections: a request would end in exit 5, not 2.
    text = VALID.replace("https://cas.example.com", "http://127.0.0.1:9")
    path = write(tmp_path, text + "[analytics]\nenabled = true\n")
    assert main(["build", "-c", str(path), "-o", str(tmp_path / "out")]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "SITEGEN_ANALYTICS_KEY" in last and "SITEGEN_API_KEY" in last
    assert "same-key-1234" not in last
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site.toml"]
    monkeypatch.setenv("SITEGEN_ANALYTICS_KEY", "beacon-key-5678")
    from sitegen.config import build_config, check_keys

    check_keys(build_config(str(path), False))  # a separate key passes


def test_base_url_overrides_site_url_for_one_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from sitegen.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SITEGEN_SITE_URL", raising=False)

    def sitemap() -> str:
        return (tmp_path / "out" / "sitemap.xml").read_text(encoding="utf-8")

    assert main(["build", "-q", "--demo", "-o", "out"]) == 0
    assert "http://localhost:8000/" in sitemap()
    given = "https://user.github.io/notes/"
    assert main(["build", "-q", "--demo", "--offline", "-o", "out", "--base-url", given]) == 0
    assert f"<loc>{given}" in sitemap() and "localhost" not in sitemap()
    assert "SITEGEN_SITE_URL" not in os.environ  # for that one build only
    monkeypatch.setenv("SITEGEN_SITE_URL", "https://pages.example.org/site/")
    assert main(["build", "-q", "--demo", "--offline", "-o", "out"]) == 0
    assert "<loc>https://pages.example.org/site/" in sitemap()
    monkeypatch.setenv("SITEGEN_SITE_URL", "not a url")
    assert main(["build", "-q", "--demo", "--offline", "-o", "out"]) == 2


def test_a_near_miss_of_a_known_key_names_the_key_meant(tmp_path: Path) -> None:
    path = tmp_path / "site.toml"
    path.write_text('[site]\ntitle = "T"\nurl = "https://t.test/"\nlangauge = "fr"\n'
                    '[api]\nurl = "https://a.test"\nworkspace = "65f0c0ffee0123456789abcd"\n'
                    '[image]\nenabled = false\n[xyz]\na = 1\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert "unknown key [image]: did you mean [images]?" in message
    assert "unknown key [site] langauge: did you mean [site] language?" in message
    assert "unknown key [xyz] (remove it or check its spelling)" in message
