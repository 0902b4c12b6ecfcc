"""The model memo: the last build's Site graph, kept beside the content cache.

Role: a rebuild after an edit spends most of its model time loading the whole
content cache and building the graph again for thousands of unchanged articles.
After a full model build, `save_memo` keeps the graph (`sitegen.model.pack`) in
`site-model.bin`, keyed by the code that builds graphs, the config, and the cache's
state (`CacheState`: the base file's identity, the changes file's records by
fingerprint). `resume_site` reads only the memo and the cache's small changes file:
when the base is the memo's and the changes differ from the memo's only by new
versions of articles that move nothing, it patches the graph
(`sitegen.model.patch`), logs the model's repairs as a full build would, and
returns it; in every other case it returns None and the build loads the cache and
builds the graph (then saves a new memo). A resume stores the graph again only once
it patched more than `REWRITE_AFTER` articles: until then each rebuild patches every
record that differs from the memo's, so a rebuild after one edit writes nothing here.
Losing or damaging the file costs time, never correctness: anything unreadable is
no memo. The file is `marshal` data (never pickle: loading it runs no code) with a
CRC-32 of the graph, written atomically; the article bodies follow the graph with a
checksum of their own and are read only when a body is asked for (`MemoBodies`).
It must never hold anything but what `pack_site` made, and never write outside its
own file.
"""

from __future__ import annotations

import hashlib
import logging
import marshal
import os
import sys
import weakref
import zlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import BinaryIO

from sitegen import __version__
from sitegen.atomicfile import replace_atomically
from sitegen.config import Config
from sitegen.errors import CacheError
from sitegen.fetch.cache import CacheState, ContentCache, record_fingerprint
from sitegen.fetch.records import Article
from sitegen.model.views import Site
from sitegen.workspace import ApiVersion

log = logging.getLogger("sitegen.model")

MEMO_FILE = "site-model.bin"
MEMO_FORMAT = 2
_MAGIC = b"sitegen site model\n"
#: A resumed graph is stored again once it patched more articles than this (at 4,000
#: articles patching one takes ~0.01 s, 200 ~0.035 s; storing the graph ~0.09 s).
REWRITE_AFTER = 32
#: The code a graph depends on: the model, the records and cache it reads, URL checks, config.
_DERIVING = ("model", "fetch/records.py", "fetch/cache.py", "render/urls.py", "config.py",
             "workspace.py")


