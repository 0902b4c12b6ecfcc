"""An offline build whose inputs did not change: answered from the store, nothing rebuilt.

Role: `sitegen build --offline` run again with nothing changed must cost next to
nothing. `InputKey.locate` hashes every input of an offline build that can be read
without loading the configuration models or the content: site.toml's bytes and
place, the output folder, `--demo`, the environment variables the build reads (the
analytics and API keys and the base-URL override, hashed), and the stat (path, size, mtime)
of every file in the site's templates/, themes/, static/ and pages/ folders and of
sitegen's own package. After a build succeeds, `record` saves the key with the
store's content version and the build's report; `replay` gives that report back when
the key and the content version are the same and the output holds exactly the files of
the store's sealed record (`sitegen.cachekey`), each with its recorded inode, size and
ctime, and the manifest with its own: a file changed, replaced or restored from a cache
(new inodes and ctimes), or one more file anywhere, means "build", so the writer
repairs it. Anything it cannot read or verify means "build". It reaches the store only
through `sitegen.storefile` (`read_meta`, `write_meta`). This module must never write the
output, and never keep a key's value (only a hash).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sitegen import __version__
from sitegen.cachekey import mac_key
from sitegen.emit.manifest import MANIFEST_NAME
from sitegen.emit.tree import GIT
from sitegen.store import SCHEMA, STORE_FILE, OutputRecord, output_name, read_output_record
from sitegen.storefile import read_meta, write_meta

_SITE_FOLDERS = ("templates", "themes", "static", "pages")
_RECORD = "last_offline_build"


@dataclass(frozen=True)
class InputKey:
    """Where an offline build's store and output are, and the hash of its inputs."""

    store: Path
    output: Path
    key: str
    key_env: str  # the variable of the API key (a secret of the record's seal)

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
        return cls(cache / STORE_FILE, out, digest.hexdigest(),
                   str(api.get("key_env", "SITEGEN_API_KEY")))

    def replay(self) -> dict[str, Any] | None:
        """The last build's report when nothing it read changed since; else None."""
        name = output_name(self.store, str(self.output))
        meta = read_meta(self.store, ("schema", "content_version", _RECORD, name))
        try:
            record = json.loads(meta.get(_RECORD, "null")) if meta is not None else None
        except ValueError:
            return None
        if meta is None:
            return None
        if (not isinstance(record, dict) or meta.get("schema") != SCHEMA
                or record.get("key") != self.key
                or record.get("content_version") != meta.get("content_version", "0")):
            return None
        output = read_output_record(name, meta.get(name), mac_key(self.key_env))
        if not _output_intact(self.output, output):
            return None
        report = record.get("report")
        return report if isinstance(report, dict) else None

    def record(self, report: dict[str, Any]) -> None:
        """Remember the build that just succeeded with these inputs (its report to replay)."""
        meta = read_meta(self.store, ("content_version",))
        if meta is not None:  # (else, or when it cannot be written, the next build builds)
            write_meta(self.store, _RECORD, json.dumps({
                "key": self.key, "report": report,
                "content_version": meta.get("content_version", "0")}))


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


def _output_intact(output: Path, record: OutputRecord) -> bool:
    """True when *output* holds exactly the files of *record*, each (and the manifest) with
    its recorded inode, size and ctime, every file's ctime older than the manifest's."""
    files, manifest = record
    if manifest is None or not files:
        return False
    seen, pending, has_manifest = 0, [""], False
    try:
        while pending:
            prefix = pending.pop()
            with os.scandir(os.path.join(output, prefix)) as listing:
                entries = list(listing)
            if prefix and not entries:
                return False  # an empty folder: not the build's
            for entry in entries:
                rel = f"{prefix}/{entry.name}" if prefix else entry.name
                if rel == GIT:  # (a publishing branch's checkout: the owner's)
                    continue
                if entry.is_dir(follow_symlinks=False):
                    pending.append(rel)
                    continue
                found = entry.stat(follow_symlinks=False)
                now = (found.st_ino, found.st_size, found.st_ctime_ns)
                if rel == MANIFEST_NAME:
                    if now != manifest or not stat.S_ISREG(found.st_mode):
                        return False
                    has_manifest = True
                    continue
                row = files.get(rel)
                if row is None or not stat.S_ISREG(found.st_mode) or now != row[1:] \
                        or row[3] >= manifest[2]:  # as recent as the manifest: may hide an edit
                    return False
                seen += 1
    except OSError:
        return False
    return has_manifest and seen == len(files)
