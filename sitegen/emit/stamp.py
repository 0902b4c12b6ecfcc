"""The no-change stamp: answer "nothing changed" for an offline build without building.

Role: an offline build's output is decided by its inputs alone — the sitegen code
and its dependencies, site.toml, the content cache, the theme files, a few
environment variables, the command's output folder. `StampKey.locate` hashes all of
them cheaply (file sizes, mtimes and inodes; the content cache by its bytes only
when its stat changed), *before* a build reads them, and after a committed build
`save_stamp` records that key with the stat (size, mtime_ns, inode) of every output
file and the warnings the build logged. The next offline build with the same key and
an untouched output can then report everything unchanged in a few milliseconds
(`check_stamp`), replaying the recorded warnings so `--strict` gives the same
answer. An online build is an offline build of the cache its sync leaves, so it
checks (and records) the same stamp once the sync is done. Any doubt means "build
normally": a missing, foreign or corrupt stamp, a changed input, a tampered or
missing output file, leftovers of a killed build. This module imports only the
standard library (it runs before config validation, jinja2 or pydantic are loaded);
it must never write anything but its own stamp file in the cache folder, never touch
the output, and never record an environment value (only its hash).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sitegen import __version__
from sitegen.atomicfile import replace_atomically
from sitegen.emit.stamprecord import STAMP_FORMAT

DEFAULT_CACHE_DIR = ".sitegen"  # ApiSection.cache_dir's default (a test keeps them equal)
DEMO_CACHE_DIR = ".sitegen/demo"  # demo_config's cache_dir
DEFAULT_OUTPUT = "_site"  # SiteSection.output's default (a test keeps them equal)
CONTENT_FILE = "content.json"  # sitegen.fetch.cache.CACHE_FILE
CHANGES_FILE = "content-changes.json"  # sitegen.fetch.cache.CHANGES_FILE
MANIFEST_FILE = ".sitegen-manifest.json"  # sitegen.emit.manifest.MANIFEST_NAME
PACKAGE_DIR = Path(__file__).resolve().parent.parent
FIXED_ENV = ("SOURCE_DATE_EPOCH", "SITEGEN_SITE_URL")  # issue-24: --base-url sets the latter

Stat = tuple[int, int, int]  # size, mtime_ns, inode


def _stat(path: str) -> Stat | None:
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def _tree(digest: Any, root: Path) -> None:
    """Feed every folder and (relative path, size, mtime_ns) of every file under *root*."""
    digest.update(f"\x01{root}".encode("utf-8", "surrogateescape"))
    stack = [(os.fspath(root), "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name == "__pycache__":
                continue
            try:
                if entry.is_dir(follow_symlinks=True):
                    stack.append((entry.path, prefix + entry.name + "/"))
                    digest.update(f"\x00{prefix}{entry.name}/".encode("utf-8", "surrogateescape"))
                    continue
                st = entry.stat(follow_symlinks=True)
            except OSError:
                continue
            digest.update(f"\x00{prefix}{entry.name}|{st.st_size}|{st.st_mtime_ns}"
                          .encode("utf-8", "surrogateescape"))


def _env_hash(names: Iterable[str]) -> str:
    digest = hashlib.sha256()
    for name in sorted(set(names)):
        value = os.environ.get(name)
        digest.update(f"\x00{name}=".encode())
        if value is not None:
            digest.update(hashlib.sha256(value.encode("utf-8", "surrogateescape")).digest())
    return digest.hexdigest()


def likely_output(config: str, *, demo: bool, output: str | None) -> Path | None:
    """The output folder `build [-c config] [-o output] [--demo]` will use, from the raw
    site.toml (no validation: the build checks it against its validated config)."""
    cwd = Path.cwd()
    if output is not None:
        return (cwd / output).resolve()
    config_path = (cwd / config).resolve()
    raw: dict[str, Any]
    try:
        raw = tomllib.loads(config_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if not demo:
            return None
        raw = {}
    except (OSError, ValueError):
        return None
    root = config_path.parent if not demo or config_path.is_file() else cwd
    site = raw.get("site", {})
    folder = site.get("output", DEFAULT_OUTPUT) if isinstance(site, dict) else None
    return (root / folder).resolve() if isinstance(folder, str) else None


def _cache_folder(config_path: Path, demo: bool, cwd: Path) -> Path | None:
    """Where the content cache of this command lives, from the raw site.toml (no validation)."""
    if demo:
        root = config_path.parent if config_path.is_file() else cwd
        return (root / DEMO_CACHE_DIR).resolve()
    try:
        raw = tomllib.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    api = raw.get("api")
    cache_dir = api.get("cache_dir", DEFAULT_CACHE_DIR) if isinstance(api, dict) else None
    if not isinstance(cache_dir, str):
        return None
    return (config_path.parent / cache_dir).resolve()


@dataclass(frozen=True)
class StampKey:
    """Where an offline build's stamp lives and the hash of its inputs (bar content and env)."""

    path: Path
    inputs: str
    content_path: str
    content: Stat | None
    changes: Stat | None = None  # the content cache's changes file, when there is one
    content_sha: str = field(default="", compare=False)

    @classmethod
    def locate(cls, config: str, *, demo: bool, output: str | None) -> StampKey | None:
        """The key of `build --offline [-c config] [-o output] [--demo]`, or None (no stamp)."""
        cwd = Path.cwd()
        config_path = (cwd / config).resolve()
        folder = _cache_folder(config_path, demo, cwd)
        if folder is None:
            return None
        override = os.fspath((cwd / output).resolve()) if output is not None else ""
        digest = hashlib.sha256(f"{STAMP_FORMAT}|{__version__}|{sys.version}|{sys.executable}"
                                .encode())
        for part in (os.fspath(config_path), str(demo), os.fspath(cwd), override):
            digest.update(f"\x00{part}".encode("utf-8", "surrogateescape"))
        try:
            digest.update(b"\x00" + config_path.read_bytes())
        except OSError:
            digest.update(b"\x00-")
        here = os.fspath(cwd)
        for entry in sys.path:  # an installed, upgraded or removed dependency changes these
            if os.path.isabs(entry):
                # Not the working folder's stat (`python -m sitegen` puts it on sys.path):
                # the output's siblings (staging, lock, trash) change its mtime every build.
                found = _stat(entry) if os.path.normpath(entry) != here else None
                digest.update(f"\x00{entry}|{found}".encode("utf-8", "surrogateescape"))
        _tree(digest, PACKAGE_DIR)  # sitegen's code, built-in themes, demo media, beacon
        root = config_path.parent if not demo or config_path.is_file() else cwd
        for local in ("templates", "themes"):
            _tree(digest, root / local)
        name = hashlib.sha256(f"{config_path}|{demo}|{override}|{cwd}".encode(
            "utf-8", "surrogateescape")).hexdigest()[:16]
        content_path = os.fspath(folder / CONTENT_FILE)
        return cls(folder / f"build-stamp-{name}.json", digest.hexdigest(), content_path,
                   _stat(content_path), _stat(os.fspath(folder / CHANGES_FILE)))

    def content_files(self) -> list[tuple[str, Stat | None]]:
        """The content cache's files (base, changes) with the stats this key took."""
        changes = os.path.join(os.path.dirname(self.content_path), CHANGES_FILE)
        return [(self.content_path, self.content), (changes, self.changes)]

    def with_content_sha(self) -> StampKey:
        """This key with the content cache's hash (read once, before the build reads it)."""
        return replace(self, content_sha=_content_sha(self, None))


