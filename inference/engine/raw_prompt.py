"""A raw prompt for a plain completion (the local server's /v1/completions): text, tokenized
without a chat template, or token ids, checked into ids the model can take."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inference.errors import PromptError


def prompt_ids(tokenizer: Any, prompt: str | Sequence[int], vocab_size: int) -> list[int]:
    """The prompt's token ids. Raises PromptError for an empty prompt or an id outside the
    vocabulary (mlx does not check an index against the embedding table)."""
    if isinstance(prompt, str):
        ids = list(tokenizer.encode(prompt))
    else:
        ids = [int(i) for i in prompt]
        bad = [i for i in ids if not 0 <= i < vocab_size]
        if bad:
            raise PromptError(
                f"The prompt names token {bad[0]}, but this model's vocabulary has only "
                f"{vocab_size} tokens (ids 0 to {vocab_size - 1})."
            )
    if not ids:
        raise PromptError("The prompt is empty.")
    return ids


def check_room(ids: list[int], context: int | None) -> None:
    """Raise PromptError when the prompt leaves no room in the context for one token."""
    if context is not None and len(ids) >= context:
        raise PromptError(
            f"The prompt is {len(ids)} tokens, {len(ids) - context + 1} too many for this "
            f"model's context of {context} tokens (one is kept for the completion)."
        )
