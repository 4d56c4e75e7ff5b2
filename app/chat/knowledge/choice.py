"""Which knowledge collections a chat reads: its own choice, kept in its params under
`CHAT_KEY` (a new chat starts with the default from Preferences), in the order chosen. A chat
that names none reads none; names of collections removed since are kept (the index skips
them), so a collection added again under the same name is read again.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

CHAT_KEY = "knowledge"


def chat_collections(params: dict[str, Any]) -> tuple[str, ...]:
    """The collections a chat reads (none when it chose none, or the value is damaged)."""
    chosen = params.get(CHAT_KEY)
    if isinstance(chosen, list) and all(isinstance(name, str) for name in chosen):
        return tuple(dict.fromkeys(chosen))
    return ()


def with_collections(params: dict[str, Any], names: Iterable[str]) -> dict[str, Any]:
    """`params` reading `names` (a new chat's, from Preferences' default)."""
    chosen = list(dict.fromkeys(names))
    return {**params, CHAT_KEY: chosen} if chosen else params