#: Hashes of content files that `check_stamp` took or trusted, by (path, stat): a rebuild
#: keys its build with them rather than reading the same bytes again.
_known_sha: dict[tuple[str, Stat], str] = {}


def _content_sha(key: StampKey, recorded: list[Any] | None) -> str:
    """The hash of the content cache's files as *key* found them ("" when one moved since).

    A file whose stat is the one *recorded* (a stamp's [stat, sha] per file) keeps the
    recorded hash, as the rest of the stamp trusts stats; others are read.
    """
    parts = []
    for n, (path, stat) in enumerate(key.content_files()):
        if stat is None:
            parts.append("-" if _stat(path) is None else "")
            continue
        sha = _known_sha.get((path, stat))
        if sha is None and recorded is not None and recorded[n][0] == list(stat):
            sha = str(recorded[n][1])
        if sha is None:
            sha = _file_sha(path, stat)
        if sha:
            if len(_known_sha) >= 16:  # a long preview session builds many times
                _known_sha.clear()
            _known_sha[(path, stat)] = sha
        parts.append(sha)
    return "" if "" in parts else ":".join(parts)


def _file_sha(path: str, stat: Stat) -> str:
    """SHA-256 of the file at *path*, or "" when unreadable or not at *stat* throughout."""
    if _stat(path) != stat:
        return ""
    try:
        with open(path, "rb") as handle:
            sha = hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return ""
    return sha if _stat(path) == stat else ""


