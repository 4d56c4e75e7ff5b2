"""Each reply's sources as the window shows them: the excerpts kept on the person's message the
reply answers, numbered as the model read them ([1], [2]…), each compared with the document as
the index holds it now. A file changed since the turn says so ("changed since"); the turn itself
is never rewritten, and a new message retrieves the new text.

A reply that ended in tool calls shows none (the answer after the results shows them): its
turn's sources go under the answers the person reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from app.generation.knowledge_block import excerpts_of
from app.knowledge.excerpts import Excerpt

if TYPE_CHECKING:
    from app.generation.knowledge_retrieval import KnowledgeBase
    from app.store.records import Message


class SourceState(Enum):
    CURRENT = "current"  # the index holds the same text as when the turn read it
    CHANGED = "changed"  # the file changed since
    GONE = "gone"  # the index no longer holds the file (deleted, moved, or its folder removed)
    UNKNOWN = "unknown"  # there is no index to compare with


@dataclass(frozen=True)
class Source:
    number: int  # as the model read it: [1], [2]…
    excerpt: Excerpt
    state: SourceState


@dataclass(frozen=True)
class ReplySources:
    """The sources of the turn a reply answers; `message_id` is the person's message that
    keeps them."""

    message_id: int
    sources: tuple[Source, ...]


def reply_sources(path: Sequence[Message], base: KnowledgeBase | None) -> dict[int, ReplySources]:
    """The sources of each reply on `path` whose turn used knowledge, by the reply's id."""
    turns: dict[int, list[Excerpt]] = {}
    answered: dict[int, int] = {}  # reply id -> the person's message it answers
    turn: int | None = None
    for message in path:
        if message.role == "user":
            turn = message.id
            turns[turn] = excerpts_of(message.attachments)
        elif message.role == "assistant" and turn is not None and not message.tool_calls:
            answered[message.id] = turn
    answered = {reply: t for reply, t in answered.items() if turns[t]}
    if not answered:
        return {}
    used = set(answered.values())
    paths = sorted({e.path for t in used for e in turns[t]})
    digests = base.current_digests(paths) if base is not None else None
    shown = {t: _sources(turns[t], digests) for t in used}
    return {reply: ReplySources(t, shown[t]) for reply, t in answered.items()}


def _sources(excerpts: list[Excerpt], digests: dict[str, str] | None) -> tuple[Source, ...]:
    return tuple(
        Source(number, excerpt, _state(excerpt, digests))
        for number, excerpt in enumerate(excerpts, start=1)
    )


def _state(excerpt: Excerpt, digests: dict[str, str] | None) -> SourceState:
    if digests is None:
        return SourceState.UNKNOWN
    now = digests.get(excerpt.path)
    if now is None:
        return SourceState.GONE
    return SourceState.CURRENT if now == excerpt.document_sha256 else SourceState.CHANGED
