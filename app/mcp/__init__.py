"""Tools for models: MCP servers (the `mcpServers` config, connections, results), remembered
tool approvals, the built-in `search_conversations` tool and the `branchwise tools` command.

May import: `mcp`, `mcp_types` and `httpx2` (the SDK, only in `connection.py` and `errors.py`,
whose import costs half a second, so the rest stays light), `jsonschema`, `app.store`,
`app.paths`, `app.sizes` and `app.kept_files`.

Non-GUI: never Qt widgets, `ui` or `inference`.
"""
