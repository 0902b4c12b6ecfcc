"""`sitegen deploy`: publish the last committed output to each `[deploy.NAME]` target.

Role: the command. It reads the output's manifest (what the site is), the store's
record of each target (what its bucket holds) and the bucket's deploy marker (one HEAD,
`deploy.marker`); it lists the bucket when asked (`--full`), when there is no record
(first deploy, a store deleted), or when the marker is not of the record's generation
(another store deployed since, an older copy of this store: one line says why). It plans
(`deploy.plan`) and sends the waves in order, several uploads at a time, recording each
confirmed upload in the store as it goes (a few per transaction, at most a quarter
second apart), so an interrupted deploy leaves a whole site (no page before its assets,
deletions last) and the next one sends only what is still missing. A deploy that changes
the bucket writes the marker before its first change and after its last. It holds the
output's build lock while it reads, so a build cannot swap the output under it. It must
never write the output, never take credentials from site.toml, and never print one.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from sitegen.configdeploy import DeployTarget
from sitegen.deploy.marker import (
    DEPLOYED,
    DEPLOYING,
    MARKER,
    MARKER_HEADERS,
    STATE_PREFIX,
    Marker,
    read_marker,
    why_list,
)
from sitegen.deploy.objects import object_headers, published, website_redirects
from sitegen.deploy.plan import (
    Plan,
    clean_etag,
    invalidation_paths,
    plan_deploy,
    reconcile,
)
from sitegen.emit import tree
from sitegen.emit.lock import OutputLock
from sitegen.emit.manifest import Manifest
from sitegen.emit.redirects import REDIRECTS_FILE
from sitegen.errors import ConfigError, DeployError
from sitegen.folders import check_output
from sitegen.outputnames import MANIFEST_NAME
from sitegen.store import Store

if TYPE_CHECKING:
    from sitegen.config import Config
    from sitegen.deploy.s3 import Bucket

log = logging.getLogger("sitegen.deploy")
INSTALL = "pip install 'sitegen-cas[deploy]'"
#: Confirmed uploads are saved at least this often (seconds), and when the deploy ends.
RECORD_EVERY = 0.25

BucketFactory = Callable[[str, DeployTarget], "Bucket"]


@dataclass
class Outcome:
    """What a deploy did to one target."""

    target: str
    plan: Plan
    uploaded: list[str]
    deleted: list[str]
    listed: bool
    #: Why the record was not trusted and the bucket was listed (None: trusted, or no record).
    why: str | None = None


def deploy_command(options: argparse.Namespace) -> int:
    """`sitegen deploy [-c site.toml] [-o DIR] [--target NAME] [--dry-run] [--full]`."""
    from sitegen.config import load_config

    config = load_config(Path(options.config))
    run_deploy(config, target=options.target, full=bool(options.full),
               dry_run=bool(options.dry_run), output=options.output)
    return 0


def run_deploy(config: Config, *, target: str | None = None, full: bool = False,
               dry_run: bool = False, output: str | None = None,
               bucket_factory: BucketFactory | None = None) -> list[Outcome]:
    """Deploy the output of *config* (or *output*, relative to the cwd) to *target* (None:
    every target, in order)."""
    targets = _targets(config, target)
    folder = Path(os.path.realpath(config.output_path(output)))
    check_output(folder)  # (not /, ~, a file or a .git folder: exit 2 before the lock file)
    _not_a_preview(config, folder)
    if bucket_factory is None:
        bucket_factory = _boto_bucket()
    lock = OutputLock(tree.sibling(folder, "lock"), 60.0)
    lock.acquire()
    try:
        built = _manifest(folder)
        _no_drafts(config, folder, built)
        redirects = _redirects(folder, built, config.site.url)
        site = {path: sha for path, sha in built.items() if published(path)}
        from sitegen.fetch.stored import open_config_store

        outcomes = []
        with open_config_store(config) as store:
            for name, spec in targets:
                outcomes.append(Deploy(name, spec, bucket_factory(name, spec), store, folder,
                                       site, redirects).run(full=full, dry_run=dry_run))
        return outcomes
    finally:
        lock.release()


def _targets(config: Config, wanted: str | None) -> list[tuple[str, DeployTarget]]:
    if not config.deploy:
        raise ConfigError("site.toml has no [deploy.NAME] section: add one, e.g. "
                          '[deploy.production] with url = "s3://bucket/prefix"')
    if wanted is None:
        return list(config.deploy.items())
    if wanted not in config.deploy:
        raise ConfigError(f"there is no deploy target '{wanted}' in site.toml: choose one "
                          f"of {', '.join(sorted(config.deploy))}")
    return [(wanted, config.deploy[wanted])]


def _boto_bucket() -> BucketFactory:
    try:
        from sitegen.deploy.s3 import Bucket
    except ImportError:
        raise ConfigError(f"sitegen deploy needs boto3: {INSTALL}") from None
    return Bucket


def _manifest(output: Path) -> dict[str, str]:
    try:
        manifest = Manifest.from_bytes((output / MANIFEST_NAME).read_bytes())
    except OSError:
        manifest = None
    if manifest is None:
        raise ConfigError(f"there is no built site in {output}: run `sitegen build` first")
    if MARKER in manifest.files:  # (the output has no hidden files: never from sitegen build)
        raise ConfigError(f"the output {output} holds a file {MARKER}, a name `sitegen "
                          "deploy` keeps for its marker in the bucket: rename that file")
    return {path: entry.sha256 for path, entry in manifest.files.items()}


def _not_a_preview(config: Config, output: Path) -> None:
    """Refuse an output in the store's folder (`[api] cache_dir`), where the previews
    build (`serve --drafts`' holds drafts; `serve`'s links to the local server)."""
    store = Path(os.path.realpath(config.cache_path))
    if output == store or output.is_relative_to(store):
        raise ConfigError(f"the output {output} is inside the content store's folder {store}, "
                          "where `sitegen serve` (and `--drafts`, with unpublished drafts) "
                          "builds its previews, which are never deployed: run `sitegen build` "
                          "and deploy its output folder")


def _no_drafts(config: Config, output: Path, built: dict[str, str]) -> None:
    """Refuse an output holding the drafts listing of `serve --drafts` (a copied drafts
    preview): no published build writes it (its first segment is reserved), unless the
    owner's `static/` does."""
    from sitegen.model.kinds import kind_of
    from sitegen.model.slugs import url_to_path

    listing = url_to_path(kind_of("drafts").url)
    if listing in built and not (config.root / "static" / listing).is_file():
        raise ConfigError(f"the output {output} holds {listing}, the drafts listing of "
                          "`sitegen serve --drafts`: it is a drafts preview, which is never "
                          "deployed: run `sitegen build` and deploy its output folder")


