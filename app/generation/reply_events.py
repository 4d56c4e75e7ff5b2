"""What `ReplyGeneration` (`app.generation.reply_generation`) tells the window about the reply it
writes, as frozen dataclasses: by message, never by request, so the window needs no request ids.
"""

from __future__ import annotations

from dataclasses import dataclass

# Why a second reply is refused while one is written (the chat's actions and compaction's).
BUSY_MESSAGE = "A reply is still being written. Stop it (Esc) or wait for it to finish."


@dataclass(frozen=True, slots=True)
class StreamUpdate:
    """The reply `message_id` of `conversation_id` so far: its whole `text` and `reasoning`,
    whether it is still reasoning (`thinking`), and the tool it is calling (`calling`: None
    while it calls none, "" while the name is incomplete; once calling, `text` stops where the
    call began)."""

    conversation_id: int
    message_id: int
    text: str
    reasoning: str = ""
    thinking: bool = False
    calling: str | None = None


@dataclass(frozen=True, slots=True)
class ReplyPrefill:
    """The reply `message_id`'s prompt: `done` of `total` tokens read (`total` -1: a server's,
    whose size is unknown until the first token)."""

    message_id: int
    done: int
    total: int


@dataclass(frozen=True, slots=True)
class ContextFull:
    """The chat `conversation_id` outgrew the model's context under the "stop" policy
    (`message` says so): the window offers to continue in a new chat."""

    conversation_id: int
    message: str
