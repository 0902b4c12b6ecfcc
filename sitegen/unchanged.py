"""An offline build whose inputs did not change: answered from the store, nothing rebuilt.

Role: `sitegen build --offline` run again with nothing changed must cost next to
nothing. `InputKey.locate` hashes every input of an offline build that can be read
without loading the configuration models or the content: site.toml's bytes and
place, the output folder, `--demo`, the environment variables the build reads (the
analytics and API keys and the base-URL override, hashed), and the stat (path, size, mtime)
of every file in the site's templates/, themes/, static/ and pages/ folders and of
sitegen's own package. After a build succeeds, `record` saves the key with the
store's content version and the build's report; `replay` gives that report back when
the key and the content version are the same and every file the output's manifest
lists still has its recorded stat. Anything it cannot read means "build". This
module must never write the output, and never keep a key's value (only a hash).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sitegen import __version__
from sitegen.emit.manifest import MANIFEST_NAME, Manifest
from sitegen.store import SCHEMA, STORE_FILE

_SITE_FOLDERS = ("templates", "themes", "static", "pages")
_RECORD = "last_offline_build"


@dataclass(frozen=True)
class InputKey:
    """Where an offline build's store and output are, and the hash of its inputs."""

    store: Path
    output: Path
    key: str

    @classmethod
    def locate(cls, config_path: str, *, demo: bool, output: str | None) -> InputKey | None:
        """The key of `build --offline [-c FILE] [-o DIR] [--demo]` now; None: cannot tell."""
        path = Path(config_path).resolve()
        try:
            text = path.read_bytes() if path.is_file() else b""
            raw: dict[str, Any] = tomllib.loads(text.decode("utf-8")) if text else {}
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return None
        if not text and not demo:
            return None
        root = path.parent if text else Path.cwd()
        site, api, analytics = (raw.get(name, {}) for name in ("site", "api", "analytics"))
        if not all(isinstance(t, dict) for t in (site, api, analytics)):
            return None
        cache = root / (".sitegen/demo" if demo else str(api.get("cache_dir", ".sitegen")))
        out = Path(output).resolve() if output is not None else (
            root / str(site.get("output", "_site"))).resolve()
        digest = hashlib.sha256(f"{__version__}\0{path}\0{demo}\0{out}\0".encode())
        digest.update(text)
        for name in ("SITEGEN_SITE_URL", str(analytics.get("key_env", "SITEGEN_ANALYTICS_KEY")),
                     str(api.get("key_env", "SITEGEN_API_KEY"))):  # (both keys: `check_keys`)
            digest.update(f"\0{name}={os.environ.get(name, '')}".encode())
        for folder in (*(root / name for name in _SITE_FOLDERS), Path(__file__).parent):
            digest.update(_stats(folder))
        return cls(cache / STORE_FILE, out, digest.hexdigest())

    def replay(self) -> dict[str, Any] | None:
        """The last build's report when nothing it read changed since; else None."""
        try:
            with _connect(self.store) as db:
                meta = dict(db.execute("SELECT name, value FROM meta WHERE name IN "
                                       "('schema', 'content_version', ?, ?)",
                                       (_RECORD, f"output:{self.output}")))
            record = json.loads(meta.get(_RECORD, "null"))
            stats = json.loads(meta.get(f"output:{self.output}", "{}"))
        except (sqlite3.Error, ValueError):
            return None
        if (not isinstance(record, dict) or meta.get("schema") != SCHEMA
                or record.get("key") != self.key
                or record.get("content_version") != meta.get("content_version", "0")
                or not isinstance(stats, dict) or not _output_intact(self.output, stats)):
            return None
        report = record.get("report")
        return report if isinstance(report, dict) else None

    def record(self, report: dict[str, Any]) -> None:
        """Remember the build that just succeeded with these inputs (its report to replay)."""
        try:
            with _connect(self.store) as db:
                found = db.execute("SELECT value FROM meta WHERE name = 'content_version'"
                                   ).fetchone()
                value = json.dumps({"key": self.key, "report": report,
                                    "content_version": found[0] if found else "0"})
                db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (_RECORD, value))
        except sqlite3.Error:
            pass  # the next build then simply builds


def _connect(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise sqlite3.OperationalError("no store")
    return sqlite3.connect(path)


def _stats(folder: Path) -> bytes:
    """(path, size, mtime) of every file under *folder*, in a stable order."""
    parts: list[str] = []
    for here, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            try:
                found = os.lstat(os.path.join(here, name))
            except OSError:
                continue
            parts.append(f"{here}/{name}\0{found.st_size}\0{found.st_mtime_ns}")
    return "\n".join(parts).encode("utf-8", "surrogateescape")


def _output_intact(output: Path, stats: dict[str, Any]) -> bool:
    """True when every file the output's manifest lists has the stat the store recorded."""
    try:
        manifest = Manifest.from_bytes((output / MANIFEST_NAME).read_bytes())
        manifest_ns = os.lstat(output / MANIFEST_NAME).st_mtime_ns
    except OSError:
        return False
    if manifest is None:
        return False
    for path in manifest.files:
        recorded = stats.get(path)
        try:
            found = os.lstat(os.path.join(output, path))
        except OSError:
            return False
        if not isinstance(recorded, list) or [found.st_size, found.st_mtime_ns] != recorded \
                or found.st_mtime_ns >= manifest_ns:  # as recent as the manifest: may hide an edit
            return False
    return True
