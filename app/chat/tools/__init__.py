"""Tool use in a chat: which tools a chat offers (`choice`), the MCP servers and approvals
(`session`), running one call (`runs`), the loop that asks, runs and stores each call's result
(`flow`, reading where a chat stands from the tree: `turns`), what the tool card is told
(`payloads`), and all of it as the controller composes it (`chat_tools`).

Part of `app.chat`, under its import rules.
"""