def _redirects(output: Path, site: dict[str, str], site_url: str) -> dict[str, str]:
    if REDIRECTS_FILE not in site:
        return {}
    try:
        text = (output / REDIRECTS_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    return {p: url for p, url in website_redirects(text, site_url).items() if p in site}


class Deploy:
    """One target's deploy: list when needed, plan, send, record."""

    def __init__(self, name: str, target: DeployTarget, bucket: Bucket, store: Store,
                 output: Path, site: dict[str, str], redirects: dict[str, str]) -> None:
        self.name, self.target, self.bucket, self.store = name, target, bucket, store
        self.output, self.site, self.redirects = output, site, redirects
        self.key = target.record_key(name)
        self._pending: dict[str, tuple[str, str]] = {}
        self._saved = time.monotonic()

    def _record(self, full: bool) -> dict[str, tuple[str, str]]:
        """What the store records of the bucket; one line for rows that did not verify."""
        dropped = self.store.seals.dropped
        record = self.store.deployed(self.key)
        if self.store.seals.dropped > dropped and not full:
            log.info("deploy %s: %d record(s) of what the bucket holds did not verify (sealed "
                     "with another key, or edited): the bucket is listed and reconciled, and "
                     "only what differs is uploaded", self.name,
                     self.store.seals.dropped - dropped)
        return record

    def run(self, *, full: bool, dry_run: bool) -> Outcome:
        record = self._record(full)
        generation = self.store.get(STATE_PREFIX + self.key) or None
        found = read_marker(self.bucket.head(MARKER))  # (one HEAD, dry run too)
        why = None if full else why_list(bool(record), generation, found)
        listed = full or not record or why is not None
        if listed:
            listing = self.bucket.listing()
            listing.pop(MARKER, None)
            found_record, drift = reconcile(listing, record, self.site, self._md5)
            if why is not None:
                log.info("deploy %s: %s: %s, as with --full (%s)", self.name, why,
                         "a deploy would list the bucket and reconcile its record" if dry_run
                         else "the bucket is listed and its record reconciled",
                         drift.describe())
            elif record and drift:
                log.warning("the bucket of deploy target '%s' differs from what the last "
                            "deploy recorded (%s): it is repaired now", self.name,
                            drift.describe())
            if not dry_run:
                self.store.save_deployed(self.key, found_record, replace=True)
            record = found_record
            # a finished deploy's generation describes what was just listed
            generation = found.generation if found is not None and found.done else None
            if not dry_run:
                self._keep_generation(generation)
        plan = plan_deploy(self.site, record, delete=self.target.delete)
        outcome = Outcome(self.name, plan, [], [], listed, why)
        if dry_run:
            for line in plan.describe():
                print(line)
            print(f"deploy {self.name} (dry run): {len(plan.uploads)} to upload, "
                  f"{len(plan.deletes)} to delete, {plan.unchanged} unchanged "
                  f"({self.target.url})")
            return outcome
        if not plan.empty:
            self._send_plan(plan, record, outcome)
        elif found is None or not found.done or found.generation != generation:
            # no marker, or one of a deploy cut short: the record is now what the bucket holds
            self._mark(Marker.fresh(DEPLOYED))
        log.info("deploy %s: %d uploaded, %d deleted, %d unchanged (%s)", self.name,
                 len(outcome.uploaded), len(outcome.deleted), plan.unchanged, self.target.url)
        return outcome

    def _send_plan(self, plan: Plan, before: dict[str, tuple[str, str]],
                   outcome: Outcome) -> None:
        """The waves, then the deletions, between a `deploying` marker and a `deployed` one."""
        started = self._mark(Marker.fresh(DEPLOYING))
        try:
            for wave in plan.waves:
                self._send(wave, outcome.uploaded)
        finally:
            self._flush()
        if plan.deletes:
            self.bucket.delete(plan.deletes)
            self.store.save_deployed(self.key, {}, plan.deletes)
            outcome.deleted = list(plan.deletes)
        self._invalidate(before, outcome)
        now = read_marker(self.bucket.head(MARKER))
        finished = self._mark(Marker.fresh(DEPLOYED))
        if now != started:  # another deploy wrote in between: no store may trust its record
            log.warning("deploy %s: another deploy to the same bucket ran at the same time: "
                        "the next deploy lists the bucket to check it", self.name)
            self._keep_generation(None)
        else:
            self._keep_generation(finished.generation)

    def _mark(self, marker: Marker) -> Marker:
        """Write *marker* to the bucket, then keep its generation in the store."""
        when = datetime.now(UTC).isoformat(timespec="seconds")
        self.bucket.put_object(MARKER, marker.body(self.site, when), marker.metadata(),
                               MARKER_HEADERS)
        self._keep_generation(marker.generation)
        return marker

    def _keep_generation(self, generation: str | None) -> None:
        self.store.set_state({STATE_PREFIX + self.key: generation or ""})

    def _send(self, paths: Sequence[str], done: list[str]) -> None:
        """Upload *paths* several at a time, recording each as it is confirmed.

        On the first failure (or Ctrl-C) the uploads not started are cancelled; those in
        flight end, and each that succeeded is recorded too: the next deploy sends only what
        the bucket did not confirm.
        """
        if not paths:
            return
        pool = ThreadPoolExecutor(self.target.concurrency)
        futures: dict[Future[tuple[str, str]], str] = {}
        recorded: set[Future[tuple[str, str]]] = set()

        def record(finished: Iterable[Future[tuple[str, str]]]) -> None:
            for future in finished:
                if (future not in recorded and future.done() and not future.cancelled()
                        and future.exception() is None):
                    sha, etag = future.result()
                    self._confirmed(futures[future], sha, etag)
                    done.append(futures[future])
                    recorded.add(future)

        try:
            futures.update((pool.submit(self._upload, path), path) for path in paths)
            pending = set(futures)
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                record(finished)
                for future in finished:
                    future.result()  # the first failure ends the wave
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            record(futures)  # the uploads in flight that ended well

    def _upload(self, path: str) -> tuple[str, str]:
        try:
            body = (self.output / path).read_bytes()
        except OSError as error:
            raise DeployError(f"cannot read {path} of the output ({error.strerror}): build "
                              "again, then deploy") from None
        sha = hashlib.sha256(body).hexdigest()
        if sha != self.site[path]:
            raise DeployError(f"the output file {path} is not the one the last build wrote: "
                              "build again, then deploy")
        etag = self.bucket.put(path, body, sha, object_headers(path, body[:1024]),
                               self.redirects.get(path))
        return sha, clean_etag(etag)

    def _confirmed(self, path: str, sha: str, etag: str) -> None:
        self._pending[path] = (sha, etag)
        if time.monotonic() - self._saved >= RECORD_EVERY:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            self.store.save_deployed(self.key, self._pending)
            self._pending = {}
        self._saved = time.monotonic()

    def _md5(self, path: str) -> str:
        try:
            return hashlib.md5((self.output / path).read_bytes(), usedforsecurity=False
                               ).hexdigest()
        except OSError:
            return ""

    def _invalidate(self, before: dict[str, tuple[str, str]], outcome: Outcome) -> None:
        changed = [p for p in outcome.uploaded if p in before] + outcome.deleted
        if self.target.cdn_invalidate is not None and changed:
            self.bucket.invalidate(self.target.cdn_invalidate, invalidation_paths(changed))


__all__ = ["INSTALL", "Outcome", "deploy_command", "run_deploy"]