@dataclass(frozen=True)
class Resumed:
    """A graph made from the memo: the site, and the API version of its content."""

    site: Site
    api_version: ApiVersion


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of the code that builds and packs graphs, and of the versions involved.

    The libraries that decide a graph's values are in by version: pydantic (records)
    and python-slugify (slugs).
    """
    import pydantic
    from slugify.__version__ import __version__ as slugify_version

    here = Path(__file__).resolve().parent
    digest = hashlib.sha256(f"{MEMO_FORMAT}|{__version__}|{marshal.version}|"
                            f"{sys.version_info[:2]}|{pydantic.VERSION}|"
                            f"{slugify_version}".encode())
    for name in _DERIVING:
        found = here / name
        for path in sorted(found.glob("*.py")) if found.is_dir() else [found]:
            digest.update(b"\x00" + path.name.encode() + b"\x00" + path.read_bytes())
    return digest.hexdigest()[:24]


def _config_fingerprint(config: Config) -> str:
    return hashlib.sha256(config.model_dump_json().encode()).hexdigest()[:24]


def save_memo(config: Config, site: Site, state: CacheState, api_version: ApiVersion) -> bool:
    """Keep *site* (built from the cache in *state*) for the next build; True when written.

    A failure to write is not an error: the next build builds its graph in full.
    """
    from sitegen.model.pack import pack_site

    graph, bodies = pack_site(site)
    payload = marshal.dumps(graph)
    texts = marshal.dumps(bodies)
    key = (state.base, state.generation, state.has_changes,
           tuple(sorted(state.changes.items())), state.removed, state.rest)
    header = marshal.dumps((MEMO_FORMAT, code_fingerprint(), _config_fingerprint(config), key,
                            api_version, zlib.crc32(payload), len(payload),
                            zlib.crc32(texts), len(texts)))
    data = b"".join((_MAGIC, len(header).to_bytes(4, "big"), header, payload, texts))
    try:
        config.cache_path.mkdir(parents=True, exist_ok=True)
        replace_atomically(config.cache_path / MEMO_FILE, data)
    except OSError as error:
        log.debug("could not store the model memo in %s (%s)", config.cache_path, error)
        return False
    return True


def resume_site(config: Config) -> Resumed | None:
    """The graph of the cache as it stands, from the memo and the changes since, or None."""
    path = config.cache_path / MEMO_FILE
    try:
        memo_file = open(path, "rb", buffering=0)  # noqa: SIM115 (MemoBodies may keep it)
    except OSError:
        return None
    try:
        found = _read(memo_file, config)
    except (EOFError, ValueError, TypeError, IndexError, KeyError, OSError) as error:
        memo_file.close()
        log.debug("ignored the model memo %s (malformed: %s)", path, error)
        return None
    if found is None:
        memo_file.close()
        return None
    memo, api_version, payload, bodies = found
    changes = ContentCache.for_config(config).read_changes(memo.generation)
    if changes is None or changes.base != memo.base:
        return None
    if changes.generation is None:  # the base alone
        if memo.has_changes:
            return None
        records: list[Article] = []
        state = memo
    else:
        fingerprints = {key: record_fingerprint(a) for key, a in changes.articles.items()}
        if (changes.rest != memo.rest or changes.removed != memo.removed
                or not memo.changes.keys() <= fingerprints.keys()):
            return None
        records = [changes.articles[key] for key, fp in fingerprints.items()
                   if memo.changes.get(key) != fp]
        state = CacheState(memo.base, memo.generation, True, fingerprints, memo.removed,
                           memo.rest)
    return _patched(config, payload, bodies, records, state, api_version, path)


def _patched(config: Config, payload: bytes, bodies: MemoBodies, records: list[Article],
             state: CacheState, api_version: ApiVersion, path: Path) -> Resumed | None:
    from sitegen.model.pack import unpack_site
    from sitegen.model.patch import patch_site

    try:
        site = unpack_site((marshal.loads(payload), bodies), config)
    except (EOFError, ValueError, TypeError, IndexError, KeyError) as error:
        log.debug("ignored the model memo %s (malformed: %s)", path, error)
        return None
    repairs = patch_site(site, config, records)
    if repairs is None:
        return None
    for message in repairs:
        log.warning("%s", message)
    if len(records) > REWRITE_AFTER:
        save_memo(config, site, state, api_version)
    return Resumed(site, api_version)


def _read(memo_file: BinaryIO, config: Config,
          ) -> tuple[CacheState, ApiVersion, bytes, MemoBodies] | None:
    """The memo's cache state, API version, packed graph and bodies, or None when not
    this build's. Reads the header and the graph; the bodies stay in *memo_file* (which
    `MemoBodies` then owns) until one is asked for."""
    start = len(_MAGIC) + 4
    head = memo_file.read(start)
    if not head.startswith(_MAGIC) or len(head) != start:
        return None
    size = int.from_bytes(head[len(_MAGIC):], "big")
    form, code, configured, key, api_version, crc, length, texts_crc, texts_length = (
        marshal.loads(_read_exactly(memo_file, size)))
    if form != MEMO_FORMAT or code != code_fingerprint():
        return None
    if configured != _config_fingerprint(config):
        return None
    end = start + size + length
    if os.fstat(memo_file.fileno()).st_size != end + texts_length:
        raise ValueError("it is cut short or too long")
    payload = _read_exactly(memo_file, length)
    if zlib.crc32(payload) != crc:
        raise ValueError("its checksum does not match")
    if api_version not in ("v1", "v2"):
        raise ValueError(f"unknown API version {api_version!r}")
    base, generation, has_changes, changes, removed, rest = key
    state = CacheState(tuple(base), generation, bool(has_changes), dict(changes),
                       tuple(removed), rest)
    bodies = MemoBodies(memo_file, end, texts_length, texts_crc, config.cache_path / MEMO_FILE)
    return state, api_version, payload, bodies


def _read_exactly(memo_file: BinaryIO, size: int) -> bytes:
    data = memo_file.read(size)
    if data is None or len(data) != size:
        raise ValueError("it is cut short")
    return data


class MemoBodies:
    """The memo's article bodies, (blocks, markdown) by article position: read from the
    memo file and checked the first time any is asked for (a rebuild after one edit
    renders a handful, whose bodies come from the body store or from the edit): ~8 MB of
    the memo's 11 MB at 4,000 articles (the resume in one process: 78 -> 68 ms).

    Until then the memo file stays open (the very file the graph came from, even if a
    later build replaces it) and is closed once read, or with this object. A part that
    turns out damaged (its checksum or shape) cannot become a full build any more: it is
    a `CacheError` naming the way out, and the memo goes.
    """

    def __init__(self, memo_file: BinaryIO, offset: int, length: int, crc: int,
                 path: Path) -> None:
        self._texts: BinaryIO | None = memo_file
        self._closer = weakref.finalize(self, memo_file.close)
        self._offset = offset
        self._length = length
        self._crc = crc
        self._path = path
        self._bodies: tuple[tuple[str, str], ...] = ()

    def __len__(self) -> int:
        return len(self._read())

    def __getitem__(self, index: int) -> tuple[str, str]:
        return self._read()[index]

    def _read(self) -> tuple[tuple[str, str], ...]:
        memo_file = self._texts
        if memo_file is not None:
            try:
                try:
                    memo_file.seek(self._offset)
                    texts = _read_exactly(memo_file, self._length)
                except OSError as error:
                    raise ValueError(error.strerror) from None
                finally:
                    self._closer()
                if zlib.crc32(texts) != self._crc:
                    raise ValueError("checksum")
                bodies = marshal.loads(texts)
                if not (isinstance(bodies, tuple) and all(
                        isinstance(b, tuple) and len(b) == 2 and isinstance(b[0], str)
                        and isinstance(b[1], str) for b in bodies)):
                    raise ValueError("shape")
            except (EOFError, ValueError, TypeError):
                self._path.unlink(missing_ok=True)
                raise CacheError(f"the model memo {self._path} is damaged (its article "
                                 "bodies): it was removed; build again") from None
            self._bodies = bodies
            self._texts = None
        return self._bodies
