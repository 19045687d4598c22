"""The simulated CES MCP server (Streamable HTTP, JSON-RPC 2.0) over the synthetic data."""

from pipelines.ces.simulator.server.app import MCP_PATH, create_app
from pipelines.ces.simulator.server.config import FaultInjector, ResponseMode, SimulatorConfig
from pipelines.ces.simulator.server.state import SimulatorState

__all__ = ["MCP_PATH", "FaultInjector", "ResponseMode", "SimulatorConfig", "SimulatorState", "create_app"]
