"""A faithful local simulator of Google's CES MCP server, serving deterministic synthetic data.

`corpus` generates the data (pure functions of a `SimulatorScale`), `server` speaks MCP over
Streamable HTTP, `runner` starts it in the background (`running_simulator`) or the foreground
(`serve`, behind `ces-pipeline simulate`).
"""

from pipelines.ces.simulator.corpus import SimulatorScale
from pipelines.ces.simulator.runner import SimulatorHandle, running_simulator, serve
from pipelines.ces.simulator.server import SimulatorConfig, create_app

__all__ = ["SimulatorConfig", "SimulatorHandle", "SimulatorScale", "create_app", "running_simulator", "serve"]
