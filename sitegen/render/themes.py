"""Theme resolution: the template lookup chain, its Jinja environment and static folders.

Role: resolve `[site] theme` to folders — site `templates/` → site
`themes/<theme>/templates/` or the built-in theme → built-in `default` — with
the prefixes `theme/…` and `default/…` so an override can extend the template
it replaces; build one Jinja environment (autoescape on for .html/.xml,
StrictUndefined), compile every template up front or take it from the build's
compiled templates (`sitegen.render.compiled`; a syntax error is a BuildError naming the
file and line), list static folders and fingerprint the chain. A symbolic link out of the
site's `templates/` or `themes/<theme>/` is refused (`sitegen.sitefolder`).
It must never write files or render pages.
"""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path

from jinja2 import (
    BytecodeCache,
    ChoiceLoader,
    Environment,
    FileSystemLoader,
    PrefixLoader,
    StrictUndefined,
    TemplateNotFound,
    TemplateSyntaxError,
    select_autoescape,
)

from sitegen import __version__
from sitegen.codeprint import code_fingerprint
from sitegen.config import Config
from sitegen.errors import BuildError, ConfigError
from sitegen.render.filters import install as install_filters
from sitegen.render.reads import RecordingEnvironment
from sitegen.sitefolder import source_files


def builtin_themes_root() -> Path:
    """The folder holding the built-in themes (package data)."""
    return Path(str(resources.files("sitegen") / "themes"))


def builtin_themes() -> list[str]:
    """Names of the built-in themes."""
    root = builtin_themes_root()
    return sorted(p.name for p in root.iterdir() if (p / "templates").is_dir())


def _hidden(rel: str) -> bool:
    return rel.rpartition("/")[2].startswith(".")


def _site_themes(site_root: Path) -> list[str]:
    folder = site_root / "themes"
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if (p / "templates").is_dir())


class ThemeSet:
    """The resolved theme chain of one site: template folders, static folders, environment."""

    def __init__(self, config: Config, bytecode: BytecodeCache | None = None) -> None:
        self.config = config
        #: Where compiled templates are kept between builds (`sitegen.render.compiled`).
        self.bytecode = bytecode
        name = config.site.theme
        root = builtin_themes_root()
        self.default_dir = root / "default"
        local = config.theme_dir()
        if (local / "templates").is_dir():
            self.theme_dir = local
        elif "/" not in name and "\\" not in name and (root / name / "templates").is_dir():
            self.theme_dir = root / name
        else:
            available = sorted(set(builtin_themes()) | set(_site_themes(config.root)))
            raise ConfigError(
                f"[site] theme {name!r} was not found: use one of {', '.join(available)}, "
                f"or create {local / 'templates'}"
            )
        site_templates = config.root / "templates"
        self.site_templates = site_templates if site_templates.is_dir() else None
        self._environment: RecordingEnvironment | None = None
        owned = ["templates"] if self.site_templates else []
        owned += [f"themes/{name}"] if self.theme_dir == local else []
        for folder in owned:  # templates, messages and static files: no link out of them
            for _ in source_files(config.root, folder, skip=_hidden):
                pass

    # --- folders ----------------------------------------------------------------

    def template_dirs(self) -> list[Path]:
        """Template folders, highest priority first (site overrides, theme, default)."""
        dirs = [self.site_templates] if self.site_templates else []
        dirs.append(self.theme_dir / "templates")
        if self.theme_dir != self.default_dir:
            dirs.append(self.default_dir / "templates")
        return dirs

    def static_dirs(self) -> list[Path]:
        """Static folders of the chain, highest priority first (the theme's, then default's)."""
        dirs = [self.theme_dir / "static"]
        if self.theme_dir != self.default_dir:
            dirs.append(self.default_dir / "static")
        return [d for d in dirs if d.is_dir()]

    def message_tables(self) -> list[Path]:
        """`messages.toml` of the chain, highest priority first (see `render.i18n`)."""
        dirs = [self.theme_dir]
        if self.theme_dir != self.default_dir:
            dirs.append(self.default_dir)
        return [d / "messages.toml" for d in dirs if (d / "messages.toml").is_file()]

    # --- Jinja --------------------------------------------------------------------

    def _loader(self) -> ChoiceLoader:
        theme_chain = [self.theme_dir / "templates"]
        if self.theme_dir != self.default_dir:
            theme_chain.append(self.default_dir / "templates")
        return ChoiceLoader([
            PrefixLoader({
                "theme": FileSystemLoader([str(p) for p in theme_chain]),
                "default": FileSystemLoader(str(self.default_dir / "templates")),
            }),
            FileSystemLoader([str(p) for p in self.template_dirs()]),
        ])

    def environment(self) -> RecordingEnvironment:
        """The Jinja environment (built once; every template compiled and checked)."""
        if self._environment is None:
            env = RecordingEnvironment(
                loader=self._loader(),
                autoescape=select_autoescape(["html", "xml"], default_for_string=True),
                undefined=StrictUndefined,
                trim_blocks=True,
                lstrip_blocks=True,
                auto_reload=False,
                cache_size=-1,
                bytecode_cache=self.bytecode,
            )
            install_filters(env)
            env.globals["sitegen_version"] = __version__  # (feeds name their generator)
            env.observe_filters()
            self._compile_all(env)
            self._environment = env
        return self._environment

    def template_source(self, name: str) -> str | None:
        """The source *name* resolves to now, or None when no folder of the chain has it."""
        try:
            return self.environment().loader.get_source(  # type: ignore[union-attr]
                self.environment(), name)[0]
        except TemplateNotFound:
            return None

    def _compile_all(self, env: Environment) -> None:
        # Every file is reachable under its plain name except ones an override shadows;
        # those compile (and report syntax errors the same way) when first extended.
        names = env.list_templates(extensions=["html", "xml", "txt"])
        for name in sorted(n for n in names if not n.startswith(("theme/", "default/"))):
            try:
                env.get_template(name)
            except TemplateSyntaxError as error:
                where = error.filename or name
                raise BuildError(
                    f"template {where} line {error.lineno} has a syntax error ({error.message}): "
                    "fix the template"
                ) from None

    def fingerprint(self) -> str:
        """A hash of every template source in the chain (and the code fingerprint)."""
        digest = hashlib.sha256(code_fingerprint().encode())
        for layer, folder in enumerate(self.template_dirs()):
            for path in sorted(p for p in folder.rglob("*") if p.is_file()):
                digest.update(f"\x00{layer}:{path.relative_to(folder).as_posix()}\x00".encode())
                digest.update(path.read_bytes())
        return digest.hexdigest()[:32]
