"""Running the simulator: in a background thread for tests and demos, or in the foreground for the CLI.

Both bind the socket themselves before uvicorn starts, so port 0 resolves to the real port that
is then announced, and both switch uvicorn's access log off (request lines would be harmless, but
nothing about requests needs to be logged, and headers never are).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import uvicorn

from pipelines.ces.simulator.corpus.scale import SimulatorScale
from pipelines.ces.simulator.server import MCP_PATH, SimulatorConfig, SimulatorState, create_app
from pipelines.listening import endpoint_url, http_server, listening_socket, serve_foreground

_STARTUP_TIMEOUT_SECONDS = 15.0


@dataclass(frozen=True)
class SimulatorHandle:
    """A running simulator: where it listens and what it serves."""

    url: str
    """The MCP endpoint, e.g. http://127.0.0.1:PORT/mcp."""
    config: SimulatorConfig

    @property
    def scale(self) -> SimulatorScale:
        return self.config.scale

    @property
    def apps(self) -> tuple[str, ...]:
        """App resource names, as a user puts them in CES_APPS."""
        return self.config.scale.app_names


def _server(config: SimulatorConfig) -> uvicorn.Server:
    app = create_app(config, SimulatorState())
    return http_server(app, lifespan="off")


@contextmanager
def running_simulator(
    config: SimulatorConfig | None = None, host: str = "127.0.0.1", port: int = 0
) -> Iterator[SimulatorHandle]:
    """Serve the simulator from a background thread while the block runs; stop it cleanly afterwards."""
    config = config or SimulatorConfig()
    sock = listening_socket(host, port)
    server = _server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="ces-simulator", daemon=True
    )
    thread.start()
    try:
        deadline = time.monotonic() + _STARTUP_TIMEOUT_SECONDS
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the CES simulator failed to start")
            time.sleep(0.005)
        yield SimulatorHandle(endpoint_url(sock, MCP_PATH), config)
    finally:
        server.should_exit = True
        thread.join(timeout=_STARTUP_TIMEOUT_SECONDS)
        sock.close()


def print_endpoint(url: str, apps: Sequence[str]) -> None:
    """The URL, then each app, a line each: what a script that started the simulator reads."""
    print(url, *apps, sep="\n", flush=True)  # flushed: often read through a pipe


def serve(
    config: SimulatorConfig | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    announce: Callable[[str, Sequence[str]], None] = print_endpoint,
) -> None:
    """Serve in the foreground until interrupted. Once listening, announce the endpoint URL and the
    app resource names, so a user knows what to set as CES_MCP_URL and CES_APPS."""
    config = config or SimulatorConfig()
    sock = listening_socket(host, port)
    server = _server(config)
    announce(endpoint_url(sock, MCP_PATH), config.scale.app_names)
    serve_foreground(server, sock)
