"""`sitegen init`: scaffold a site that builds at once and rebuilds itself on a schedule.

Role: lay out a new site folder: a commented `site.toml` (the same text as the
repository's example, from package data), `templates/README.md`, `.gitignore`, a CI
workflow (GitHub Actions or GitLab CI) whose cron, cache and output folder come from the
site's configuration, and beside it the requirements file the CI installs sitegen from
(`installsource` says what: exactly the sitegen that runs `init`). Planning the files is
pure; `scaffold` only creates files that do not exist, in a folder
`sitegen.folders.check_init` accepts (not the filesystem root, the home folder, nor a
folder of other files), and `upgrade_ci` rewrites only the requirements file. It must
never overwrite or delete another file, never write outside the target folder, and never
make a request or read a key itself.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import shlex
import tomllib
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Literal

from sitegen.errors import ConfigError
from sitegen.folders import check_init
from sitegen.installsource import CiRequirement, ci_requirement, requirements_text
from sitegen.logs import is_quiet, say

log = logging.getLogger("sitegen.scaffold")

CiKind = Literal["github", "gitlab"]

CI_PATHS: dict[CiKind, str] = {
    "github": ".github/workflows/sitegen.yml",
    "gitlab": ".gitlab-ci.yml",
}
#: The requirements file beside each CI file: what it installs sitegen from.
REQUIREMENTS_PATHS: dict[CiKind, str] = {
    "github": ".github/workflows/sitegen-requirements.txt",
    "gitlab": "sitegen-requirements.txt",
}
_CI_TEMPLATES: dict[CiKind, str] = {"github": "github-workflow.yml", "gitlab": "gitlab-ci.yml"}

#: Every action the GitHub workflow uses, pinned to the full commit of its current release
#: (the tag in the comment). Checked against several public repositories that pin the same
#: release; bump them together, on purpose.
ACTION_PINS: dict[str, tuple[str, str, str]] = {
    "CHECKOUT": ("actions/checkout", "3d3c42e5aac5ba805825da76410c181273ba90b1", "v7.0.1"),
    "SETUP_PYTHON": ("actions/setup-python", "5fda3b95a4ea91299a34e894583c3862153e4b97",
                     "v7.0.0"),
    "CACHE": ("actions/cache", "55cc8345863c7cc4c66a329aec7e433d2d1c52a9", "v6.1.0"),
    "CONFIGURE_PAGES": ("actions/configure-pages", "45bfe0192ca1faeb007ade9deae92b16b8254a0d",
                        "v6.0.0"),
    "UPLOAD_ARTIFACT": ("actions/upload-artifact", "043fb46d1a93c77aae656e7c1c64a875d1fc6a0a",
                        "v7.0.1"),
    "UPLOAD_PAGES_ARTIFACT": ("actions/upload-pages-artifact",
                              "fc324d3547104276b827a68afc52ff2a11cc49c9", "v5.0.0"),
    "DEPLOY_PAGES": ("actions/deploy-pages", "cd2ce8fcbc39b97be8ca5fce6e763baed58fa128",
                     "v5.0.0"),
}

DEFAULT_SCHEDULE = "0 6 * * *"
_CRON_FIELD = re.compile(r"^[0-9A-Za-z*/,\-]+$")
_SIMPLE_PATH = re.compile(r"^[A-Za-z0-9._\-]+(/[A-Za-z0-9._\-]+)*/?$")


def template_text(name: str) -> str:
    """The text of one file of the `sitegen.scaffold_templates` package data."""
    return resources.files("sitegen.scaffold_templates").joinpath(name).read_text("utf-8")


def example_site_toml() -> str:
    """The commented example `site.toml`: what `init` writes and the repository ships."""
    return template_text("site.toml")


@dataclass(frozen=True)
class SiteSettings:
    """What the CI workflow and .gitignore take from `site.toml`."""

    schedule: str = DEFAULT_SCHEDULE
    output: str = "_site"
    cache_dir: str = ".sitegen"


@dataclass(frozen=True)
class PlannedFile:
    """One file `init` would create: a POSIX path relative to the site folder, and its text."""

    path: PurePosixPath
    text: str


@dataclass(frozen=True)
class ScaffoldResult:
    """What `scaffold` did: the relative paths created and those left alone."""

    root: Path
    settings: SiteSettings
    created: tuple[str, ...]
    skipped: tuple[str, ...]


def check_schedule(schedule: str) -> str:
    """A five-field cron expression, normalised to single spaces; ConfigError otherwise."""
    fields = schedule.split()
    if len(fields) != 5 or not all(_CRON_FIELD.match(field) for field in fields):
        raise ConfigError(
            f"[api] schedule {schedule!r} is not a five-field cron expression: "
            f"fix it in site.toml, e.g. schedule = \"{DEFAULT_SCHEDULE}\""
        )
    return " ".join(fields)


def _relative_dir(value: object, key: str, default: str) -> str:
    if not isinstance(value, str):
        return default
    if not _SIMPLE_PATH.match(value) or {".", ".."} & set(value.rstrip("/").split("/")):
        log.warning(
            "%s %r is not a plain relative folder, so the CI workflow uses %r: edit it by hand",
            key, value, default)
        return default
    return value.rstrip("/")


def settings_from_toml(text: str) -> SiteSettings:
    """Read the workflow's settings from an existing site.toml, tolerant of anything partial.

    Only a malformed [api] schedule is an error, since the workflow would not run.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        log.warning("the existing site.toml is not valid TOML, so the CI workflow uses defaults")
        return SiteSettings()
    site = data.get("site")
    site = site if isinstance(site, dict) else {}
    api = data.get("api")
    api = api if isinstance(api, dict) else {}
    schedule = api.get("schedule", DEFAULT_SCHEDULE)
    return SiteSettings(
        schedule=check_schedule(schedule if isinstance(schedule, str) else str(schedule)),
        output=_relative_dir(site.get("output"), "[site] output", "_site"),
        cache_dir=_relative_dir(api.get("cache_dir"), "[api] cache_dir", ".sitegen"),
    )


