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
    **template_kwargs: Any,
) -> list[int]:
    """Token ids of `messages` through the tokenizer's chat template; `template_kwargs` are its
    switches (e.g. `enable_thinking`)."""
    try:
        ids = tokenizer.apply_chat_template(
            messages, add_generation_prompt=add_generation_prompt, **template_kwargs
        )
    except Exception as error:  # Jinja and transformers raise many kinds; all mean the same here.
        raise PromptError(
            f"The model's chat template cannot render this conversation: {error}"
        ) from error
    return [int(i) for i in ids]


def message_boundaries(
    tokenizer: TokenizerWrapper,
    messages: list[dict[str, str]],
    ids: Sequence[int],
    template_kwargs: Mapping[str, Any] | None = None,
) -> list[int]:
    """Token offsets in `ids` where each message ends, before any generation prompt.

    These are the end of the system prompt, of each user turn and of each reply: the places a
    later request branches from. Each is found by rendering the messages up to it; a boundary
    whose rendering is not a token prefix of `ids` (a template that renders earlier turns
    differently once more follow) is left out, never guessed. `template_kwargs` must be those
    `ids` were rendered with (an effort level, say, may change the system header).
    """
    found = set()
    for end in range(1, len(messages) + 1):
        try:
            prefix = render_ids(
                tokenizer, messages[:end], add_generation_prompt=False, **(template_kwargs or {})
            )
        except PromptError:
            continue
        if 0 < len(prefix) < len(ids) and list(ids[: len(prefix)]) == prefix:
            found.add(len(prefix))
    return sorted(found)
