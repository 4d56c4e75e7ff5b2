"""Knowledge in a chat: which collections a chat reads (`choice`), the retrieval run once for
each new user message and kept on it before its reply starts (`turns`), each reply's sources
as the window shows them, with "changed since" (`sources`), and the built-in `search_knowledge`
and `read_document` tools (`tools`).

Part of `app.chat`, under its import rules.
"""
