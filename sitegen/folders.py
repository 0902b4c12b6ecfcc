"""Which folders sitegen may fill: the output of a build, the target of `sitegen init`.

Role: one rule, checked before anything is written, for each folder a command would
fill. Never the filesystem root or the home folder itself; for an output, never the site
folder or a folder holding it, never one of the site's own folders (its store, `static/`,
`pages/`, `templates/`, `themes/`) nor a `.git` folder or anything inside one, and never
another site's or repository's sources: a folder holding `site.toml`, or `.git` unless it
is an output sitegen built (its manifest is there; the build then removes that `.git`, as it
removes everything it did not write, so a repository's checkout is never an output: a
publishing branch is committed from a copy of the output). `init` fills a new or empty
folder, a site (to add what is missing), or what a fresh repository holds (hidden files,
README, LICENSE). Each refusal is a `ConfigError` (exit 2) naming the folder and the fix.
It must never create, write or remove anything.
"""

from __future__ import annotations

import os
from pathlib import Path

from sitegen.errors import ConfigError
from sitegen.outputnames import MANIFEST_NAME

__all__ = ["check_init", "check_output"]

#: The site's own folders an output must not be (or be inside).
SOURCE_FOLDERS = ("static", "pages", "templates", "themes")
#: What a repository made on a forge holds at first, beside hidden files (`init` may add to it).
_FRESH_REPOSITORY = ("readme", "license", "licence", "copying")
_OUTPUT_FIX = "choose a dedicated folder such as _site (-o or [site] output)"


def _real(folder: Path) -> Path:
    return Path(os.path.realpath(folder))


def _special(folder: Path) -> str | None:
    """'the filesystem root' or 'your home folder' when *folder* (real) is one of them."""
    if folder.parent == folder:
        return "the filesystem root"
    try:
        home = _real(Path.home())
    except RuntimeError:  # (no home folder known)
        return None
    if folder == home:
        return "your home folder"
    return None


def _entries(folder: Path) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as error:
        raise ConfigError(f"cannot read the folder {folder} ({error.strerror}): check its "
                          "permissions or pick another folder") from None


def check_output(output: Path, *, site: Path | None = None, cache: Path | None = None) -> None:
    """Refuse *output* as a build's output folder (see the module docstring).

    *site* is the folder holding site.toml and *cache* the store's folder (the build's
    check, before anything is written); without them (the writer's own check, the last
    line) only the filesystem root, the home folder and `.git` folders are refused.
    """
    output = _real(output)
    special = _special(output)
    if special is not None:
        raise ConfigError(f"the output folder {output} is {special}, which a build would fill "
                          f"with the site: {_OUTPUT_FIX}")
    if ".git" in output.parts:
        raise ConfigError(f"the output folder {output} is inside a git repository's .git "
                          f"folder: {_OUTPUT_FIX}")
    if output.exists() and not output.is_dir():
        raise ConfigError(f"the output {output} is a file, not a folder: {_OUTPUT_FIX}")
    if site is not None:
        root = _real(site)
        if output == root or output in root.parents:
            raise ConfigError(f"the output folder {output} holds the site's own files "
                              f"(site.toml and its folders): {_OUTPUT_FIX}")
        owned = [root / name for name in SOURCE_FOLDERS]
        store = _real(cache) if cache is not None else None
        if any(output.is_relative_to(folder) for folder in owned) or (
                store is not None and (output == store or output in store.parents)):
            raise ConfigError(f"the output folder {output} is one of the site's own folders "
                              f"(static, pages, templates, themes, or its store's): "
                              f"{_OUTPUT_FIX}")
    if site is None:
        return
    entries = _entries(output)
    if "site.toml" in entries:
        raise ConfigError(f"the output folder {output} holds a site.toml, the sources of a "
                          f"site: {_OUTPUT_FIX}")
    if ".git" in entries and MANIFEST_NAME not in entries:
        raise ConfigError(f"the output folder {output} holds .git, a git repository a build "
                          f"would remove with all else it did not write: {_OUTPUT_FIX}, and "
                          "copy it into your checkout of a publishing branch (rsync -a "
                          "--delete --exclude .git _site/ gh-pages/)")


def check_init(directory: Path) -> None:
    """Refuse *directory* as the folder `sitegen init` scaffolds into."""
    real = _real(directory)
    special = _special(real)
    if special is not None:
        raise ConfigError(f"{real} is {special}: give sitegen init a folder of its own, "
                          "such as sitegen init my-site")
    entries = _entries(real)
    if "site.toml" in entries:
        return  # a site: init adds what is missing
    other = [name for name in entries if not name.startswith(".")
             and not name.lower().startswith(_FRESH_REPOSITORY)]
    if other:
        more = ", …" if len(other) > 1 else ""
        raise ConfigError(f"{real} already holds files that are not a site's ({other[0]}"
                          f"{more}): run sitegen init in a new or empty folder, such as "
                          f"{directory / 'site'}")
