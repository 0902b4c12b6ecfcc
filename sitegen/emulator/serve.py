"""`sitegen emulate`: the emulator served over real HTTP with uvicorn.

Role: read the workspace JSON (`--data FILE`, else the bundled demo), bind the socket (port 0
picks a free one), print one line saying where the emulator listens, log each request compactly,
follow the `--data` file as it changes (`reload.py`) and stop cleanly on Ctrl-C. A port in use
or an unreadable data file is a `ConfigError` naming it and the fix. It must never print the
`--key` value.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import socket
import sys
from pathlib import Path
from typing import Any

import uvicorn

from sitegen.emulator.app import create_app
from sitegen.emulator.demo import load_demo
from sitegen.emulator.faults import Faults
from sitegen.emulator.query import is_object_id
from sitegen.emulator.reload import DataReloader
from sitegen.emulator.state import EmulatorState
from sitegen.errors import ConfigError
from sitegen.listening import bind
from sitegen.logs import is_quiet, say

logger = logging.getLogger("sitegen.emulator")


def read_data(path: str | None) -> dict[str, Any]:
    """The workspace JSON of `--data`, or the bundled demo; ConfigError naming a bad file."""
    if path is None:
        return load_demo()
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"--data file {path} does not exist; pass a workspace JSON file "
                          "or leave --data out to serve the demo workspace") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"--data file {path} cannot be read ({error.__class__.__name__}); "
                          "pass a readable UTF-8 workspace JSON file") from None
    try:
        data = json.loads(text)
    except ValueError as error:
        raise ConfigError(f"--data file {path} is not valid JSON ({error}); fix the file or "
                          "generate one with `python -m sitegen.emulator.generator`") from None
    except RecursionError:
        raise ConfigError(f"--data file {path} is nested too deeply to read; fix the file or "
                          "generate one with `python -m sitegen.emulator.generator`") from None
    workspace = data.get("workspace") if isinstance(data, dict) else None
    if not isinstance(workspace, dict) or not is_object_id(workspace.get("id")):
        raise ConfigError(f"--data file {path} has no 'workspace' object with a 24-hex 'id'; "
                          "see demo-workspace-format.md for the format")
    return dict(data)


def url_of(host: str, port: int) -> str:
    """The base URL a client uses for host:port."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


async def _serve(server: uvicorn.Server, sock: socket.socket, state: EmulatorState,
                 reloader: DataReloader | None) -> None:
    """Serve until the server stops, polling the `--data` file meanwhile."""
    polling = asyncio.create_task(reloader.run(state)) if reloader is not None else None
    try:
        await server.serve(sockets=[sock])
    finally:
        if polling is not None:
            polling.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await polling


def emulate_command(options: argparse.Namespace) -> int:
    """Run the emulator until Ctrl-C; returns the exit status."""
    reloader = DataReloader(options.data, read_data) if options.data else None
    data = read_data(options.data)
    quiet = is_quiet(options)
    faults = Faults(latency_ms=options.latency, fail_rate=options.fail_rate,
                    rate_limit_every=options.rate_limit_every, quota=options.quota,
                    no_v2=options.no_v2, no_owner_fields=options.no_owner_fields,
                    seed=options.seed)
    app = create_app(data, key=options.key, faults=faults, log_requests=True)
    sock = bind(options.host, options.port)
    port = sock.getsockname()[1]
    workspace = data["workspace"]
    say(f'emulating workspace {workspace.get("id")} "{workspace.get("name", "")}" at '
        f"{url_of(options.host, port)} (v1 + v2)", quiet)
    config = uvicorn.Config(app, log_config=None, access_log=False, log_level="warning",
                            lifespan="off")
    server = uvicorn.Server(config)
    try:
        asyncio.run(_serve(server, sock, app.state.emulator, reloader))
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    say("emulator stopped", quiet, stream=sys.stderr)
    return 0
