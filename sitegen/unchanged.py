"""The recipe's first stage: an offline build whose inputs did not change, answered at once.

Role: `sitegen build --offline` run again with nothing changed must cost next to nothing,
so `run_build` asks this stage first (`NoChange.of`), before the configuration is loaded.
It applies to a command's build (a `ConfigFile`, no workspace, model or pages given: the
recipe given a loaded configuration, the preview's and the tests', may hold what no file
shows). Every such build that succeeds is recorded, online or offline, to its own output or
`-o`; only an offline one without `--refresh` or `--force` is answered. Its key hashes
every input that can be read without the configuration models or the content: site.toml's
bytes and place, the output folder, `--demo`, the environment variables the build reads
(the analytics and API keys and the base-URL override, hashed), and the stat (path, size,
mtime) of every file in the site's templates/, themes/, static/ and pages/ folders. The
code is the render's own code fingerprint (`codeprint.code_fingerprint`: the package and
the libraries' versions), recorded with the stat signature of what it reads
(`codeprint.code_signature`, taken here before the build computes the fingerprint): an
equal signature answers for it at once, another one has it computed again. After a build
succeeds, `recorded` keeps, sealed in the store (`derived`, kind `nochange`, one per output
folder): the key, the code fingerprint and signature, the content version the build's sync
read (`content_read`; none known, as when another process wrote the store meanwhile:
nothing recorded), the report an offline build would give (no API call, the warnings
logged after the sync), every folder and file of the output and a digest of their inodes
and ctimes (`emit.intact`). Before that, the writer's sealed record must be this build's
commit's (`committed`: not another build's since), the output is checked against it
(`emit.intact.holds_exactly`: exactly its files, each with its recorded inode, size and
ctime, from the same stats, listing only a folder changed since the manifest), and every
ctime recorded must be at least `SETTLED` old, so a later change cannot hide in its clock
tick. `replay` gives the report back when the key, the content version
and the code are the same and one `lstat` of each recorded folder and file finds the same
inodes and ctimes: a file written, replaced, chmod-ed or restored from a cache changes its
own, and one added, removed or renamed anywhere changes its folder's, so the writer
repairs it. Anything it cannot read or verify means "build". It reaches the store only
through `Store` (opened by `storefile.glance_store`). This module must never write the
output, and never keep a key's value (only a hash).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sitegen import __version__
from sitegen.codeprint import code_fingerprint, code_signature
from sitegen.emit.intact import (
    folders_of,
    holds_exactly,
    stat_digest,
    stat_paths,
    stats_digest,
)
from sitegen.errors import SitegenError
from sitegen.options import BuildOptions, ConfigFile
from sitegen.outputnames import MANIFEST_NAME
from sitegen.report import BuildReport, Timings
from sitegen.store import STORE_FILE, Store, output_name
from sitegen.storefile import glance_store

if TYPE_CHECKING:
    from sitegen.config import Config
    from sitegen.logs import WarningCounter
    from sitegen.storeseal import OutputRecord

log = logging.getLogger("sitegen.build")
_SITE_FOLDERS = ("templates", "themes", "static", "pages")
_KIND = "nochange"
#: How old (seconds) every recorded ctime must be: a later change gets a later one.
SETTLED = 0.05


@dataclass(frozen=True)
class _Inputs:
    """Where an offline build's store and output are, and the hash of its inputs."""

    store: Path
    output: Path
    key: str
    key_env: str  # the variable of the API key (a secret of the record's seal)
    code: str  # the stat signature of what the code fingerprint reads (`codeprint`)


