"""The store's records turned into the widgets' view models (string ids, plain values).

Sibling positions come from one read of the conversation's whole tree rather than a
`store.siblings` call per message, so a 500-message conversation costs two queries, not 500.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from ui.view_models import AttachmentView, ConversationRow, MessageView, SearchHit

if TYPE_CHECKING:
    from app.store import Conversation, Message
    from app.store import SearchHit as StoreSearchHit


def message_views(path: Sequence[Message], tree: Iterable[Message]) -> list[MessageView]:
    """The active path as MessageViews, each with its `index/count` among its siblings."""
    children: dict[int | None, list[int]] = defaultdict(list)
    for message in tree:  # parents first, ids ascending: the order store.siblings uses
        children[message.parent_id].append(message.id)
    left_out = _left_out(path)
    views = []
    for message in path:
        siblings = children[message.parent_id]
        views.append(
            MessageView(
                id=str(message.id),
                role=message.role,
                content=message.content,
                status=message.status,
                sibling_index=siblings.index(message.id) + 1 if message.id in siblings else 1,
                sibling_count=max(1, len(siblings)),
                stats=message.stats,
                error=message.error,
                left_out=message.id in left_out,
                reasoning=message.reasoning,
                attachments=tuple(AttachmentView(**item) for item in message.attachments),
            )
        )
    return views


def _left_out(path: Sequence[Message]) -> set[int]:
    """The messages the overflow policy left out of the latest finished reply's prompt."""
    for message in reversed(path):
        if message.role == "assistant" and message.stats:
            return set(message.stats.get("dropped_message_ids", ()))
    return set()


def conversation_rows(conversations: Iterable[Conversation]) -> list[ConversationRow]:
    return [
        ConversationRow(
            id=str(c.id),
            title=c.title,
            pinned=c.pinned,
            updated_at=datetime.fromtimestamp(c.updated_at),
        )
        for c in conversations
    ]


def search_hits(hits: Iterable[StoreSearchHit]) -> list[SearchHit]:
    """A title match has no message: its message id is the empty string."""
    return [
        SearchHit(
            conversation_id=str(hit.conversation_id),
            message_id="" if hit.message_id is None else str(hit.message_id),
            title=hit.title,
            snippet=" ".join(hit.snippet.split()),
        )
        for hit in hits
    ]
