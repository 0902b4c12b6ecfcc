"""What `sitegen init` tells CI to install, for each way sitegen can be installed (PEP 610)."""

from __future__ import annotations

from typing import Any

import pytest

from sitegen.errors import ConfigError
from sitegen.installsource import (
    CiRequirement,
    check_spec,
    ci_requirement,
    direct_url_info,
    requirement_for,
    requirements_text,
)

SHA = "a" * 64
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def index(version: str) -> str:
    assert version == "1.2.3"
    return SHA


def no_index(version: str) -> str:
    raise LookupError("ERROR: No matching distribution found for sitegen-cas==1.2.3")


def never(version: str) -> str:
    raise AssertionError("the index is asked only for an index install")


def test_an_index_install_is_pinned_by_version_and_the_wheels_sha256() -> None:
    found = requirement_for(None, "1.2.3", index)
    assert found.warning is None
    assert found.lines == ("--require-hashes", "--only-binary :all:",
                           f"sitegen-cas==1.2.3 \\\n    --hash=sha256:{SHA}")
    assert "sitegen-cas 1.2.3 from the package index" in requirements_text(found)


def test_a_version_the_index_does_not_have_is_never_named() -> None:
    found = requirement_for(None, "1.2.3", no_index)
    assert not found.installable and found.lines == ()
    assert found.warning is not None and "No matching distribution" in found.warning
    assert "--requirement SPEC" in found.warning and "\n" not in found.warning
    body = [line for line in requirements_text(found).splitlines() if not line.startswith("#")]
    assert body == []


def test_a_vcs_install_is_that_url_at_its_commit() -> None:
    info = {"url": "https://github.com/someone/sitegen", "vcs_info": {
        "vcs": "git", "requested_revision": "main", "commit_id": COMMIT}}
    found = requirement_for(info, "1.2.3", never)
    assert found.lines == (f"sitegen-cas @ git+https://github.com/someone/sitegen@{COMMIT}",)
    assert found.warning is None


def test_a_vcs_url_loses_its_credentials_and_keeps_its_subdirectory() -> None:
    info = {"url": "https://user:s3cret-token@example.com/r.git", "subdirectory": "py",
            "vcs_info": {"vcs": "git", "commit_id": COMMIT}}
    (line,) = requirement_for(info, "1.2.3", never).lines
    assert line == f"sitegen-cas @ git+https://example.com/r.git@{COMMIT}#subdirectory=py"
    ssh = {"url": "ssh://git@example.com/r.git", "vcs_info": {"vcs": "git", "commit_id": COMMIT}}
    assert requirement_for(ssh, "1.2.3", never).lines == (
        f"sitegen-cas @ git+ssh://git@example.com/r.git@{COMMIT}",)


@pytest.mark.parametrize("info", [
    {"url": "file:///home/me/sitegen", "dir_info": {"editable": True}},
    {"url": "file:///home/me/sitegen", "dir_info": {}},
    {"url": "file:///tmp/sitegen_cas-1.2.3-py3-none-any.whl",
     "archive_info": {"hashes": {"sha256": SHA}}},
    {"url": "file:///home/me/sitegen", "vcs_info": {"vcs": "git", "commit_id": COMMIT}},
])
def test_a_local_folder_or_file_gets_a_warning_and_no_requirement(info: dict[str, Any]) -> None:
    found = requirement_for(info, "1.2.3", never)
    assert not found.installable
    assert found.warning is not None and found.warning.startswith("CI cannot install")
    assert "--requirement SPEC" in found.warning and "\n" not in found.warning
    assert "file:///" in found.warning
    assert "until then the install step stops with an error" in requirements_text(found)


def test_an_archive_url_keeps_the_hash_pip_recorded() -> None:
    url = "https://example.com/releases/sitegen_cas-1.2.3-py3-none-any.whl"
    info = {"url": url, "archive_info": {"hash": f"sha256={SHA}", "hashes": {"sha256": SHA}}}
    assert requirement_for(info, "1.2.3", never).lines == (
        f"sitegen-cas @ {url} \\\n    --hash=sha256:{SHA}",)


def test_the_requirement_flag_wins_and_is_one_line() -> None:
    given = ci_requirement("sitegen-cas[deploy] @ git+https://example.com/r@abc")
    assert given == CiRequirement(("sitegen-cas[deploy] @ git+https://example.com/r@abc",),
                                  "--requirement")
    for bad in ("", "  ", "a\nb", "# nothing"):
        with pytest.raises(ConfigError, match="--requirement"):
            check_spec(bad)


@pytest.mark.parametrize("brk", ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85",
                                 "\u2028", "\u2029", "\t", "\x00"])
def test_a_requirement_with_any_line_break_pip_might_read_is_refused(brk: str) -> None:
    spec = f"sitegen-cas==1.2.3{brk}--index-url https://evil.example/simple"
    with pytest.raises(ConfigError, match="is not one requirement") as caught:
        check_spec(spec)
    assert "\n" not in str(caught.value)


def test_a_requirement_ending_in_a_line_continuation_is_refused() -> None:
    with pytest.raises(ConfigError, match="is not one requirement"):
        check_spec("sitegen-cas==1.2.3 \\")


@pytest.mark.parametrize("spec", ["sitegen", "sitegen==1.0", "Sitegen>=2", "sitegen[x]",
                                  "sitegen @ git+https://example.com/r@abc", "SiteGen"])
def test_the_unrelated_sitegen_project_is_refused_naming_sitegen_cas(spec: str) -> None:
    with pytest.raises(ConfigError, match="unrelated project `sitegen`.*sitegen-cas"):
        check_spec(spec)


@pytest.mark.parametrize("spec", ["sitegen-cas==1.2.3", "sitegen_cas==1.2.3",
                                  "sitegen-cas @ https://example.com/a.whl#sha256=ab"])
def test_sitegen_cas_in_any_spelling_is_accepted(spec: str) -> None:
    assert check_spec(f"  {spec}\n") == spec


def test_the_tests_own_sitegen_is_never_taken_for_an_index_install() -> None:
    """Under pytest the checkout's own sitegen_cas.egg-info comes first on sys.path, and it
    has no direct_url.json: only the installer's record counts, which says editable (or, in
    the release's run against the installed wheel, a local file): no index is ever asked."""
    info = direct_url_info()
    assert info is not None
    assert not requirement_for(info, "0.0.0", never).installable