class NoChange:
    """The stage for one build (`of`); it applies when `inputs` is not None."""

    def __init__(self, config: Config | ConfigFile, options: BuildOptions,
                 inputs: _Inputs | None) -> None:
        self._config, self.options, self.inputs = config, options, inputs
        self._content: tuple[int | None, int] = (None, 0)
        #: What this build's commit left (`committed`), and the store's sealed value of it.
        self._written: tuple[OutputRecord, str] | None = None
        self._left_out = (0, 0)
        #: The stage's time (its own: the recipe's stages are timed once it is loaded).
        self.timings = Timings(options.stop) if inputs is not None else None

    @classmethod
    def of(cls, config: Config | ConfigFile, options: BuildOptions) -> NoChange:
        """The stage of this build (see the module docstring for when it applies)."""
        given = (options.workspace, options.site, options.own_pages, options.drafts,
                 options.before_render)  # (what no file shows)
        return cls(config, options, _locate(config, options) if isinstance(config, ConfigFile)
                   and all(hook is None for hook in given) else None)

    def content_read(self, version: int | None, warnings: int) -> None:
        """What the build's content is: the store's content *version* it read (None: not
        known, so nothing is recorded), and how many *warnings* were logged by then (the
        sync's, which an offline build would not log, are not replayed)."""
        self._content = (version, warnings)

    def not_replayed(self, start: int, end: int) -> None:
        """The warnings logged from *start* to *end* are of this build only (the store's
        line about rows that did not verify: they are repaired now), never replayed."""
        self._left_out = (start, end)

    def committed(self, record: OutputRecord, sealed: str) -> None:
        """What this build's commit left in the output (the writer's *record*, as the store
        keeps it, *sealed*): the output is recorded only while the store's record is this
        very value (another build of the output may commit between this one's commit and
        its record), and is not read back."""
        self._written = (record, sealed)

    def config(self) -> Config:
        """The build's configuration, loaded now (a `ConfigError` when it is invalid)."""
        config = self._config
        return config.load() if isinstance(config, ConfigFile) else config

    def replay(self, counter: WarningCounter) -> BuildReport | None:
        """The last build's report when nothing it read changed since; else None (build)."""
        options = self.options
        if self.inputs is None or self.timings is None or not options.offline \
                or options.refresh or options.force:
            return None
        with self.timings.stage("unchanged"):
            found = self._look(self.inputs)
            if found is None:
                return None
            for message in found.get("warnings") or []:
                log.warning("%s", message)
            counter.check_strict(self.options.strict)  # (`--strict`: the same refusal)
            api = found.get("api")
        return BuildReport(
            html_pages=int(found.get("html_pages") or 0), articles=int(found.get("articles") or 0),
            unchanged=found["files"], api=api if isinstance(api, dict) else {}, from_cache=True,
            timings=dict(self.timings.stages), seconds=self.timings.total(),
            warnings=counter.count, warning_messages=counter.messages)

    def recorded(self, report: BuildReport) -> BuildReport:
        """*report*, the build's that just succeeded, remembered with these inputs when its
        output is exactly what the writer left (else the next build builds), this stage's
        time in its timings."""
        version, warnings = self._content
        written = self._written
        if self.inputs is None or self.timings is None or version is None or written is None \
                or written[0][1] is None:
            return report
        with self.timings.stage("unchanged"):
            store = glance_store(self.inputs.store, self.inputs.key_env, write=True)
            if store is not None:
                with store:
                    try:
                        _record(self.inputs, store, (version, *written),
                                _replayed(report, warnings, self._left_out))
                    except (SitegenError, OSError):
                        pass  # (the next build builds)
        report.timings = {"unchanged": self.timings.stages["unchanged"], **report.timings}
        report.seconds = self.timings.total()
        return report

    @staticmethod
    def _look(inputs: _Inputs) -> dict[str, Any] | None:
        """The recorded report (with its `files`) if the record holds for the output now."""
        store = glance_store(inputs.store, inputs.key_env)
        if store is None:
            return None
        name = output_name(inputs.store, str(inputs.output))
        try:
            with store:
                value = store.derived(_KIND, [name]).get(name)
                version = store.content_version()
            head, _, body = (value or b"").partition(b"\n")
            record = json.loads(head) if head else None
            if not isinstance(record, dict) or record.get("key") != inputs.key \
                    or record.get("content_version") != version \
                    or not _same_code(record, inputs.code):
                return None
            paths = body.decode("utf-8", "surrogateescape").split("\n")
            if stat_digest(inputs.output, paths) != record.get("stats"):
                return None
        except (SitegenError, OSError, ValueError):
            return None
        report = record.get("report")
        if not isinstance(report, dict):
            return None
        report["files"] = paths[int(record.get("folders") or 0):-1]  # (the manifest last)
        return report


