"""The owner's source folders and their boundary: what sitegen reads stays inside them.

Role: walk one source folder of the site (`static/`, `pages/`, `templates/`,
`themes/<name>/`), giving each file's relative path in name order, and refuse (a
configuration error naming the link and the fix) a symbolic link that leads out of that
folder: one to `/etc/passwd`, `~/.aws/credentials`, or even to the site's own `.env`,
`.git/config` or `.sitegen/` store would otherwise be published or rendered into pages.
A link that stays inside its folder (an alias of a file beside it) is followed; the
folder itself may be a link to a folder inside the site folder (not the site folder
itself nor one holding it). A link back into a folder that holds it is refused too.
It must never read a file's bytes, never write, and never descend into a link it has
not checked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from sitegen.errors import ConfigError

__all__ = ["source_files"]


def _never(rel: str) -> bool:
    return False


def source_files(root: Path, name: str, *, skip: Callable[[str], bool] = _never,
                 ) -> Iterator[tuple[str, Path]]:
    """(path relative to *root*/*name*, path) of every file of that folder, depth first.

    *skip* leaves an entry out (and, for a folder, all it holds) by its relative path
    before it is looked at. Nothing when the folder does not exist.
    """
    folder = root / name
    if not folder.is_dir():
        if folder.is_symlink():  # a dangling or looping link: say so rather than ignore it
            raise ConfigError(f"{name} is a symbolic link that leads nowhere: make {name} a "
                              "folder of the site")
        return
    site, top = root.resolve(), folder.resolve()
    if not top.is_relative_to(site) or top == site:
        raise ConfigError(f"{name} is a symbolic link to {top}, outside the site folder "
                          f"{site}: make {name} a real folder of the site (copy the files in)")
    yield from _walk(folder, name, "", top, frozenset({top}), skip)


def _walk(folder: Path, name: str, prefix: str, top: Path, chain: frozenset[Path],
          skip: Callable[[str], bool]) -> Iterator[tuple[str, Path]]:
    try:
        children = sorted(folder.iterdir(), key=lambda child: child.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as error:
        raise ConfigError(f"cannot read {name}/{prefix} ({error.strerror}): check its "
                          "permissions") from None
    for child in children:
        rel = prefix + child.name
        if skip(rel):
            continue
        if child.is_symlink():
            try:
                target = child.resolve(strict=True)
            except (OSError, RuntimeError):
                continue  # dangling or looping: there is nothing to publish
            if not target.is_relative_to(top):
                raise ConfigError(
                    f"{name}/{rel} is a symbolic link to {target}, outside {name}/: put a "
                    f"copy of it in {name}/ instead (sitegen never publishes a file from "
                    "outside the site's own folders)")
            if child.is_dir() and target in chain:
                raise ConfigError(f"{name}/{rel} is a symbolic link to a folder that holds "
                                  "it, which never ends: remove the link")
        if child.is_dir():
            yield from _walk(child, name, rel + "/", top, chain | {child.resolve()}, skip)
        elif child.is_file():
            yield rel, child
