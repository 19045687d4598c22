"""The HTTP face of the simulator: POST /mcp (MCP Streamable HTTP), as a Starlette ASGI app.

Per request, in order: bearer-token check (when configured), method (POST; DELETE ends a
session; GET, the optional server-to-client stream, is not offered), Accept negotiation, JSON-RPC
parsing, session check (when sessions are required), notifications acknowledged with 202, the
era of the request, the answer, and its framing (JSON or SSE). Nothing here logs headers, so
tokens and session ids never reach a log.
"""

from __future__ import annotations

import hmac

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp

from pipelines.ces.simulator.server.config import SimulatorConfig
from pipelines.ces.simulator.server.framing import accepted_media, json_response, sse_response, use_sse
from pipelines.ces.simulator.server.jsonrpc import (
    INVALID_REQUEST,
    MODERN_HTTP_STATUS,
    RpcError,
    error_body,
    notification_body,
    parse_message,
    reply_lines,
)
from pipelines.ces.simulator.server.protocol import McpProtocol, modern_version
from pipelines.ces.simulator.server.state import SimulatorState
from pipelines.ces.simulator.server.tools import ToolBox

MCP_PATH = "/mcp"
SESSION_HEADER = "mcp-session-id"


def _google_error(status: int, reason: str, message: str, headers: dict[str, str] | None = None) -> Response:
    """An error in the shape Google front ends use for HTTP-level failures."""
    body = orjson.dumps({"error": {"code": status, "message": message, "status": reason}})
    return json_response(body, status, headers)


class McpEndpoint:
    def __init__(self, config: SimulatorConfig, state: SimulatorState):
        self.config = config
        self.state = state
        self.protocol = McpProtocol(ToolBox(config, state))

    async def handle(self, request: Request) -> Response:
        denied = self._authenticate(request)
        if denied is not None:
            return denied
        if request.method == "DELETE":
            return self._end_session(request)
        if request.method != "POST":
            return Response(status_code=405, headers={"Allow": "POST, DELETE"})
        return await self._post(request)

    def _authenticate(self, request: Request) -> Response | None:
        token = self.config.required_token
        if token is None:
            return None
        supplied = request.headers.get("authorization", "")
        challenge = {"WWW-Authenticate": 'Bearer realm="https://accounts.google.com/"'}
        if not supplied.lower().startswith("bearer "):
            return _google_error(
                401,
                "UNAUTHENTICATED",
                "Request is missing required authentication credential. Expected OAuth 2 access "
                "token, login cookie or other valid authentication credential.",
                challenge,
            )
        if not hmac.compare_digest(supplied[7:].strip().encode(), token.encode()):
            return _google_error(
                401,
                "UNAUTHENTICATED",
                "Request had invalid authentication credentials.",
                {"WWW-Authenticate": challenge["WWW-Authenticate"] + ', error="invalid_token"'},
            )
        return None

    def _end_session(self, request: Request) -> Response:
        if not self.config.require_session:
            return Response(status_code=405, headers={"Allow": "POST"})
        if self.state.close_session(request.headers.get(SESSION_HEADER, "")):
            return Response(status_code=200)
        return self._error(None, RpcError(INVALID_REQUEST, "Session not found"), 404)

    @staticmethod
    def _error(request_id: str | int | None, error: RpcError, status: int) -> Response:
        return json_response(error_body(request_id, error), status)

    def _session_headers(self, request: Request, method: str) -> dict[str, str]:
        """The session header to send back (a new session on initialize); raises when a session is missing."""
        if not self.config.require_session:
            return {}
        if method == "initialize":
            return {SESSION_HEADER: self.state.open_session()}
        session_id = request.headers.get(SESSION_HEADER)
        if not session_id:
            raise RpcError(INVALID_REQUEST, "Bad Request: Missing session ID", http_status=400)
        if not self.state.has_session(session_id):
            raise RpcError(INVALID_REQUEST, "Session not found", http_status=404)
        return {}

    async def _post(self, request: Request) -> Response:
        accepts_json, accepts_sse = accepted_media(request.headers.get("accept", ""))
        if not (accepts_json or accepts_sse):
            return self._error(
                None,
                RpcError(
                    INVALID_REQUEST,
                    "Not Acceptable: client must accept application/json or text/event-stream",
                ),
                406,
            )
        try:
            message = parse_message(await request.body())
            session_headers = self._session_headers(request, message.method)
        except RpcError as error:
            return self._error(None, error, error.http_status)
        if message.is_notification:
            return Response(status_code=202)
        try:
            modern = modern_version(message, request.headers)
        except RpcError as error:
            return self._error(message.id, error, error.http_status)
        try:
            outcome = self.protocol.handle(message, modern)
        except RpcError as error:
            return self._error(message.id, error, MODERN_HTTP_STATUS.get(error.code, 200) if modern else 200)

        reply = reply_lines(message.id, outcome.result)
        number = self.state.next_response_number()
        if use_sse(self.config.response_mode, number, accepts_json, accepts_sse):
            notifications = [notification_body(method, params) for method, params in outcome.notifications]
            return sse_response(notifications, reply, multiline=number // 2 % 2 == 0, headers=session_headers)
        return json_response(b"".join(reply), headers=session_headers)


def create_app(config: SimulatorConfig | None = None, state: SimulatorState | None = None) -> ASGIApp:
    """The simulator as an ASGI app; `config.faults`, when set, wraps it outermost."""
    config = config or SimulatorConfig()
    endpoint = McpEndpoint(config, state or SimulatorState())
    app: ASGIApp = Starlette(routes=[Route(MCP_PATH, endpoint.handle, methods=["GET", "POST", "DELETE"])])
    return config.faults(app) if config.faults else app
