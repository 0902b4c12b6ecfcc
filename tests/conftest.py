"""What every test runs under: no name is resolved but loopback's, and sitegen's per-user
cache key (`sitegen.cachekey`) is kept under the tests' temporary folder, not the user's home.

Tests talk to loopback only (the emulator, fake image hosts, the preview, moto's S3). The
generated workspaces name images on `images.example.com`: a lookup of such a name would go to
the machine's resolver, which may answer at once, or after its five-second timeout. Every
lookup of another name fails at once here, as a name that does not exist does.

Ctrl-C reaches every command the tests start. A suite started in the background by a script
(`pytest &` in a shell without job control) inherits SIGINT ignored, and so would every
`sitegen` it starts, which would then never stop on the Ctrl-C the interrupt tests send. The
suite takes SIGINT back (its children then start with the default action).
"""

from __future__ import annotations

import signal
import socket
from collections.abc import Iterator
from typing import Any

import pytest

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

_LOOPBACK = {"localhost", "127.0.0.1", "::1", "0.0.0.0", ""}
_real_getaddrinfo = socket.getaddrinfo


def _loopback_only(host: Any, *args: Any, **kwargs: Any) -> Any:
    name = host.decode() if isinstance(host, bytes) else host
    if name is not None and str(name).lower().rstrip(".") not in _LOOPBACK \
            and not str(name).startswith("127."):
        raise socket.gaierror(socket.EAI_NONAME, f"tests resolve loopback only, not {name}")
    return _real_getaddrinfo(host, *args, **kwargs)


@pytest.fixture(autouse=True)
def _no_dns(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(socket, "getaddrinfo", _loopback_only)
    yield


@pytest.fixture(autouse=True)
def _cache_key_home(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory,
                    ) -> None:
    """The per-user cache key of the builds a test runs (in process and in subprocesses)
    is made in the test session's temporary folder; no secret from the environment."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg-cache"))
    monkeypatch.delenv("SITEGEN_CACHE_KEY", raising=False)


_PROCESSED: dict[tuple[bytes, object], Any] = {}


@pytest.fixture(autouse=True)
def _images_processed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The images stage's encodes, done once per (source bytes, settings) in a test process:
    most builds of the demo in the suite make the same thirteen images their own, and their
    encoding is deterministic (the image tests that count encodes still see every call;
    what is not made, or refused, is never remembered here)."""
    import hashlib

    from sitegen.images import variants
    from sitegen.images.process import Processed

    real = variants.process_all

    def memoized(jobs: dict[str, bytes], settings: Any, limits: Any) -> dict[str, Any]:
        keys = {d: (hashlib.sha256(data).digest(), settings) for d, data in jobs.items()}
        found = {d: _PROCESSED[k] for d, k in keys.items() if k in _PROCESSED}
        rest = {d: data for d, data in jobs.items() if d not in found}
        made = real(rest, settings, limits) if rest else {}
        for digest, result in made.items():
            if isinstance(result, Processed):
                _PROCESSED[keys[digest]] = result
        return {**found, **made}

    monkeypatch.setattr(variants, "process_all", memoized)
