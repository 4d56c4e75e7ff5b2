"""A plain completion of a raw prompt (text or token ids), for the local server's /v1/completions.

Chat requests go through `Engine.generate`, which renders messages with the chat template and
reuses stored prefixes. A raw prompt has no messages to render, so it is decoded here, with the
engine's model and tokenizer and mlx-lm's `stream_generate`, from a fresh cache (nothing cached,
nothing stored). Worker thread only, like the engine.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import mlx.core as mx
from mlx_lm.generate import stream_generate
from mlx_lm.models.cache import make_prompt_cache

from inference.engine import FinishReason, GenerationResult, GenerationStats
from inference.errors import PromptError
from inference.sampling import SamplingParams, StopMatcher

if TYPE_CHECKING:
    from inference.engine import Engine


def complete(
    engine: Engine,
    prompt: str | Sequence[int],
    params: SamplingParams,
    on_token: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
) -> GenerationResult:
    """Continue `prompt` (text, tokenized without a chat template, or token ids) and return the
    completion. Stops at end of sequence, `max_tokens`, a stop string or `cancel` (checked at
    every token). Raises PromptError for an empty prompt, unknown token ids or a prompt longer
    than the context."""
    started = time.perf_counter()
    loaded = engine.model
    ids = _prompt_ids(loaded.tokenizer, prompt)
    max_tokens = _fit(ids, params.max_tokens, engine.context_length)
    stopper = StopMatcher(params.stop)
    pieces: list[str] = []
    generated: list[int] = []
    finish: FinishReason = "length"
    hit = False

    def emit(text: str) -> None:
        if text:
            pieces.append(text)
            if on_token is not None:
                on_token(text)
    first_at = last_at = started
    if params.seed is not None:
        mx.random.seed(params.seed)
    responses = stream_generate(
        loaded.model,
        loaded.tokenizer,
        mx.array(ids),
        max_tokens=max_tokens,
        sampler=params.make_sampler(),
        logits_processors=params.make_logits_processors(()),
        prompt_cache=make_prompt_cache(loaded.model),
    )
    try:
        for response in responses:
            last_at = time.perf_counter()
            if not generated:
                first_at = last_at
            generated.append(response.token)
            text, hit = stopper.feed(response.text)
            emit(text)
            if hit:
                finish = "stop"
                break
            if response.finish_reason is not None:
                finish = "stop" if response.finish_reason == "stop" else "length"
                break
            if cancel is not None and cancel.is_set():
                finish = "cancelled"
                break
    finally:
        responses.close()
    if not hit:
        emit(stopper.flush())
    ttft = first_at - started
    decode_s = last_at - first_at
    stats = GenerationStats(
        prompt_tokens=len(ids),
        cached_tokens=0,
        prefill_tokens=len(ids),
        generated_tokens=len(generated),
        ttft_s=ttft,
        prefill_tps=len(ids) / ttft if ttft > 0 else 0.0,
        decode_tps=(len(generated) - 1) / decode_s if len(generated) > 1 and decode_s > 0 else 0.0,
    )
    return GenerationResult("".join(pieces), tuple(generated), finish, stats)


def _prompt_ids(tokenizer: object, prompt: str | Sequence[int]) -> list[int]:
    if isinstance(prompt, str):
        ids = list(tokenizer.encode(prompt))  # type: ignore[attr-defined]
    else:
        ids = [int(i) for i in prompt]
        vocab = len(tokenizer.get_vocab())  # type: ignore[attr-defined]
        bad = [i for i in ids if not 0 <= i < vocab]
        if bad:
            raise PromptError(
                f"The prompt names token {bad[0]}, but this model's vocabulary has only {vocab} "
                f"tokens (ids 0 to {vocab - 1})."
            )
    if not ids:
        raise PromptError("The prompt is empty.")
    return ids


def _fit(ids: list[int], max_tokens: int, context: int | None) -> int:
    if context is None:
        return max_tokens
    if len(ids) >= context:
        raise PromptError(
            f"The prompt is {len(ids)} tokens, {len(ids) - context + 1} too many for this "
            f"model's context of {context} tokens (one is kept for the completion)."
        )
    return min(max_tokens, context - len(ids))
