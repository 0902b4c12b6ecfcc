"""A listening TCP socket for sitegen's local servers (the preview, the emulator).

Role: `bind` opens the socket a server hands to uvicorn, so a port already in use is one
sentence naming the port and the fix (exit 2, a usage error) before any server starts.
Asyncio sets TCP_NODELAY only on sockets made with IPPROTO_TCP (else Nagle's algorithm
delays each keep-alive answer), and a burst of connections waits in the kernel's backlog
rather than being dropped. It must never accept a connection itself.
"""

from __future__ import annotations

import errno
import socket

from sitegen.errors import ConfigError


def bind(host: str, port: int, *, backlog: int = 256) -> socket.socket:
    """A listening TCP socket on host:port (inheritable); ConfigError when it cannot be."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        if error.errno == errno.EADDRINUSE:
            raise ConfigError(f"port {port} on {host} is already in use: stop the other server "
                              "or pass --port 0 to pick a free port") from None
        raise ConfigError(f"cannot listen on {host}:{port} ({error.strerror}): "
                          "check --host and --port") from None
    sock.listen(backlog)
    sock.set_inheritable(True)
    return sock


__all__ = ["bind"]
