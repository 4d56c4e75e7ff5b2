"""What knowledge a chat reads, kept in its params like its other settings: the collections
(`CHAT_KEY`, in the order chosen) and the most tokens a message's excerpts may take
(`BUDGET_KEY`; absent or 0: a quarter of the chat's context). A new chat takes both from
Preferences' defaults for new chats (`Preferences.default_params`, beside the sampling ones). A
chat that names no collection reads none; names of collections removed since are kept (the
index skips them), so a collection added again under the same name is read again.
"""

from __future__ import annotations

from typing import Any

CHAT_KEY = "knowledge"
BUDGET_KEY = "knowledge_budget"


def chat_collections(params: dict[str, Any]) -> tuple[str, ...]:
    """The collections a chat reads (none when it chose none, or the value is damaged)."""
    chosen = params.get(CHAT_KEY)
    if isinstance(chosen, list) and all(isinstance(name, str) for name in chosen):
        return tuple(dict.fromkeys(chosen))
    return ()


def chat_budget(params: dict[str, Any]) -> int:
    """The tokens a chat's message may take of excerpts; 0: a quarter of its context."""
    value = params.get(BUDGET_KEY)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def knowledge_params(collections: tuple[str, ...], budget: int) -> dict[str, Any]:
    """The params that say so (nothing for what is left at none, or at a quarter)."""
    chosen = {CHAT_KEY: list(collections)} if collections else {}
    return {**chosen, **({BUDGET_KEY: budget} if budget > 0 else {})}


def with_knowledge_of(params: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """`params` reading what `defaults` (Preferences' for new chats) say a new chat reads."""
    return {**params, **knowledge_params(chat_collections(defaults), chat_budget(defaults))}
