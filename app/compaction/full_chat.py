"""The same question asked of the full chat, to see an answer with and without the summary side
by side.

A question on a compacted branch is found again on the full chat it was summarised from: a
kept turn's original, or, for what was said after the summary, copies of those messages below
the compacted path's last message (`through`), each naming the one it repeats. Copies made by
an earlier comparison, or the same words typed on the full chat, are found and reused, so
asking twice adds nothing; what is missing is
copied then, and the full chat's answer is written there, from the full chat's own cache.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.store.compaction_records import copy_of, kept_ids, path_summary
from app.store.conversations import Store
from app.store.records import Message


class NotCompacted(Exception):
    """The reply is not one a full chat can be asked for; the message says why."""


@dataclass(frozen=True)
class FullChatTurn:
    """Where the full chat holds the question (`question_id`), and its answer there, if it has
    one already (None: to be written)."""

    conversation_id: int
    question_id: int
    answer_id: int | None


def full_chat_turn(store: Store, reply_id: int) -> FullChatTurn:
    """The full chat's place for the question reply `reply_id` answers on a compacted branch
    (copying what it lacks of the compacted branch's later turns); raises NotCompacted, and
    StoreError for ids that are gone."""
    reply = store.get_message(reply_id)
    if reply.role != "assistant" or reply.parent_id is None:
        raise NotCompacted("Only a reply can be compared with the full chat.")
    path = store.path_to(reply.parent_id)
    summary = path_summary(path)
    if summary is None or "through" not in summary.compaction:
        raise NotCompacted("This reply is not on a summarised branch.")
    question = path[-1]
    kept = len(kept_ids(summary))
    if question.role != "user":
        raise NotCompacted("Only an answer to a message of yours can be compared.")
    at = store.get_message(summary.compaction["through"])
    if at.conversation_id != reply.conversation_id:  # a fork of a compacted branch
        raise NotCompacted(
            "The full chat of this summary is in the conversation it was forked from."
        )
    if len(path) <= 1 + kept:  # a kept turn: the full chat has its original
        original = copy_of(question)
        if original is None:
            raise NotCompacted("The message this turn repeats is no longer in the full chat.")
        return _answered(store, store.get_message(original))
    later = path[1 + kept :]
    for index, message in enumerate(later):
        again = next((c for c in store.children(at.id) if _repeats(c, message)), None)
        if again is None:
            leaf = store.graft(later[index:], at.id)
            return FullChatTurn(leaf.conversation_id, leaf.id, None)
        at = again
    return _answered(store, at)


def _repeats(found: Message, message: Message) -> bool:
    """Whether the full chat's `found` says what `message` says: a copy of it, or the same
    words typed there too."""
    same = found.role == message.role and found.content == message.content
    return copy_of(found) == message.id or (same and found.attachments == message.attachments)


def _answered(store: Store, question: Message) -> FullChatTurn:
    """`question` on the full chat, with its latest answer there, if any."""
    answers = [c for c in store.children(question.id) if c.role == "assistant"]
    latest = answers[-1].id if answers and answers[-1].status != "streaming" else None
    return FullChatTurn(question.conversation_id, question.id, latest)
