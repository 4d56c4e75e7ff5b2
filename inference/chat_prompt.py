"""Conversation paths rendered to token ids with the model's own chat template."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from inference.errors import PromptError

if TYPE_CHECKING:
    from mlx_lm.tokenizer_utils import TokenizerWrapper

ROLES = ("system", "user", "assistant")


def validate_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """Plain `{"role", "content"}` dicts, or PromptError naming the first bad message."""
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise PromptError("Messages must be a list of {'role', 'content'} entries.")
    if not messages:
        raise PromptError("There is nothing to answer: the message list is empty.")
    clean = []
    for index, message in enumerate(messages, start=1):
        if not isinstance(message, Mapping):
            raise PromptError(f"Message {index} is not a {{'role', 'content'}} entry.")
        role, content = message.get("role"), message.get("content")
        if role not in ROLES:
            raise PromptError(
                f"Message {index} has the unknown role {role!r}; "
                f"the roles are {', '.join(ROLES)}."
            )
        if not isinstance(content, str):
            raise PromptError(f"Message {index} ({role}) has no text content.")
        clean.append({"role": role, "content": content})
    return clean


def render_ids(
    tokenizer: TokenizerWrapper,
    messages: list[dict[str, str]],
    add_generation_prompt: bool,
    continue_final: bool = False,
) -> list[int]:
    """Token ids of `messages` through the tokenizer's chat template; with `continue_final`, the
    last message (a partial reply) is left open for the model to go on writing."""
    # Passed only when asked: HF refuses it together with a generation prompt.
    extra = {"continue_final_message": True} if continue_final else {}
    try:
        ids = tokenizer.apply_chat_template(
            messages, add_generation_prompt=add_generation_prompt, **extra
        )
    except Exception as error:  # Jinja and transformers raise many kinds; all mean the same here.
        raise PromptError(
            f"The model's chat template cannot render this conversation: {error}"
        ) from error
    return [int(i) for i in ids]


# Checkpoints go at the ends of this many latest messages (and of the system prompt): the places
# a regenerate, an edit of the last message or a follow-up branches from. Older turns got theirs
# when they were the latest, so a bounded number of renders per request keeps its cost linear in
# the conversation's length rather than quadratic.
RECENT_BOUNDARIES = 4


def message_boundaries(
    tokenizer: TokenizerWrapper, messages: list[dict[str, str]], ids: Sequence[int], after: int
) -> list[int]:
    """Token offsets in `ids`, beyond `after`, where a message ends (before any generation
    prompt): the end of the system prompt and of the latest few messages.

    Each is found by rendering the messages up to it, newest first, stopping at the first that
    ends at or before `after` (the part already cached); one whose rendering is not a token
    prefix of `ids` (a template that renders earlier turns differently once more follow) is left
    out, never guessed.
    """
    ends = [len(messages) - k for k in range(RECENT_BOUNDARIES) if len(messages) - k > 0]
    if messages[0]["role"] == "system" and 1 not in ends:
        ends.append(1)
    found = []
    for end in ends:
        try:
            prefix = render_ids(tokenizer, messages[:end], add_generation_prompt=False)
        except PromptError:
            continue
        if len(prefix) <= after:
            break
        if len(prefix) < len(ids) and list(ids[: len(prefix)]) == prefix:
            found.append(len(prefix))
    return sorted(found)
