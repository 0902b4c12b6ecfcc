"""What a site's CI installs: exactly the sitegen that `sitegen init` runs from (PEP 610).

Role: read how this sitegen was installed (the distribution's `direct_url.json`, PEP 610)
and turn it into the lines of the requirements file the scaffolded CI installs:

- from the package index (no `direct_url.json`): `sitegen-cas==X.Y.Z` with
  `--require-hashes` and the sha256 of that release's wheel, which pip finds on the index
  the user's pip is configured for (so a version the index does not have is never named);
- from a VCS URL: that URL at the exact commit that was installed;
- from an archive URL: that URL with the sha256 pip recorded;
- from a local folder, an editable checkout or a local file: nothing CI could install, and a
  one-line warning naming `--requirement SPEC`.

`--requirement SPEC` always wins. This module must never write a file, read a key, put a
URL's credentials into a requirement, or name a release it did not find on the index. Its
one outside request is pip's own (`pip download`), and only for an index install.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import distributions
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from sitegen import DIST_NAME, installed_version
from sitegen.errors import ConfigError

#: What the requirements file says when CI has nothing it could install.
EXAMPLE_SPEC = f"{DIST_NAME} @ git+https://github.com/OWNER/REPOSITORY@COMMIT"


@dataclass(frozen=True)
class CiRequirement:
    """The requirements file's lines (empty: nothing installable), where they came from,
    and the one-line warning `init` logs when CI cannot install this sitegen."""

    lines: tuple[str, ...]
    source: str
    warning: str | None = None

    @property
    def installable(self) -> bool:
        return bool(self.lines)


def direct_url_info(name: str = DIST_NAME) -> dict[str, Any] | None:
    """The running sitegen's `direct_url.json`, or None when an installer put it in place
    without one (an index install).

    Only what an installer recorded (an `INSTALLER` file) counts: a source tree's
    `.egg-info` found first on `sys.path`, or an installed copy other than the one
    running, is a local folder.
    """
    import sitegen

    running = Path(sitegen.__file__).resolve()
    installed = [dist for dist in distributions(name=name)
                 if (dist.read_text("INSTALLER") or "").strip()]
    for dist in installed:
        text = dist.read_text("direct_url.json")
        if text:
            try:
                data = json.loads(text)
            except ValueError:
                continue
            if isinstance(data, dict):
                return data
        elif Path(str(dist.locate_file("sitegen/__init__.py"))).resolve() == running:
            return None
    return {"url": running.parent.parent.as_uri(), "dir_info": {}}


def _without_credentials(url: str) -> str:
    """*url* with any user and password removed (`git@` of an SSH URL is kept, as PEP 610)."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    if parts.username == "git" and parts.password is None:
        host = f"git@{host}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def _local(what: str) -> CiRequirement:
    return CiRequirement((), what, (
        f"CI cannot install {what}: give `sitegen init --requirement SPEC` what it should "
        f"install instead (e.g. \"{EXAMPLE_SPEC}\"), or edit the requirements file it wrote"))


def _subdirectory(info: dict[str, Any]) -> str:
    sub = info.get("subdirectory")
    return f"#subdirectory={sub}" if isinstance(sub, str) and sub else ""


def requirement_for(
    info: dict[str, Any] | None, version: str,
    index_sha256: Callable[[str], str],
) -> CiRequirement:
    """The CI requirement for an install described by *info* (`direct_url.json` or None).

    *index_sha256(version)* returns the sha256 of that release's wheel on the package index,
    or raises LookupError with the reason in words; it is called only for an index install.
    """
    if info is None:
        try:
            sha = index_sha256(version)
        except LookupError as error:
            return CiRequirement((), f"{DIST_NAME} {version} from the package index", (
                f"{DIST_NAME} {version} was not found as a wheel on the package index ({error})"
                f", so CI gets no requirement: give `sitegen init --requirement SPEC`, or run "
                f"`sitegen init --upgrade-ci` where the index answers"))
        return CiRequirement(
            ("--require-hashes", "--only-binary :all:",
             f"{DIST_NAME}=={version} \\\n    --hash=sha256:{sha}"),
            f"{DIST_NAME} {version} from the package index")
    url = info.get("url")
    if not isinstance(url, str) or not url:
        return _local("a sitegen whose origin its direct_url.json does not name")
    url = _without_credentials(url)
    scheme = urlsplit(url).scheme
    if "dir_info" in info or scheme == "file":
        editable = isinstance(info.get("dir_info"), dict) and info["dir_info"].get("editable")
        kind = "an editable checkout" if editable else "a local folder or file"
        return _local(f"{kind} ({url})")
    vcs = info.get("vcs_info")
    if isinstance(vcs, dict):
        commit: object = vcs.get("commit_id")
        tool: object = vcs.get("vcs")
        if not isinstance(commit, str) or not isinstance(tool, str):
            return _local(f"a {tool or 'VCS'} checkout without a recorded commit ({url})")
        return CiRequirement(
            (f"{DIST_NAME} @ {tool}+{url}@{commit}{_subdirectory(info)}",),
            f"{DIST_NAME} from {url} at commit {commit}")
    archive = info.get("archive_info")
    hashes = archive.get("hashes") if isinstance(archive, dict) else None
    recorded = hashes.get("sha256") if isinstance(hashes, dict) else None
    if isinstance(recorded, str):
        return CiRequirement((f"{DIST_NAME} @ {url} \\\n    --hash=sha256:{recorded}",),
                             f"{DIST_NAME} from {url}")
    return CiRequirement((f"{DIST_NAME} @ {url}",), f"{DIST_NAME} from {url}")


