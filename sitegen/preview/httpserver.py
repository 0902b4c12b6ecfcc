"""The preview's HTTP server: uvicorn serving `app.py`'s application from a thread.

Role: bind the listening socket at once (a port in use is a `ConfigError` naming it and
`--port 0`), say the URL, and run uvicorn (asyncio loop, h11) on that socket in one thread
until `stop`. Work is bounded: at most `MAX_REQUESTS` requests are answered at once, one
beyond them gets a 503 (`requestcap.RequestCap`: only whole requests count, so connections
that send nothing or a byte at a time never take a real request's place), and a connection
whose request line and headers have not all arrived `HEADER_TIMEOUT` seconds after it opened
(or after its last answer) is closed (`headerdeadline.HeaderDeadline`), so silent or trickling
clients hold nothing for long; the event streams have their own cap (`app.MAX_STREAMS`). Ctrl-C
sets the server's `should_exit`, and a response under way has `SHUTDOWN_GRACE` seconds to end.
Only uvicorn's public `Config` and `Server` are used, never its protocol modules. It must never
write a file, and never decide what a request is answered (that is `app.py`'s and `routing.py`'s).
"""

from __future__ import annotations

import threading
from pathlib import Path

import uvicorn

from sitegen.listening import bind
from sitegen.preview.app import create_app
from sitegen.preview.fresh import FreshPages
from sitegen.preview.headerdeadline import HeaderDeadline
from sitegen.preview.reload import ReloadChannel
from sitegen.preview.requestcap import RequestCap
from sitegen.preview.routing import host_allowed

HEADER_TIMEOUT = 10.0  # seconds for a request's line and headers to arrive
#: Requests answered at once (event streams included); one beyond them is answered 503.
MAX_REQUESTS = 64
SHUTDOWN_GRACE = 5  # seconds a response under way may take to finish when the preview stops


class PreviewServer:
    """The preview's listening socket and the uvicorn server that answers on it."""

    def __init__(self, host: str, port: int, root: Path, channel: ReloadChannel,
                 fresh: FreshPages | None = None) -> None:
        self.given_host = host
        self.root = root
        self.channel = channel
        sock = bind(host, port)
        bound_host, bound_port = sock.getsockname()[:2]
        self.server_name = str(bound_host)
        self.server_port = int(bound_port)
        app = HeaderDeadline(RequestCap(create_app(root, channel, fresh, self.allows_host,
                                                   self.url), MAX_REQUESTS), HEADER_TIMEOUT)
        self._socket = app.watch(sock)
        config = uvicorn.Config(app, loop="asyncio", http="h11", lifespan="off",
                                log_config=None, log_level="error", access_log=False,
                                server_header=False,
                                timeout_graceful_shutdown=SHUTDOWN_GRACE)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, name="sitegen-http", daemon=False)

    @property
    def url(self) -> str:
        """The address to open in a browser."""
        host = f"[{self.server_name}]" if ":" in self.server_name else self.server_name
        return f"http://{host}:{self.server_port}/"

    def allows_host(self, header: str | None) -> bool:
        """Whether a request's `Host` names this server (see `routing.host_allowed`)."""
        return host_allowed(header, self.server_name, self.given_host, self.server_port)

    def start(self) -> None:
        """Answer requests from now on (in the server's own thread)."""
        self._thread.start()

    def _run(self) -> None:
        try:
            self._server.run(sockets=[self._socket])
        finally:
            self._socket.close()

    def stop(self) -> None:
        """Stop answering, close every connection and join the server's thread; the channel
        should be closed first, so the event streams end rather than wait out the grace."""
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join()
        self._socket.close()
