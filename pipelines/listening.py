"""The local HTTP servers (the simulator, `ces-pipeline mcp --http`): their uvicorn settings, and
listening sockets bound before uvicorn starts, so port 0 resolves to the real port announced."""

from __future__ import annotations

import socket
import threading
from typing import Any

import uvicorn

from pipelines import stop
from pipelines.errors import UsageError


class ListenError(UsageError, OSError):
    """The address cannot be listened on (taken, not this host's, not allowed); says which."""


SHUTDOWN_GRACE_SECONDS = 2.0
"""After Ctrl-C or SIGTERM, how long requests in flight may still finish before their connections
are closed: uvicorn's default waits for them however long (a slow answer, a stream held open)."""


def http_server(app: Any, **settings: Any) -> uvicorn.Server:
    """A uvicorn server of `app` that logs warnings only and stops within the grace after a signal."""
    config = uvicorn.Config(
        app,
        access_log=False,
        log_level="warning",
        timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
        **settings,
    )
    return uvicorn.Server(config)


def serve_foreground(server: uvicorn.Server, sock: socket.socket) -> None:
    """Serve on `sock` until Ctrl-C or SIGTERM, then close it. A stop that comes before uvicorn
    takes the signals raises KeyboardInterrupt wherever the main thread is: inside a callback whose
    exceptions Python ignores (a weak reference's), it was lost, and the server then ran for good
    (2 starts in 30 on a busy machine). The stop it recorded (`stop.requested`) ends it too."""

    def end_on_stop() -> None:
        stop.requested.wait()
        server.should_exit = True

    threading.Thread(target=end_on_stop, name="stop-server", daemon=True).start()
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


def listening_socket(host: str, port: int) -> socket.socket:
    """A listening socket on `host`:`port` (0: a free port), ready for uvicorn's `sockets=`."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ListenError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(2048)
    sock.setblocking(False)
    return sock


def endpoint_url(sock: socket.socket, path: str) -> str:
    """The http URL of `path` on the socket's real address."""
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{path}"
