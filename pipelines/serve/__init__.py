"""The warehouse served to agents over MCP (`ces-pipeline mcp`): read-only tools, capped answers."""
