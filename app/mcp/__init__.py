"""Tools for models: MCP servers (the `mcpServers` config, connections, results), remembered
tool approvals, the built-in `search_conversations` tool and the `branchwise tools` command.

Non-GUI. May import the standard library, the `mcp` SDK (only in `connection.py`, whose import costs
half a second, so the rest stays light), jsonschema, `app.store.conversations`, `app.paths` and
`app.kept_files`; never Qt widgets, `ui` or `inference`.
"""