def index_wheel_sha256(version: str) -> str:
    """The sha256 of `sitegen-cas==version`'s wheel as pip, configured as the user has it
    (index URL, find-links, certificates), downloads it; LookupError when it cannot."""
    with tempfile.TemporaryDirectory(prefix="sitegen-index-") as folder:
        try:
            done = subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                 "--disable-pip-version-check", "-q", "--dest", folder,
                 f"{DIST_NAME}=={version}"],
                capture_output=True, text=True, timeout=300, check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise LookupError(f"pip could not run: {error}") from None
        wheels = sorted(Path(folder).glob("*.whl"))
        if done.returncode != 0 or not wheels:
            lines = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]
            raise LookupError(lines[-1] if lines else "pip download failed")
        return hashlib.sha256(wheels[0].read_bytes()).hexdigest()


#: The characters a `--requirement SPEC` may hold: printable ASCII and the space. A
#: whitelist, since pip and `str.splitlines` break lines at more characters than anyone
#: lists (`\x0b`, `\x0c`, `\x1c`-`\x1e`, `\x85`, `\u2028`, ...).
_SPEC_CHARACTERS = re.compile(r"[\x20-\x7e]+")

#: A requirement's project name at its start (PEP 508), compared normalised (PEP 503).
_PROJECT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")

#: The unrelated project on the package index whose name sitegen's import name shares.
_NOT_SITEGEN = "sitegen"


def check_spec(spec: str) -> str:
    """A `--requirement SPEC` as one requirements-file line; ConfigError when it cannot be."""
    value = spec.strip()
    if (not value or not _SPEC_CHARACTERS.fullmatch(value) or value.startswith("#")
            or value.endswith("\\")):
        raise ConfigError(
            f"--requirement {spec!r} is not one requirement: give one line of printable "
            f"ASCII characters, e.g. --requirement \"{EXAMPLE_SPEC}\"")
    name = _PROJECT_NAME.match(value)
    if name and re.sub(r"[-_.]+", "-", name.group()).lower() == _NOT_SITEGEN:
        raise ConfigError(
            f"--requirement {spec!r} names the unrelated project `sitegen` on the package "
            f"index: this sitegen is published as `{DIST_NAME}`, e.g. --requirement "
            f"\"{EXAMPLE_SPEC}\"")
    return value


def ci_requirement(spec: str | None = None) -> CiRequirement:
    """What CI should install: *spec* when given, else this sitegen as it was installed."""
    if spec is not None:
        return CiRequirement((check_spec(spec),), "--requirement")
    return requirement_for(direct_url_info(), installed_version(), index_wheel_sha256)


def requirements_text(requirement: CiRequirement) -> str:
    """The requirements file the scaffolded CI installs with `pip install --no-deps -r`."""
    head = [
        "# What the site's CI installs: the sitegen this site was made and tested with",
        f"# ({requirement.source}). `sitegen init --upgrade-ci` rewrites this file from the",
        "# sitegen you run now; `--requirement SPEC` names another. The CI installs this with",
        "# --no-deps, then sitegen's own dependencies.",
    ]
    if not requirement.installable:
        head += ["#", "# CI cannot install a local folder or file: write what it should install",
                 f"# here, e.g. {EXAMPLE_SPEC}",
                 "# (until then the install step stops with an error)."]
    return "\n".join([*head, *requirement.lines, ""])
