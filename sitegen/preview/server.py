"""`sitegen serve`: build, serve the last good build, watch, rebuild and live-reload.

Role: wire the preview together for one run and own its threads — bind the port first (a port in
use is a ConfigError naming it; `--port 0` picks a free one), print the URL, serve at once (a
waiting page until the first build lands), build, watch the sources, refresh content every
`--refresh-every` minutes, and on Ctrl-C (or SIGTERM) stop every thread and join it (a rebuild
in progress ends at once: the stop event is its `BuildOptions.stop`), print one summary line and
exit 0 with no traceback. The preview builds into `.sitegen/preview/` beside
site.toml, or with `--drafts` (the workspace's drafts too, at `/drafts/`) into
`preview-drafts/` in the store's folder, `[api] cache_dir` (see `builder.py`). This module must
never contain build, routing or watching logic.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from sitegen.config import Config, resolve_config
from sitegen.errors import ConfigError
from sitegen.fetch.drafts import DraftFetcher
from sitegen.logs import is_quiet, say
from sitegen.preview.builder import SiteBuilder, drafts_output, preview_config, preview_output
from sitegen.preview.fresh import FreshPages
from sitegen.preview.httpserver import PreviewServer
from sitegen.preview.reload import ReloadChannel
from sitegen.preview.session import PreviewSession
from sitegen.preview.watch import Watcher

log = logging.getLogger("sitegen.preview")


class _OncePerSession(logging.Filter):
    """Lets each distinct warning through once: rebuilds would otherwise repeat them all."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: set[tuple[str, str]] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.WARNING or record.name == "sitegen.preview":
            return True
        key = (record.name, record.getMessage())
        if key in self._seen:
            return False
        self._seen.add(key)
        return True


@contextmanager
def _stop_signals(stop: threading.Event) -> Iterator[None]:
    """SIGTERM stops like Ctrl-C; handlers exist only on the main thread. Ctrl-C sets *stop*
    before it raises KeyboardInterrupt: a KeyboardInterrupt raised while the collector runs a
    finalizer (a closed connection's transport, say, after a build) is printed and dropped,
    and the preview must stop all the same."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    owner = os.getpid()

    def on_int(signum: int, frame: FrameType | None) -> None:
        stop.set()
        raise KeyboardInterrupt

    def on_term(signum: int, frame: FrameType | None) -> None:
        if os.getpid() != owner:  # a forked child inherited this handler: end as SIGTERM means
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        stop.set()

    previous = signal.signal(signal.SIGTERM, on_term)
    interrupt = signal.getsignal(signal.SIGINT)
    if interrupt is not signal.SIG_IGN:  # (started in the background by a shell: left so)
        signal.signal(signal.SIGINT, on_int)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        if interrupt is not signal.SIG_IGN:
            signal.signal(signal.SIGINT, interrupt)


def _force_on_second_interrupt() -> None:
    if threading.current_thread() is not threading.main_thread():
        return

    def force(signum: int, frame: FrameType | None) -> None:
        import multiprocessing

        for child in multiprocessing.active_children():  # render workers ignore SIGINT
            child.kill()
        print("preview: stopped without waiting", file=sys.stderr, flush=True)
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # the kernel ends the process at once
        os.kill(os.getpid(), signal.SIGINT)

    signal.signal(signal.SIGINT, force)


def _refresher(stop: threading.Event, minutes: float, refresh: Callable[[], None]
               ) -> threading.Thread:
    def loop() -> None:
        while not stop.wait(minutes * 60.0):
            refresh()

    return threading.Thread(target=loop, name="sitegen-refresh", daemon=False)


def _stored_counts(config: Config) -> dict[str, int | None] | None:
    """The record counts of the stored workspace (None: nothing usable stored yet)."""
    from sitegen.fetch.stored import DamagedStore, load_workspace, peek_config_store

    store = peek_config_store(config)
    if store is None:
        return None
    try:
        workspace = load_workspace(store)
    except DamagedStore:
        return None
    finally:
        store.close()
    if workspace is None:
        return None
    lists = {"agents": workspace.agents, "clusters": workspace.clusters,
             "authors": workspace.authors, "social_posts": workspace.social_posts}
    return {kind: None if items is None else len(items) for kind, items in lists.items()}


def _print_refresh_cost(config: Config, minutes: float, demo: bool, drafts: bool,
                        quiet: bool) -> None:
    """Say what the background refresh spends a month (it is off unless --refresh-every)."""
    from sitegen.budget import refresh_cost

    counts = None if demo else _stored_counts(config)
    say(refresh_cost(config, minutes, counts, drafts=drafts), quiet)


def _check(options: argparse.Namespace) -> None:
    if options.refresh_every < 0:
        raise ConfigError("--refresh-every must be 0 (never) or a number of minutes")
    if not 0 <= options.port <= 65535:
        raise ConfigError(f"--port {options.port} is not a port number: use 1-65535, or 0")
    if options.drafts and options.offline:
        raise ConfigError("--drafts fetches the workspace's drafts, which --offline forbids: "
                          "drop one of them")


def serve_command(options: argparse.Namespace) -> int:
    """Run the preview until interrupted; returns 0 after a clean stop."""
    _check(options)
    config_path = str(options.config)
    demo = bool(options.demo)
    first = resolve_config(config_path, demo)  # a ConfigError stops here, before anything
    if options.offline:  # an empty store stops here too, before the URL is printed
        from sitegen.fetch.stored import require_stored

        require_stored(first)
    drafts = bool(options.drafts)
    output = drafts_output(first) if drafts else preview_output(first)
    channel = ReloadChannel()
    fresh = FreshPages(channel)
    server = PreviewServer(options.host, options.port, output, channel, fresh)
    url = server.url

    def load() -> Config:
        return preview_config(resolve_config(config_path, demo), url)

    stop = threading.Event()  # set on Ctrl-C or SIGTERM: every thread ends, a rebuild too
    builder = SiteBuilder(output, demo=demo, offline=bool(options.offline), fresh=fresh,
                          stop=stop, drafts=DraftFetcher() if drafts else None)
    session = PreviewSession(load_config=load, build=builder, channel=channel,
                             config_file=Path(config_path), excluded=(output,),
                             can_fetch=not options.offline)
    once = _OncePerSession()
    for handler in logging.getLogger("sitegen").handlers:
        handler.addFilter(once)

    watcher = Watcher(session.plan, session.apply)
    refresher = (_refresher(stop, options.refresh_every, session.refresh)
                 if options.refresh_every > 0 and not options.offline else None)
    started: list[threading.Thread] = []
    quiet = is_quiet(options)
    shown = f"{url}  drafts: {url}drafts/" if drafts else url
    say(f"sitegen preview: {shown}  (Ctrl-C to stop)", quiet)
    if refresher is not None:
        _print_refresh_cost(first, options.refresh_every, demo, drafts, quiet)
    try:
        with _stop_signals(stop):
            server.start()
            session.start()
            watcher.start()
            if refresher is not None:
                refresher.start()
                started.append(refresher)
            while not stop.wait(0.5):
                pass
    except KeyboardInterrupt:
        pass
    finally:
        _force_on_second_interrupt()
        stop.set()
        watcher.stop()
        channel.close()
        server.stop()
        for thread in started:
            thread.join()
        for handler in logging.getLogger("sitegen").handlers:
            handler.removeFilter(once)
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.default_int_handler)
    log.info(session.stats.line())
    return 0
