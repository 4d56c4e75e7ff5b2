"""The built-in tool `search_conversations`: the person's chats, every branch, through the
store's full-text search. It needs no server; its results are short plain text."""

from __future__ import annotations

import time
from typing import Any

from app.mcp.config import BUILTIN_SERVER
from app.mcp.results import ToolFailure, ToolResult
from app.mcp.tool_info import ToolInfo
from app.store.conversations import Store
from app.store.records import StoreError

DEFAULT_LIMIT = 5
MAX_LIMIT = 20
SNIPPET_CHARS = 300

# What the built-in tools are: they read the person's data and reach nothing outside.
READ_ONLY = {"read_only_hint": True, "open_world_hint": False}


def search_schema(query: str, found: str, default: int, most: int) -> dict[str, Any]:
    """The arguments of a built-in search: a `query` (`query` says what it is), and how many
    `found` to return at most (`limit`, 1 to `most`, `default` when not given)."""
    return {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": query},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": most,
                "description": f"how many {found} to return (default {default})",
            },
        },
        "required": ["query"],
    }


SEARCH_TOOL = ToolInfo(
    BUILTIN_SERVER,
    "search_conversations",
    description=(
        "Search the user's earlier conversations with you (every branch of every chat) for "
        "words. Returns the best matches with the chat's title and an excerpt."
    ),
    input_schema=search_schema("the words to look for", "matches", DEFAULT_LIMIT, MAX_LIMIT),
    title="Search conversations",
    annotations=READ_ONLY,
)


def search_conversations(store: Store, arguments: dict[str, Any]) -> ToolResult:
    """Run the search; bad arguments or a store error come back as an error result."""
    started = time.monotonic()
    query = arguments.get("query") if isinstance(arguments, dict) else None
    limit = arguments.get("limit", DEFAULT_LIMIT) if isinstance(arguments, dict) else None
    if not isinstance(query, str) or not query.strip():
        return ToolResult(
            'search_conversations needs a "query": the words to look for.',
            ToolFailure.BAD_ARGUMENTS,
        )
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        return ToolResult(
            f'"limit" must be a whole number from 1 to {MAX_LIMIT}.', ToolFailure.BAD_ARGUMENTS
        )
    try:
        hits = store.search(query, limit)
    except StoreError as exc:
        return ToolResult(f"The search failed: {exc}", ToolFailure.TOOL)
    elapsed = time.monotonic() - started
    if not hits:
        return ToolResult(f"No conversation mentions {query.strip()!r}.", None, elapsed)
    lines = [f"{len(hits)} match{'es' if len(hits) > 1 else ''} for {query.strip()!r}:"]
    for number, hit in enumerate(hits, 1):
        where = f"chat {hit.conversation_id}"
        if hit.message_id is None:
            lines.append(f'{number}. "{hit.title}" ({where}; the title matches)')
            continue
        excerpt = " ".join(hit.snippet.split())[:SNIPPET_CHARS]
        lines.append(f'{number}. "{hit.title}" ({where}, message {hit.message_id}): {excerpt}')
    return ToolResult("\n".join(lines), None, elapsed)