@dataclass
class StampedBuild:
    """What a matching stamp says about the output: its files, warnings and report values."""

    output: str
    files: list[str]
    warnings: list[str]
    articles: int
    html_pages: int
    api: dict[str, Any]


def check_stamp(key: StampKey) -> StampedBuild | None:
    """The recorded build when *key* matches and its output is exactly as it was left."""
    try:
        raw = json.loads(key.path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(raw, dict) or raw.get("format") != STAMP_FORMAT:
        return None
    try:
        content = raw["content"]
        if key.content is None or content["path"] != key.content_path:
            return None
        # First, whatever else changed: the recorded hashes of content files whose stat
        # did not move are then known, and `with_content_sha` reads none of them (after
        # a theme or site.toml edit, the 11 MB base at 4,000 articles is not hashed).
        sha = _content_sha(key, content["files"])
        output = raw["output"]
        if raw["inputs"] != key.inputs or os.path.realpath(raw["output_as_given"]) != output:
            return None
        if raw["env"] != _env_hash([*raw["env_names"], *FIXED_ENV]):
            return None
        if not sha or sha != content["sha"]:
            return None
        if not _output_intact(output, raw["files"]):
            return None
        files = sorted(rel for rel in raw["files"] if rel != MANIFEST_FILE)
        return StampedBuild(output, files, list(raw["warnings"]),
                            int(raw["articles"]), int(raw["html_pages"]), dict(raw["api"]))
    except (KeyError, TypeError, ValueError, IndexError):
        return None


def _output_intact(output: str, files: dict[str, list[int]]) -> bool:
    name = os.path.basename(output)
    parent = os.path.dirname(output)
    for sibling in (f".{name}.sitegen-staging", f".{name}.sitegen-old"):
        if os.path.lexists(os.path.join(parent, sibling)):
            return False  # a killed build to repair first
    if MANIFEST_FILE not in files:
        return False
    join = os.path.join
    for rel, recorded in files.items():
        try:
            st = os.stat(join(output, rel), follow_symlinks=False)
        except OSError:
            return False
        if (st.st_size != recorded[0] or st.st_mtime_ns != recorded[1]
                or st.st_ino != recorded[2]):
            return False
    return True


def save_stamp(key: StampKey, output: str, files: Sequence[str], *, output_as_given: str,
               env_names: Sequence[str], warnings: Sequence[str], articles: int,
               html_pages: int, api: dict[str, Any],
               known: Mapping[str, tuple[int, int, int]] | None = None) -> bool:
    """Record a committed build under *key*; False (and no stamp) when anything is off.

    *known* holds stats of output files the build already confirmed as they are now
    (`OutputWriter.confirmed_stats`); the other files are stat'ed here.
    """
    stats: dict[str, list[int]] = {}
    known = known or {}
    for rel in [*files, MANIFEST_FILE]:
        found = known.get(rel) or _stat(os.path.join(output, rel))
        if found is None:
            return False
        stats[rel] = list(found)
    if key.content is None or not key.content_sha:
        return False
    shas = key.content_sha.split(":")
    content_files = [[list(stat) if stat is not None else None, sha]
                     for (_, stat), sha in zip(key.content_files(), shas, strict=True)]
    record = {
        "format": STAMP_FORMAT, "inputs": key.inputs, "output": output,
        "output_as_given": output_as_given,
        "env_names": sorted(set(env_names)), "env": _env_hash([*env_names, *FIXED_ENV]),
        "content": {"path": key.content_path, "files": content_files,
                    "sha": key.content_sha},
        "warnings": list(warnings), "articles": articles, "html_pages": html_pages,
        "api": api, "files": stats,
    }
    try:  # the C encoder (json.dump would take the pure-Python one)
        replace_atomically(key.path, json.dumps(record, separators=(",", ":")).encode("utf-8"))
    except OSError:
        return False
    return True
