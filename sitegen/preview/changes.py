"""Classifying saved files: which rebuild a batch of changed paths needs.

Role: a pure function from a batch of changed paths (as the watcher saw them) to a `ChangeSet`:
`config` (site.toml: reload the configuration), `template` (anything in `templates/`, `pages/`
or in the active theme's folder: re-render without fetching), `static` (the active theme's
`static/` or the site's own `static/`: copy files; a CSS-only batch lets pages swap
stylesheets without reloading) or
`ignored` (editor droppings, the output and cache folders, anything the build does not read).
It must never touch the file system: it only compares paths.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from sitegen.config import Config

# Files editors and tools write beside the real one while saving.
_TEMP_SUFFIXES = (".swp", ".swo", ".swx", ".swpx", ".tmp", ".temp", ".bak", ".kate-swp", ".crswap",
                  "~", "___jb_tmp___", "___jb_old___", ".part", ".orig")
_TEMP_PREFIXES = (".#", ".goutputstream-", "#", "~$")
_TEMP_NAMES = frozenset({"4913", ".DS_Store", "Thumbs.db", "desktop.ini"})
_NEVER_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv"})


class ChangeKind(StrEnum):
    CONFIG = "config"
    TEMPLATE = "template"
    STATIC = "static"
    IGNORED = "ignored"


@dataclass(frozen=True)
class WatchPlan:
    """What the preview watches for one configuration: absolute, resolved paths."""

    config_file: Path
    root: Path
    theme: str = "default"
    excluded: tuple[Path, ...] = ()
    extra_static: tuple[Path, ...] = ()

    @property
    def templates_dir(self) -> Path:
        return self.root / "templates"

    @property
    def themes_dir(self) -> Path:
        return self.root / "themes"

    @property
    def pages_dir(self) -> Path:
        return self.root / "pages"

    @property
    def static_dir(self) -> Path:
        return self.root / "static"

    def watched_dirs(self) -> tuple[Path, ...]:
        """The folders watched recursively (whether or not they exist yet)."""
        return (self.templates_dir, self.themes_dir, self.pages_dir, self.static_dir,
                *self.extra_static)


def plan_for(config: Config, config_file: Path, excluded: Iterable[Path] = ()) -> WatchPlan:
    """The watch plan of a configuration: its site folder, theme, and folders never to watch."""
    root = config.root.resolve()
    never = {config.cache_path, config.output_path(), *(p.resolve() for p in excluded)}
    never = {p for p in never if not root.is_relative_to(p)}  # `output = "."` excludes nothing
    return WatchPlan(config_file=config_file.resolve(), root=root, theme=config.site.theme,
                     excluded=tuple(sorted(never)))


def _is_temp(name: str) -> bool:
    return (name in _TEMP_NAMES or name.endswith(_TEMP_SUFFIXES)
            or name.startswith(_TEMP_PREFIXES))


def _inside(path: Path, folders: Iterable[Path]) -> bool:
    """*path* is one of *folders* or inside one."""
    return any(path == folder or path.is_relative_to(folder) for folder in folders)


def _theme_kind(path: Path, plan: WatchPlan) -> ChangeKind:
    """The kind of a path in the site's `themes/` folder (or that folder itself)."""
    if path == plan.themes_dir:
        return ChangeKind.TEMPLATE
    inside = path.relative_to(plan.themes_dir).parts
    if inside[0] != plan.theme:
        return ChangeKind.IGNORED  # a theme this site does not use
    if len(inside) > 1 and inside[1] in ("static", "assets"):
        return ChangeKind.STATIC
    return ChangeKind.TEMPLATE


def classify_path(path: Path, plan: WatchPlan) -> ChangeKind:
    """The kind of one changed path under *plan* (absolute paths)."""
    if path == plan.config_file:
        return ChangeKind.CONFIG
    if _is_temp(path.name) or any(part in _NEVER_DIRS for part in path.parts):
        return ChangeKind.IGNORED
    if _inside(path, plan.excluded):
        return ChangeKind.IGNORED
    if _inside(path, (*plan.extra_static, plan.static_dir)):
        return ChangeKind.STATIC  # the owner's own files, copied as they are
    if _inside(path, (plan.templates_dir, plan.pages_dir)):
        return ChangeKind.TEMPLATE  # a template or an own page: re-render, no fetch
    if _inside(path, (plan.themes_dir,)):
        return _theme_kind(path, plan)
    return ChangeKind.IGNORED


@dataclass(frozen=True)
class ChangeSet:
    """One debounced batch of changes, sorted by kind."""

    config: tuple[Path, ...] = ()
    templates: tuple[Path, ...] = ()
    static: tuple[Path, ...] = ()
    ignored: tuple[Path, ...] = field(default=(), compare=False)

    @property
    def kinds(self) -> frozenset[ChangeKind]:
        found = {ChangeKind.CONFIG: self.config, ChangeKind.TEMPLATE: self.templates,
                 ChangeKind.STATIC: self.static}
        return frozenset(kind for kind, paths in found.items() if paths)

    @property
    def is_empty(self) -> bool:
        """Nothing the build reads changed."""
        return not self.kinds

    @property
    def css_only(self) -> bool:
        """Only stylesheets changed: open pages can swap them instead of reloading."""
        return (not self.config and not self.templates and bool(self.static)
                and all(p.suffix.lower() == ".css" for p in self.static))

    def describe(self) -> str:
        """`template change`, `CSS change`, `config and template change`, ..."""
        names = [name for name, paths in (("config", self.config), ("template", self.templates))
                 if paths]
        if self.static:
            names.append("CSS" if self.css_only else "static")
        return " and ".join(names) + " change" if names else "no change"


def classify_changes(paths: Iterable[Path], plan: WatchPlan) -> ChangeSet:
    """Sort a batch of changed paths into config, template, static and ignored."""
    sorted_paths: dict[ChangeKind, list[Path]] = {kind: [] for kind in ChangeKind}
    for path in sorted(set(paths)):
        sorted_paths[classify_path(path, plan)].append(path)
    return ChangeSet(
        config=tuple(sorted_paths[ChangeKind.CONFIG]),
        templates=tuple(sorted_paths[ChangeKind.TEMPLATE]),
        static=tuple(sorted_paths[ChangeKind.STATIC]),
        ignored=tuple(sorted_paths[ChangeKind.IGNORED]),
    )
