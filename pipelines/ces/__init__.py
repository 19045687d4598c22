"""The CES source: MCP client, typed tool calls and the local simulator."""