def render_ci(ci: CiKind, settings: SiteSettings) -> str:
    """The CI workflow text for *ci*, with the site's schedule, cache, output and the
    requirements file it installs sitegen from."""
    text = template_text(_CI_TEMPLATES[ci])
    values = {
        "__SITEGEN_SCHEDULE__": check_schedule(settings.schedule),
        # Quoted (a JSON string is a YAML double-quoted scalar), so a folder named `null`,
        # `true` or `1e3` stays a string in the workflow.
        "__SITEGEN_OUTPUT__": json.dumps(settings.output),
        "__SITEGEN_CACHE__": json.dumps(settings.cache_dir),
        "__SITEGEN_REQUIREMENTS__": REQUIREMENTS_PATHS[ci],
        **{f"__PIN_{name}__": f"{sha} # {tag}" for name, (_, sha, tag) in ACTION_PINS.items()},
    }
    for token, value in values.items():
        text = text.replace(token, value)
    return text


def render_gitignore(ci: CiKind, settings: SiteSettings) -> str:
    """`.gitignore` for a site: its output (and the writer's siblings), cache and report."""
    lines = [
        "# sitegen: generated output, the content cache and build reports",
        f"/{settings.output}/",
        f"/.{settings.output}.sitegen-*",
        f"/.{settings.output}.git-set-aside-*/",
        f"/{settings.cache_dir}/",
        "/build-report.json",
    ]
    if ci == "gitlab":
        lines.append("/public/")
    lines += ["", "# Python", "__pycache__/", ".venv/", ""]
    return "\n".join(lines)


def plan(ci: CiKind, settings: SiteSettings, requirement: CiRequirement,
         site_toml: str | None = None) -> list[PlannedFile]:
    """Every file of a new site, in the order `init` reports them."""
    return [
        PlannedFile(PurePosixPath("site.toml"),
                    site_toml if site_toml is not None else example_site_toml()),
        PlannedFile(PurePosixPath("templates/README.md"), template_text("templates-README.md")),
        PlannedFile(PurePosixPath(".gitignore"), render_gitignore(ci, settings)),
        PlannedFile(PurePosixPath(CI_PATHS[ci]), render_ci(ci, settings)),
        PlannedFile(PurePosixPath(REQUIREMENTS_PATHS[ci]), requirements_text(requirement)),
    ]


