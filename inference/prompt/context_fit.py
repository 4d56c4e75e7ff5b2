"""What to do when a conversation no longer fits the model's context: the overflow policies.

A request fits when its rendered prompt leaves room for a reply: `min(max_tokens, context / 4)`
tokens. When it does not, the policy chooses:

- ``truncate_middle``: keep the system prompt and the first turn, drop whole turns from the
  middle (oldest first), keep the latest;
- ``rolling``: keep the system prompt, drop the oldest turns;
- ``stop``: refuse with a clear message (the app offers to continue in a new chat);
- ``summarise``: the app summarises older turns into a compacted branch before the context
  fills (`app.compaction`); a prompt that outgrows it all the same (the person declined, or
  one message is that long) leaves whole turns from the middle out, as ``truncate_middle``.

A chat may also set a context length below the model's (`chat_context`): the policies then act
at that limit exactly as they would for a model with that context.

A turn is a user message with the replies that follow it, so what is left still alternates
user/assistant, which many chat templates insist on. The message being answered is never
dropped. The kept messages are rendered and cached like any others, so a truncated prompt is
reused exactly on the next turn.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from inference.errors import ContextOverflowError, PromptError

Overflow = Literal["truncate_middle", "rolling", "stop", "summarise"]
OVERFLOW_POLICIES: tuple[Overflow, ...] = ("truncate_middle", "rolling", "stop", "summarise")
# The shortest context a chat may set: a system prompt, a question and a reply still fit.
MIN_CONTEXT_LIMIT = 256


def chat_context(model_context: int | None, chat_limit: object) -> int | None:
    """The context a chat's prompt and reply must fit: the model's, or the chat's own limit when
    that is smaller. Raises PromptError for a limit that is not a whole number of tokens of at
    least MIN_CONTEXT_LIMIT (None: the model's maximum)."""
    if chat_limit is None:
        return model_context
    if isinstance(chat_limit, bool) or not isinstance(chat_limit, int):
        raise PromptError(
            f"The chat's context length must be a whole number of tokens, not {chat_limit!r}."
        )
    if chat_limit < MIN_CONTEXT_LIMIT:
        raise PromptError(
            f"The chat's context length must be at least {MIN_CONTEXT_LIMIT} tokens, not "
            f"{chat_limit}; leave it empty for the model's maximum."
        )
    return chat_limit if model_context is None else min(model_context, chat_limit)


def reply_room(context: int, max_tokens: int) -> int:
    """Tokens a prompt must leave free for the reply."""
    return max(1, min(max_tokens, context // 4))


def fit_messages(
    messages: list[dict[str, Any]],
    count: Callable[[list[dict[str, Any]]], int],
    context: int,
    room: int,
    policy: Overflow,
    whose: str = "this model's context",
) -> tuple[list[dict[str, Any]], list[int]]:
    """The messages to send and the indexes of those left out, so that the kept ones count at
    most `context - room` tokens.

    `count` renders and counts a message list; `whose` names the limit in messages (the
    model's context, or a chat's own context length). Raises PromptError under "stop", or when
    even the shortest allowed conversation is too long.
    """
    limit = context - room
    if policy not in OVERFLOW_POLICIES:
        raise PromptError(
            f"Unknown overflow policy {policy!r}; choose one of {', '.join(OVERFLOW_POLICIES)}."
        )
    tokens = count(messages)
    if tokens <= limit:
        return messages, []
    if policy == "stop":
        raise ContextOverflowError(
            f"{_too_long(tokens, context, room, whose)} Continue in a new chat, or let earlier "
            "turns be left out (the chat's overflow setting)."
        )
    turns = _turns(messages)
    keep_first = 0 if policy == "rolling" else 1
    droppable = turns[keep_first : len(turns) - 1]

    def without(k: int) -> tuple[list[dict[str, Any]], list[int]]:
        dropped = sorted(i for turn in droppable[:k] for i in turn)
        gone = set(dropped)
        return [m for i, m in enumerate(messages) if i not in gone], dropped

    # The smallest number of oldest droppable turns to leave out, by bisection: each try
    # renders the whole conversation once.
    low, high = 1, len(droppable)
    if not droppable or count(without(high)[0]) > limit:
        shortest = count(without(len(droppable))[0]) if droppable else tokens
        raise PromptError(
            f"{_too_long(shortest, context, room, whose)} Earlier turns cannot be left out to "
            "make it fit: shorten the last message or start a new chat."
        )
    while low < high:
        middle = (low + high) // 2
        if count(without(middle)[0]) <= limit:
            high = middle
        else:
            low = middle + 1
    return without(low)


def _too_long(tokens: int, context: int, room: int, whose: str) -> str:
    return (
        f"The conversation is {tokens} tokens, {tokens - context + room} too many for {whose} "
        f"of {context} tokens ({room} kept for the reply)."
    )


def _turns(messages: list[dict[str, Any]]) -> list[list[int]]:
    """Message indexes grouped into turns; a leading system prompt belongs to none."""
    turns: list[list[int]] = []
    for index, message in enumerate(messages):
        if message["role"] == "system" and index == 0:
            continue
        if message["role"] == "user" or not turns:
            turns.append([index])
        else:
            turns[-1].append(index)
    return turns