def _locate(config: ConfigFile, options: BuildOptions) -> _Inputs | None:
    """Where the build of *config* keeps its store and output, and its inputs' key; None when
    site.toml cannot be read (the build then says why)."""
    path = Path(config.path).resolve()
    try:
        text = path.read_bytes() if path.is_file() else b""
        raw: dict[str, Any] = tomllib.loads(text.decode("utf-8")) if text else {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    if not text and not config.demo:
        return None
    root = Path.cwd() if config.demo else path.parent  # (as `config.resolve_config` has it)
    site, api, analytics = (raw.get(name, {}) for name in ("site", "api", "analytics"))
    if not all(isinstance(t, dict) for t in (site, api, analytics)):
        return None
    cache = root / (".sitegen/demo" if config.demo else str(api.get("cache_dir", ".sitegen")))
    out = Path(options.output or root / str(site.get("output", "_site"))).resolve()
    digest = hashlib.sha256(f"{__version__}\0{path}\0{config.demo}\0{out}\0".encode())
    digest.update(text)
    key_env = "SITEGEN_API_KEY" if config.demo else str(api.get("key_env", "SITEGEN_API_KEY"))
    for name in ("SITEGEN_SITE_URL", key_env,  # (both keys: `config.check_keys`)
                 str(analytics.get("key_env", "SITEGEN_ANALYTICS_KEY"))):
        digest.update(f"\0{name}={os.environ.get(name, '')}".encode())
    for folder in (root / name for name in _SITE_FOLDERS):
        digest.update(_stats(folder))
    return _Inputs(cache.resolve() / STORE_FILE, out, digest.hexdigest(), key_env,
                   code_signature())


def _same_code(record: dict[str, Any], signature: str) -> bool:
    """Whether the code fingerprint is the recorded one: at once when the stat of all it
    reads is the recorded one (`codeprint.code_signature`), else computed again."""
    if record.get("code_signature") == signature:
        return True
    return record.get("code") == code_fingerprint()


def _replayed(report: BuildReport, warnings: int, left_out: tuple[int, int] = (0, 0)
              ) -> dict[str, Any]:
    """What an offline build of the same content would report, from *report*: its counts,
    the warnings logged after the first *warnings* (the sync's) but those *left_out*
    (start, end), no API call."""
    api: dict[str, Any] = report.api
    if not report.from_cache:  # (an online build: an offline one calls nothing, as
        # `CallLedger.to_report` says it of a ledger that made no call)
        api = {"version": report.api.get("version"), "calls": {}, "total": 0, "retries": 0,
               "bytes": 0, "saved": 0}
        if report.api.get("demo"):  # (the built-in emulator's content, said so offline too)
            api["demo"] = True
    return {"html_pages": report.html_pages, "articles": report.articles, "api": api,
            "warnings": [message for number, message in enumerate(report.warning_messages)
                         if number >= warnings and not left_out[0] <= number < left_out[1]]}


def _record(inputs: _Inputs, store: Store, built: tuple[int, OutputRecord, str],
            report: dict[str, Any]) -> None:
    """Save the record `replay` checks (see the module docstring), if the output holds what
    this build left: the content version it read, the writer's record of its commit and
    the store's sealed value of it (*built*)."""
    output = inputs.output
    version, written, sealed = built
    if not store.output_record_is(str(output), sealed):
        return  # (another build committed since)
    files = sorted(written[0])
    folders = folders_of(files)
    paths = [".", *folders, *files, MANIFEST_NAME]
    for again in (False, True):  # (once more after the newest change has settled)
        started = time.time_ns()
        stats = stat_paths(output, paths)
        if not holds_exactly(output, written, paths, stats, 1 + len(folders)):
            return
        newest = max(found.st_ctime_ns for found in stats)
        if newest < started - SETTLED * 1e9:
            break
        if again:
            return
        time.sleep((newest - started) / 1e9 + SETTLED)
    header = {"key": inputs.key, "content_version": version, "code": code_fingerprint(),
              "code_signature": inputs.code, "folders": 1 + len(folders),
              "stats": stats_digest(stats), "report": report}
    name = output_name(inputs.store, str(output))
    value = json.dumps(header).encode() + b"\n" + "\n".join(paths).encode(
        "utf-8", "surrogateescape")
    store.save_derived(_KIND, {name: value}, keep=[name])


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
