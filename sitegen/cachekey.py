"""The key that authenticates what the store keeps for trust, and its seal.

Role: the store (`.sitegen/`) and the output folder are cached between CI runs, and a
cache can be written by others (a `pull_request_target` workflow, a compromised action).
Every row of the store (content records, URL history, page plans and reads, build records,
meta, derived data, the record of the output's files) is therefore sealed with a keyed
BLAKE2b MAC whose key comes from a secret the build has and the cache does not hold:

1. `SITEGEN_CACHE_KEY`, when set (it wins);
2. else the API key (the variable `[api] key_env` names);
3. else a random per-user key in `$XDG_CACHE_HOME/sitegen/cache-key` (default
   `~/.cache/sitegen/cache-key`): outside the site folder and outside what a site's CI
   caches, created once, atomically, with mode 0600. So the demo and offline builds with
   no key in the environment stay incremental; a fresh CI machine with no secret makes a
   new key, and derives everything again (`take_fresh` lets the store's one line say why).
   As ssh treats a private key, a key file that is a link, another user's, or readable or
   writable by others, or that sits in a folder others can write to, is never used (one
   warning): someone else could know it or have put their own in place.

The MAC key is derived from the secret (`mac_key`); `tag` is the MAC of (kind, key, value),
`seal` prefixes a value with it, `unseal` gives the value back only when the tag verifies;
`key_id` is a MAC of a fixed label, which the store keeps to tell a key change (one line) from
rows edited in the cache; `ci_without_cache_key` tells a CI run that has no
`SITEGEN_CACHE_KEY` (its seal then changes with the API key). This
module must never store, print or log a secret or a key derived from one (only the random
per-user key file is written, and never into the site folder).
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import logging
import os
import secrets
import stat
from pathlib import Path

log = logging.getLogger("sitegen.cachekey")

CACHE_KEY_ENV = "SITEGEN_CACHE_KEY"
_LABEL = b"sitegen: derived data and output record, v1"
_ID_LABEL = b"sitegen: the id of this cache key, v1"
#: Environment variables that CI services set (GitHub Actions, GitLab CI, most others: CI).
_CI_VARIABLES = ("GITHUB_ACTIONS", "GITLAB_CI", "CI")
TAG_BYTES = 32


def user_key_path() -> Path:
    """Where the random per-user key is kept (`$XDG_CACHE_HOME/sitegen/cache-key`)."""
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / "sitegen" / "cache-key"


def mac_key(key_env: str | None) -> bytes | None:
    """The MAC key of a build whose API key is in *key_env* (see the module docstring).

    None only when there is no secret in the environment and no per-user key can be read
    or made (a read-only home): then nothing derived is trusted, everything is derived again.
    """
    secret = os.environ.get(CACHE_KEY_ENV, "").strip()
    if not secret and key_env:
        secret = os.environ.get(key_env, "").strip()
    raw = secret.encode("utf-8", "surrogateescape") if secret else _user_key()
    if raw is None:
        return None
    return hmac.new(raw, _LABEL, hashlib.sha256).digest()


class _UnsafeKey(Exception):
    """The per-user key file or its folder could be read or written by someone else."""


#: Key files this process refused (warned about once each) and made itself.
_refused: set[Path] = set()
_made: set[Path] = set()


def _user_key() -> bytes | None:
    """The per-user random key, made (0600, atomically: linked into place) when missing.

    Like ssh with a private key, a key file someone else could have written or read (not
    the user's, readable or writable by others, a symbolic link, or in a folder others can
    write to) is not used: one warning says which and how to fix it, and nothing derived
    is trusted (it is all derived again).
    """
    path = user_key_path()
    try:
        _check_folder(path.parent)
        found = _read_key(path)
        if found is not None:
            return found
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        _check_folder(path.parent)
        temporary = path.with_name(f".cache-key-{secrets.token_hex(8)}")
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                         0o600)
        try:
            os.write(handle, secrets.token_hex(32).encode() + b"\n")
            os.fsync(handle)
        finally:
            os.close(handle)
        try:
            os.link(temporary, path)  # fails when another build made it first: use theirs
            _made.add(path)
        except FileExistsError:
            pass
        finally:
            temporary.unlink(missing_ok=True)
        return _read_key(path)
    except _UnsafeKey as unsafe:
        if path not in _refused:
            _refused.add(path)
            log.warning("the cache key file %s %s, so it is not used and everything derived "
                        "is made again: delete it (sitegen makes a new one that only you can "
                        "read) or set %s", path, unsafe, CACHE_KEY_ENV)
        return None
    except OSError:
        return None


def _check_folder(folder: Path) -> None:
    """Raise _UnsafeKey when *folder* (when it exists) is another user's or others can
    write to it (they could put their own key in place)."""
    try:
        found = folder.lstat()
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(found.st_mode):
        raise _UnsafeKey(f"is in {folder}, which is not a folder")
    if found.st_uid != os.geteuid():
        raise _UnsafeKey(f"is in {folder}, a folder owned by another user")
    if found.st_mode & 0o022:
        raise _UnsafeKey(f"is in {folder}, a folder others can write to "
                         f"(mode {stat.S_IMODE(found.st_mode):04o})")


def _read_key(path: Path) -> bytes | None:
    """The key in *path*, None when missing or unreadable; _UnsafeKey when the file is a
    link, another user's, or others can read or write it."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _UnsafeKey("is a symbolic link") from None
        return None
    try:
        found = os.fstat(handle)
        if not stat.S_ISREG(found.st_mode):
            raise _UnsafeKey("is not a regular file")
        if found.st_uid != os.geteuid():
            raise _UnsafeKey("is owned by another user")
        if found.st_mode & 0o077:
            raise _UnsafeKey(f"can be read or written by others "
                             f"(mode {stat.S_IMODE(found.st_mode):04o})")
        with os.fdopen(os.dup(handle), "rb") as file:
            data = file.read(4096).strip()
    except OSError:
        return None
    finally:
        os.close(handle)
    return data if len(data) >= 32 else None


