"""``knowgap serve``: the web app (app.py) on uvicorn.

The socket is bound here, before uvicorn starts, so a port in use is one clear error and ``--port 0`` knows its
port before the first request. uvicorn runs with its pure-Python HTTP/1.1 parser (h11: a malformed request line
or header, such as ``Content-Length: abc`` or ``-1``, gets 400 from it and never reaches the app), no access log
(a browser's first request carries the token in its query), and idle keep-alive connections closed after 5 s.
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import uvicorn

from knowgap.errors import KnowgapError
from knowgap.paths import runs_dir
from knowgap.web.access import Access
from knowgap.web.app import create_app
from knowgap.web.body import BodyLimits
from knowgap.web.data import RunsView

KEEP_ALIVE_SECONDS = 5
SHUTDOWN_GRACE_SECONDS = 5
"""On Ctrl-C, requests in flight get this long to finish."""


class KnowgapServer:
    """A bound web app: ``serve_forever()`` serves it until ``shutdown()`` (from another thread) or Ctrl-C."""

    def __init__(self, sock: socket.socket, view: RunsView, access: Access, limits: BodyLimits,
                 host: str | None = None) -> None:
        self.socket = sock
        self.host = host
        self.access = access
        self.server_address: tuple[str, int] = sock.getsockname()[:2]
        config = uvicorn.Config(create_app(view, access, limits), http="h11", ws="none", lifespan="off",
                                loop="asyncio", access_log=False, log_config=None, log_level="warning",
                                timeout_keep_alive=KEEP_ALIVE_SECONDS,
                                timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS, server_header=False)
        self.uvicorn = uvicorn.Server(config)
        self._done = threading.Event()
        self._started = False

    @property
    def url(self) -> str:
        """The address as the user gave it (a name stays a name), with the port bound."""
        host, port = self.host or self.server_address[0], self.server_address[1]
        host = host.strip("[]")
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    def serve_forever(self) -> None:
        self._started = True
        try:
            self.uvicorn.run(sockets=[self.socket])
        finally:
            self._done.set()

    def shutdown(self, timeout: float = 15.0) -> None:
        """Stop serving (from another thread) and wait for ``serve_forever`` to return."""
        self.uvicorn.should_exit = True
        if self._started:
            self._done.wait(timeout)

    def server_close(self) -> None:
        self.socket.close()


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (a name: its first address), or one clear error."""
    sock = None
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
        return sock
    except OSError as exc:
        if sock is not None:
            sock.close()
        raise KnowgapError(f"cannot listen on {host}:{port} ({exc.strerror or exc}); try another --port "
                           "or --host") from None


def make_server(runs_root: str | Path | None = None, host: str = "127.0.0.1", port: int = 8765,
                token: str | None = None, limits: BodyLimits | None = None) -> KnowgapServer:
    """The web app over the runs folder, bound to ``host:port`` (port 0: a free one). ``token``: required of
    every request (see access.py); off loopback one is generated when none is given (``server.access.token``)."""
    root = runs_dir(runs_root)
    if not root.exists():
        raise KnowgapError(f"no runs folder {root}: run a suite first, or pass --runs-dir")
    access = Access.for_host(host, token)
    return KnowgapServer(bind(host, port), RunsView(root), access, limits or BodyLimits(), host)