def scaffold(directory: Path, ci: CiKind = "github",
             requirement: CiRequirement | None = None,
             schedule: str | None = None) -> ScaffoldResult:
    """Create the site's files under *directory* (created if missing); never overwrite one.

    When a site.toml already exists there, the workflow follows its schedule, output
    and cache folder, so re-running `init` to add a CI file keeps them consistent.
    *requirement* is what the CI installs (default: nothing, with a note to fill it in).
    """
    check_folder(directory)
    existing = directory / "site.toml"
    settings = (
        settings_from_toml(existing.read_text("utf-8", errors="replace"))
        if existing.is_file() else SiteSettings(schedule=check_schedule(_example_schedule()))
    )
    if schedule is not None:  # (the agents' schedules: `sitegen.schedule_cli.stored_proposal`)
        settings = replace(settings, schedule=check_schedule(schedule))
    files = plan(ci, settings, requirement or CiRequirement((), "not given"))
    created: list[str] = []
    skipped: list[str] = []
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for planned in files:
            target = directory.joinpath(*planned.path.parts)
            _check_inside(directory, target, str(planned.path))
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                with target.open("x", encoding="utf-8", newline="\n") as handle:
                    handle.write(planned.text)
            except FileExistsError:
                skipped.append(str(planned.path))
                continue
            created.append(str(planned.path))
    except OSError as error:
        raise ConfigError(
            f"cannot create the site in {directory}: {error.strerror or error}: "
            "check the folder's permissions or pick another DIR") from None
    return ScaffoldResult(directory, settings, tuple(created), tuple(skipped))


def check_folder(directory: Path) -> None:
    """Refuse a *directory* init must not fill: a file, `/`, `~`, a folder of other files."""
    if directory.exists() and not directory.is_dir():
        raise ConfigError(f"{directory} exists and is not a folder: pick another DIR for init")
    check_init(directory)  # (`sitegen.folders`)


def _example_schedule() -> str:
    data = tomllib.loads(example_site_toml())
    api = data["api"]
    assert isinstance(api, dict)
    return str(api["schedule"])


def _git_root(directory: Path) -> Path | None:
    for folder in [directory, *directory.parents]:
        if (folder / ".git").exists():
            return folder
    return None


def _skip_line(path: str, result: ScaffoldResult, ci: CiKind) -> str:
    line = f"skipped {path}: it already exists and was left as it was"
    if path == ".gitignore":
        text = (result.root / path).read_text("utf-8", errors="replace")
        wanted = [result.settings.output, result.settings.cache_dir]
        wanted += ["public"] if ci == "gitlab" else []
        missing = [name for name in wanted if name not in text]
        if missing:
            line += "; add " + " and ".join(f"/{name}/" for name in missing) + " to it"
    return line


def report_lines(result: ScaffoldResult, ci: CiKind, shown_dir: str) -> list[str]:
    """What `init` prints: one line per file created or skipped, then three next steps."""
    lines = [f"created {path}" for path in result.created]
    lines += [_skip_line(path, result, ci) for path in result.skipped]
    enter = "" if shown_dir in ("", ".") else f"cd {shlex.quote(shown_dir)} && "
    cron = result.settings.schedule
    last = (
        f"  3. add the secrets SITEGEN_API_KEY and SITEGEN_CACHE_KEY (any long random "
        f"string: it seals the content cache) (Settings > Secrets and variables > Actions) "
        f"and push: the site rebuilds at cron '{cron}' (UTC)"
        if ci == "github" else
        f"  3. add the CI/CD variables SITEGEN_API_KEY and SITEGEN_CACHE_KEY (any long random "
        f"string: it seals the content cache) and a pipeline schedule '{cron}' "
        "(see .gitlab-ci.yml), then push"
    )
    return [
        *lines,
        "next steps:",
        f"  1. preview it now with demo content: {enter}sitegen serve --demo",
        "  2. edit site.toml: [site] title and url, [api] url and workspace",
        last,
    ]