def key_id(key: bytes | None) -> str | None:
    """A name of *key* that reveals nothing of it (a MAC of a fixed label); None: no key."""
    return None if key is None else hmac.new(key, _ID_LABEL, hashlib.sha256).hexdigest()[:32]


def ci_without_cache_key() -> bool:
    """True on a CI runner whose environment has no `SITEGEN_CACHE_KEY`."""
    on_ci = any(os.environ.get(name, "").strip().lower() not in ("", "0", "false")
                for name in _CI_VARIABLES)
    return on_ci and not os.environ.get(CACHE_KEY_ENV, "").strip()


def take_fresh() -> bool:
    """Whether this process made a new per-user key since the last call (then forgotten):
    the store's one line about a key change says so (`storeseal.Seals.say`)."""
    made = bool(_made)
    _made.clear()
    return made


def _tag(key: bytes, kind: str, name: str, value: bytes) -> bytes:
    # keyed BLAKE2b (a MAC by design): at 16,000 article records it cost less than
    # HMAC-SHA256 (see ARCHITECTURE.md, "The cache is untrusted")
    mac = hashlib.blake2b(f"{kind}\0{name}\0".encode("utf-8", "surrogateescape"),
                          key=key, digest_size=TAG_BYTES)
    mac.update(value)
    return mac.digest()


def tag(key: bytes | None, kind: str, name: str, value: bytes) -> bytes:
    """The tag of *value* stored as *name* of *kind* (an unusable one when there is no key)."""
    return _tag(key, kind, name, value) if key is not None else bytes(TAG_BYTES)


def verifies(key: bytes | None, kind: str, name: str, value: bytes, found: object) -> bool:
    """True when *found* is the tag of *value* stored as *name* of *kind* under *key*."""
    return key is not None and isinstance(found, bytes) and hmac.compare_digest(
        found, _tag(key, kind, name, value))


def seal(key: bytes | None, kind: str, name: str, value: bytes) -> bytes:
    """*value* with its tag in front (an unusable tag when there is no key)."""
    return tag(key, kind, name, value) + value


def unseal(key: bytes | None, kind: str, name: str, sealed: bytes) -> bytes | None:
    """The value *sealed* holds when its tag verifies under *key*; else None."""
    if key is None or len(sealed) < TAG_BYTES:
        return None
    value = sealed[TAG_BYTES:]
    if not hmac.compare_digest(sealed[:TAG_BYTES], _tag(key, kind, name, value)):
        return None
    return value
