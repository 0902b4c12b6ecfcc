"""Turning a failed build into a `Problem`: which file, which line, what went wrong.

Role: look through an exception (its cause chain, Jinja's template frames, the text of sitegen's
own errors) for the file and line to blame (`templates/base.html:12: unexpected '}'`), shown
relative to the site folder. It must never raise, never do I/O, and never include anything but
the error's own text (the page script shows it with `textContent`).
"""

from __future__ import annotations

import re
import traceback
from pathlib import Path

import jinja2

from sitegen.errors import ConfigError
from sitegen.preview.reload import Problem

_TEMPLATE_SUFFIXES = (".html", ".htm", ".xml", ".txt", ".j2", ".jinja", ".jinja2", ".css", ".js")
_TOML_LINE = re.compile(r"\bat line (\d+)")
_FILE_LINE = re.compile(r"([\w./\\-]+\.(?:html|htm|xml|txt|j2|jinja2?|toml))(?::| line )(\d+)")


def _chain(error: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _shown(path: str, root: Path) -> str:
    try:
        candidate = Path(path)
        if candidate.is_absolute() and candidate.is_relative_to(root):
            return candidate.relative_to(root).as_posix()
    except (ValueError, OSError):
        pass
    return path


def _template_frame(error: BaseException) -> tuple[str, int] | None:
    """The innermost template frame (Jinja rewrites frames to template lines)."""
    frames = traceback.extract_tb(error.__traceback__)
    for frame in reversed(frames):
        if frame.filename.endswith(_TEMPLATE_SUFFIXES) and frame.lineno:
            return frame.filename, frame.lineno
    return None


def describe_failure(error: BaseException, root: Path, config_file: Path | None = None) -> Problem:
    """The overlay's account of *error*: kind (`config`, `template`, `build`), file, line, text."""
    root = root.resolve()
    chain = _chain(error)
    for item in chain:
        if isinstance(item, jinja2.TemplateSyntaxError):
            where = item.filename or item.name
            return Problem(kind="template", file=_shown(where, root) if where else None,
                           line=item.lineno or None, message=item.message or str(item))
    for item in chain:
        if isinstance(item, jinja2.TemplateError):
            frame = _template_frame(item)
            if frame is not None:
                return Problem(kind="template", file=_shown(frame[0], root), line=frame[1],
                               message=item.message or type(item).__name__)
    if isinstance(error, ConfigError):
        text = str(error)
        match = _TOML_LINE.search(text)
        shown = _shown(str(config_file.resolve()), root) if config_file is not None else None
        return Problem(kind="config", file=shown, line=int(match.group(1)) if match else None,
                       message=text)
    text = str(error) or type(error).__name__
    for item in chain:
        frame = _template_frame(item)
        if frame is not None:
            return Problem(kind="template", file=_shown(frame[0], root), line=frame[1],
                           message=text)
    match = _FILE_LINE.search(text)
    if match:
        return Problem(kind="template" if not match.group(1).endswith(".toml") else "config",
                       file=_shown(match.group(1), root), line=int(match.group(2)), message=text)
    return Problem(kind="build", message=text)