def _check_inside(directory: Path, target: Path, relative: str) -> None:
    """Refuse a *target* whose folder leads out of *directory* through a symbolic link (a
    link planted there would make `init` write a file elsewhere)."""
    if not target.parent.resolve().is_relative_to(directory.resolve()):
        raise ConfigError(
            f"the folder of {relative} in {directory} is a symbolic link to "
            f"{target.parent.resolve()}, outside the site, so init will not write there: "
            "remove the link and run `sitegen init` again")


def _replace_file(target: Path, text: str) -> None:
    """Write *text* to a new file beside *target* and move it over *target*, so a hard link
    there is replaced rather than written through."""
    temporary = target.with_name(f".{target.name}.sitegen-new")
    temporary.unlink(missing_ok=True)
    try:
        with temporary.open("x", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


def upgrade_ci(directory: Path, ci: CiKind, requirement: CiRequirement) -> str:
    """Rewrite the requirements file beside the CI file, the one file `init` replaces;
    a requirement CI cannot install leaves an existing file as it is. Returns the line
    `init --upgrade-ci` prints."""
    relative = REQUIREMENTS_PATHS[ci]
    target = directory.joinpath(*PurePosixPath(relative).parts)
    workflow = directory.joinpath(*PurePosixPath(CI_PATHS[ci]).parts)
    if workflow.is_file() and relative not in workflow.read_text("utf-8", errors="replace"):
        log.warning("%s does not install from %s: run `sitegen init` in a new folder and copy "
                    "its install step", CI_PATHS[ci], relative)
    if not requirement.installable and target.is_file():
        return f"kept {relative}: CI cannot install this sitegen (see the warning)"
    try:
        _check_inside(directory, target, relative)
        if target.is_symlink():
            raise ConfigError(
                f"{relative} in {directory} is a symbolic link (to {target.resolve()}), so "
                "init will not write through it: remove the link and run "
                "`sitegen init --upgrade-ci` again")
        target.parent.mkdir(parents=True, exist_ok=True)
        _replace_file(target, requirements_text(requirement))
    except OSError as error:
        raise ConfigError(
            f"cannot write {target}: {error.strerror or error}: "
            "check the folder's permissions") from None
    return f"updated {relative}: CI installs {requirement.source}"


def init_command(options: argparse.Namespace) -> int:
    """`sitegen init [DIR] [--ci github|gitlab] [--requirement SPEC] [--upgrade-ci]`:
    scaffold (or rewrite only the CI's requirements file), report, and return 0."""
    shown = str(options.directory)
    ci: CiKind = "gitlab" if options.ci == "gitlab" else "github"
    directory = Path(shown)
    if not options.upgrade_ci:
        check_folder(directory)  # (before saying anything about what CI installs)
    requirement = ci_requirement(options.requirement)
    if requirement.warning:
        log.warning("%s", requirement.warning)
    if options.upgrade_ci:
        say(upgrade_ci(directory, ci, requirement), is_quiet(options))
        return 0
    from sitegen.schedule_cli import stored_proposal

    proposal = stored_proposal(directory / "site.toml")
    result = scaffold(directory, ci, requirement,
                      proposal.cron if proposal is not None else None)
    for line in report_lines(result, ci, shown):
        say(line, is_quiet(options))
    if proposal is not None:
        say(f"the CI's cron '{proposal.cron}' follows the agents' schedules:", is_quiet(options))
        for line in proposal.why:
            say(f"  {line}", is_quiet(options))
    else:
        say("once content is fetched, `sitegen schedule` proposes a cron from the agents' "
            "schedules, so the site rebuilds shortly after they publish", is_quiet(options))
    root = _git_root(directory.resolve())
    if root is not None and root != directory.resolve():
        log.warning(
            "%s is inside the git repository at %s, but CI reads %s only at the repository "
            "root: move it there and run the build from this folder", shown, root, CI_PATHS[ci])
    return 0
