"""Theme static files → content-hashed output names, and the `asset_url` the templates use.

Role: gather the static files of every theme layer (`ThemeSet.static_dirs()`,
highest priority first: the first layer that has a relative path wins), plus
sitegen's own files (the beacon), and give each a name that carries a hash of
its bytes: `static/style.3f2a1c9e.css`. A CDN can then cache them forever.

Decision on CSS references: every static file is hashed, and `url(...)` and
`@import` references *between static files* inside CSS are rewritten to the
referenced file's hashed name before the CSS itself is hashed, so a changed font
or image changes the name of every stylesheet that uses it. References that do
not name a static file (data:, http:, absolute paths, fragments) are left alone.
A plain `@import "x.css";` of a stylesheet in the same folder (no media list) is
replaced by that stylesheet's text, so a page loads one render-blocking file, not
several (the built-in themes' `site.css` is their stylesheets joined this way). Every
stylesheet is served minified (`minify_css`: no comments, no needless white space).
This module only reads theme files; it must never write anything (the writer
does) and never read article content.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path

from sitegen.errors import BuildError
from sitegen.outputnames import path_problem

HASH_LENGTH = 8
OUTPUT_PREFIX = "static"
BEACON_NAME = "sitegen-beacon.js"

_CSS_REF = re.compile(
    r"""(?P<pre>url\(\s*)(?P<q1>['"]?)(?P<ref>[^'")\s]+)(?P=q1)(?P<post>\s*\))"""
    r"""|(?P<ipre>@import\s+)(?P<q2>['"])(?P<iref>[^'"]+)(?P=q2)""",
    re.IGNORECASE,
)
#: `@import "x.css";` with no media list: inlined when it names a stylesheet of the same folder.
_PLAIN_IMPORT = re.compile(r"""@import\s+(['"])([^'"\s]+\.css)\1\s*;""", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Asset:
    """One static file as it will be written: logical name, hashed output path, bytes."""

    name: str
    path: str
    data: bytes


def _walk(root: Path | Traversable, prefix: str = "") -> Iterable[tuple[str, Path | Traversable]]:
    try:
        children = sorted(root.iterdir(), key=lambda child: child.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    for child in children:
        rel = f"{prefix}{child.name}"
        if child.is_dir():
            yield from _walk(child, rel + "/")
        elif child.is_file():
            yield rel, child


def is_junk(rel: str) -> bool:
    """Hidden files and editor backups (.DS_Store, .git/..., x~) are never published."""
    return any(part.startswith((".", "~")) or part.endswith("~") for part in rel.split("/"))


def collect_static(layers: Iterable[Path | Traversable]) -> tuple[dict[str, bytes], set[str]]:
    """Read every layer's files; a higher-priority (earlier) layer wins per relative path.

    Returns the files to publish and the names left out as junk (hidden files, backups).
    """
    files: dict[str, bytes] = {}
    junk: set[str] = set()
    for layer in layers:
        for rel, entry in _walk(layer):
            if rel in files:
                continue
            if is_junk(rel):
                junk.add(rel)
                continue
            problem = path_problem(rel)
            if problem is not None:
                raise BuildError(f"theme static file {rel!r} cannot be published ({problem}): "
                                 "rename it")
            try:
                files[rel] = entry.read_bytes()
            except OSError as error:
                raise BuildError(f"cannot read theme static file {rel!r}: {error}") from None
    return files, junk


def beacon_source() -> bytes:
    """The bytes of sitegen's page-view beacon script (package data)."""
    from importlib.resources import files

    return files("sitegen.render").joinpath("static", BEACON_NAME).read_bytes()


def hashed_name(name: str, data: bytes) -> str:
    """`css/style.css` + bytes → `static/css/style.3f2a1c9e.css`."""
    digest = hashlib.sha256(data).hexdigest()[:HASH_LENGTH]
    folder, base = posixpath.split(name)
    stem, dot, suffix = base.rpartition(".")
    hashed = f"{stem}.{digest}.{suffix}" if dot and stem else f"{base}.{digest}"
    return posixpath.join(OUTPUT_PREFIX, folder, hashed)


class AssetSet:
    """Every static file of the build under its hashed name."""

    def __init__(
        self, files: Mapping[str, bytes], base_path: str = "/", junk: Iterable[str] = ()
    ) -> None:
        self._sources = dict(files)
        self._junk = frozenset(junk)
        self._base = "/" + base_path.strip("/") + "/" if base_path.strip("/") else "/"
        self._assets: dict[str, Asset] = {}
        for name in sorted(self._sources):
            self._resolve(name, ())

    def _resolve(self, name: str, chain: tuple[str, ...]) -> Asset:
        done = self._assets.get(name)
        if done is not None:
            return done
        if name in chain:
            cycle = " → ".join((*chain, name))
            raise BuildError(f"theme stylesheets import each other in a cycle ({cycle}): "
                             "break the cycle")
        data = self._sources[name]
        if name.lower().endswith(".css"):
            data = self._rewrite_css(name, data, (*chain, name))
        asset = Asset(name, hashed_name(name, data), data)
        self._assets[name] = asset
        return asset

    def _rewrite_css(self, name: str, data: bytes, chain: tuple[str, ...]) -> bytes:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return data
        folder = posixpath.dirname(name)

        def inline(match: re.Match[str]) -> str:
            resolved = posixpath.normpath(posixpath.join(folder, match.group(2)))
            if resolved not in self._sources or posixpath.dirname(resolved) != folder:
                return match.group(0)
            return self._resolve(resolved, chain).data.decode("utf-8", "replace")

        text = _PLAIN_IMPORT.sub(inline, text)

        def replace(match: re.Match[str]) -> str:
            ref = match.group("ref") or match.group("iref")
            target, tail = _split_ref(ref)
            if not target or ":" in target or target.startswith(("/", "#")):
                return match.group(0)
            resolved = posixpath.normpath(posixpath.join(folder, target))
            if resolved not in self._sources or resolved == name:
                return match.group(0)
            hashed = self._resolve(resolved, chain).path
            new_ref = posixpath.relpath(hashed, posixpath.join(OUTPUT_PREFIX, folder)) + tail
            return match.group(0).replace(ref, new_ref, 1)

        return minify_css(_CSS_REF.sub(replace, text)).encode("utf-8")


    def url(self, name: str) -> str:
        """The public URL of a static file by its logical name (`asset_url` in templates)."""
        asset = self._assets.get(name.lstrip("/"))
        if asset is None and name.lstrip("/") in self._junk:
            return self._base + OUTPUT_PREFIX + "/" + name.lstrip("/")  # never published
        if asset is None:
            raise BuildError(
                f"the theme asks for the static file {name!r}, which no theme layer has: add it "
                "to the theme's static/ folder or fix the template"
            )
        return self._base + asset.path

    def __contains__(self, name: object) -> bool:
        return name in self._assets

    def assets(self) -> list[Asset]:
        """Every asset, sorted by output path."""
        return sorted(self._assets.values(), key=lambda asset: asset.path)

    def fingerprint(self) -> str:
        """A hash of every logical name and hashed URL (changes when any asset changes)."""
        digest = hashlib.sha256(self._base.encode())
        for asset in self.assets():
            digest.update(f"\0{asset.name}\0{asset.path}".encode())
        return digest.hexdigest()


def _split_ref(ref: str) -> tuple[str, str]:
    """`font.woff2?v=2#x` → (`font.woff2`, `?v=2#x`)."""
    cut = len(ref)
    for mark in ("?", "#"):
        index = ref.find(mark)
        if index != -1:
            cut = min(cut, index)
    return ref[:cut], ref[cut:]


#: A CSS string, a comment, or a run of white space with the punctuation beside it.
_CSS_TOKEN = re.compile(r"""("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')|/\*.*?\*/|\s*([{};,>])\s*|\s+""",
                        re.S)


def minify_css(text: str) -> str:
    """*text* without comments, and with white space only where it means something (one
    space; none beside `{ } ; , >`); strings are kept as written."""
    def shorter(match: re.Match[str]) -> str:
        if match.group(1):
            return match.group(1)
        if match.group(2):
            return match.group(2)
        return "" if match.group(0).startswith("/*") else " "

    return _CSS_TOKEN.sub(shorter, text).strip()
