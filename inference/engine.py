"""Exact, cache-aware generation across turns and branches.

`Engine.generate` renders a conversation path with the chat template, finds the stored cache
stack sharing the longest token prefix with it, forks that stack, prefills only the rest in
chunks and decodes with mlx-lm's `stream_generate`. Caching changes speed and memory, never the
tokens: the output equals a from-scratch mlx-lm run on the same rendered prompt.

Stacks that cannot go back (recurrent state, a sliding window that has wrapped) get checkpoints
at message boundaries while prefilling, so a regenerate or an edit resumes from the nearest one.

Threading: one engine belongs to one thread, the inference worker's. Every call (generate,
count_prompt_tokens, cache_bytes, clear_cache, forget, the budget setter) must be made on that
thread, because MLX arrays and streams belong to the thread that made them. Callbacks run on it
too; `cancel` is the only object meant to be touched from elsewhere.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

import mlx.core as mx
import psutil
from mlx_lm.generate import generation_stream, stream_generate

from inference.cache_stack import CacheStack
from inference.chat_prompt import message_boundaries, render_ids, validate_messages
from inference.errors import PromptError, SamplingError
from inference.prefix_store import PrefixStore
from inference.sampling import SamplingParams, StopMatcher

if TYPE_CHECKING:
    from inference.loading import LoadedModel

FinishReason = Literal["stop", "length", "cancelled"]

DEFAULT_PREFILL_CHUNK = 512
# Stored caches may use this share of the machine's memory unless the app sets a budget.
DEFAULT_BUDGET_FRACTION = 0.2


def default_cache_budget() -> int:
    """The default byte budget for stored caches: a fifth of the machine's memory."""
    return int(psutil.virtual_memory().total * DEFAULT_BUDGET_FRACTION)


@dataclass(frozen=True)
class GenerationStats:
    """Counts and speeds of one request; `cached_tokens + prefill_tokens == prompt_tokens`.

    `prefill_tokens` counts the prompt tokens this request had to compute (for a request
    cancelled during prefill, the ones it set out to compute). `ttft_s` is the time from the
    call to the first generated token; `prefill_tps` the prompt tokens computed per second
    before it; `decode_tps` the generated tokens per second after it.
    """

    prompt_tokens: int
    cached_tokens: int
    prefill_tokens: int
    generated_tokens: int
    ttft_s: float
    prefill_tps: float
    decode_tps: float


@dataclass(frozen=True)
class GenerationResult:
    """A reply in plain Python values (never MLX arrays), safe to hand to any thread.

    `token_ids` are the generated ids, including the end-of-sequence id when the model ended
    the reply; `text` is their decoded text without it, cut before a stop string.
    """

    text: str
    token_ids: tuple[int, ...]
    finish_reason: FinishReason
    stats: GenerationStats


class _Cancelled(Exception):
    """Raised between prefill chunks when the request's cancel event is set."""


class Engine:
    """Generates replies for conversation paths, reusing every prefix it has computed.

    Use from one thread only, the inference worker's (see the module docstring).
    """

    def __init__(
        self,
        model: LoadedModel,
        cache_budget_bytes: int | None = None,
        prefill_chunk_tokens: int = DEFAULT_PREFILL_CHUNK,
    ) -> None:
        if prefill_chunk_tokens < 1:
            raise ValueError("prefill_chunk_tokens must be at least 1")
        self._loaded = model
        self._chunk = prefill_chunk_tokens
        budget = default_cache_budget() if cache_budget_bytes is None else cache_budget_bytes
        self._store = PrefixStore(budget)
        # Whether this architecture's caches can always be trimmed back; if not, checkpoints.
        self._rewinds_anywhere = CacheStack.empty(model.model).rewinds_anywhere

    @property
    def model(self) -> LoadedModel:
        return self._loaded

    @property
    def context_length(self) -> int | None:
        """The longest sequence the model handles (None when its config does not say)."""
        return self._loaded.context_length

    @property
    def cache_budget_bytes(self) -> int:
        return self._store.budget_bytes

    @cache_budget_bytes.setter
    def cache_budget_bytes(self, value: int) -> None:
        """Change the budget; stored caches beyond it are evicted at once."""
        self._store.budget_bytes = value

    def cache_bytes(self) -> int:
        """Bytes held by stored cache buffers (allocated size, counted from `nbytes`)."""
        return self._store.nbytes()

    def clear_cache(self) -> None:
        """Drop every stored cache and return the memory."""
        self._store.clear()

    def forget(self, conversation_id: Hashable) -> None:
        """Drop the caches only `conversation_id` used (e.g. when it is deleted)."""
        self._store.forget(conversation_id)

    def count_prompt_tokens(
        self,
        messages: Sequence[Mapping[str, Any]],
        template_kwargs: Mapping[str, Any] | None = None,
    ) -> int:
        """Tokens the rendered prompt for `messages` takes, generation prompt included."""
        return len(self._render(validate_messages(messages), template_kwargs))

    def generate(
        self,
        messages: Sequence[Mapping[str, Any]],
        params: SamplingParams | None = None,
        conversation_id: Hashable = None,
        on_token: Callable[[str], None] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
        cancel: threading.Event | None = None,
        template_kwargs: Mapping[str, Any] | None = None,
    ) -> GenerationResult:
        """Generate the reply that follows `messages` (the path from the root to the new turn).

        `on_token(text_delta)` streams the reply; `on_progress(done, total)` reports prompt
        tokens computed out of those this request must compute; setting `cancel` stops within
        one prefill chunk or one token, and the result then has finish_reason "cancelled".
        `template_kwargs` go to the chat template (e.g. `enable_thinking`, `reasoning_effort`).
        Raises PromptError (an InferenceError) for bad messages or a prompt too long for the
        model; the engine stays usable after any error. Worker thread only.
        """
        started = time.perf_counter()
        params = SamplingParams() if params is None else params
        self._check_token_ids(params)
        clean = validate_messages(messages)
        ids = self._render(clean, template_kwargs)
        request = _Request(
            ids=ids,
            messages=clean,
            params=params,
            max_tokens=self._fit_to_context(len(ids), params.max_tokens),
            conversation_id=conversation_id,
            on_token=on_token or (lambda text: None),
            on_progress=on_progress or (lambda done, total: None),
            cancel=cancel or threading.Event(),
            started=started,
            template_kwargs=dict(template_kwargs or {}),
        )
        parent, request.cached = self._store.lookup(ids, conversation_id)
        if parent is None:
            stack = CacheStack.empty(self._loaded.model)
        else:
            stack = parent.fork(request.cached)
        try:
            self._prefill(stack, request)
        except _Cancelled:
            if len(stack.tokens) > request.cached:
                self._store.put(stack, conversation_id)
            computed = len(stack.tokens) - request.cached
            elapsed = time.perf_counter() - started
            stats = request.stats(0, 0.0, _rate(computed, elapsed))
            return GenerationResult("", (), "cancelled", stats)
        return self._decode(stack, request)

    def _check_token_ids(self, params: SamplingParams) -> None:
        # mlx ignores an out-of-range index in the bias scatter, so a typo would pass unnoticed.
        if params.logit_bias and max(params.logit_bias) >= self._vocab_size:
            raise SamplingError(
                f"logit_bias names token {max(params.logit_bias)}, but this model's "
                f"vocabulary has only {self._vocab_size} tokens (ids 0 to {self._vocab_size - 1})."
            )

    @cached_property
    def _vocab_size(self) -> int:
        """Token ids the tokenizer knows (added tokens included); built once, on first use."""
        return len(self._loaded.tokenizer.get_vocab())

    def _render(
        self, messages: list[dict[str, str]], template_kwargs: Mapping[str, Any] | None
    ) -> list[int]:
        return render_ids(
            self._loaded.tokenizer, messages, add_generation_prompt=True, **(template_kwargs or {})
        )

    def _fit_to_context(self, prompt_tokens: int, max_tokens: int) -> int:
        limit = self.context_length
        if limit is None:
            return max_tokens
        if prompt_tokens >= limit:
            raise PromptError(
                f"The conversation is {prompt_tokens} tokens, {prompt_tokens - limit + 1} too "
                f"many for this model's context of {limit} tokens (one is kept for the reply). "
                "Shorten it or start a new conversation."
            )
        return min(max_tokens, limit - prompt_tokens)

    def _prefill(self, stack: CacheStack, request: _Request) -> None:
        """Feed `ids[len(stack.tokens):-1]` in chunks; the last token goes to the decoder.

        Chunks end on message boundaries when the stack cannot rewind, and a checkpoint (a fork)
        is stored at each, so later branches resume there.
        """
        ids = request.ids
        start, end = len(stack.tokens), len(ids) - 1
        checkpoints: set[int] = set()
        if not self._rewinds_anywhere and end > start:
            boundaries = message_boundaries(
                self._loaded.tokenizer, request.messages, ids, request.template_kwargs
            )
            checkpoints = {b for b in boundaries if start < b <= end}
        request.on_progress(0, request.prefill_tokens)
        position = start
        while position < end:
            if request.cancel.is_set():
                raise _Cancelled
            stop = min([position + self._chunk, end, *(b for b in checkpoints if b > position)])
            with mx.stream(generation_stream):
                self._loaded.model(mx.array(ids[position:stop])[None], cache=stack.caches)
                stack.evaluate()
            stack.tokens.extend(ids[position:stop])
            position = stop
            mx.clear_cache()
            request.on_progress(position - start, request.prefill_tokens)
            if position in checkpoints:
                checkpoint = stack.fork()
                checkpoint.evaluate()
                self._store.put(checkpoint, request.conversation_id)
        if request.cancel.is_set():
            raise _Cancelled

    def _decode(self, stack: CacheStack, request: _Request) -> GenerationResult:
        """Decode with mlx-lm's stream_generate, feeding it the one prompt token left."""
        params = request.params
        stopper = StopMatcher(params.stop)
        pieces: list[str] = []
        generated: list[int] = []
        finish: FinishReason = "length"
        hit_stop_string = False
        first_at = last_at = request.started

        def emit(text: str) -> None:
            if text:
                pieces.append(text)
                request.on_token(text)

        if params.seed is not None:
            # Seeded right before decoding, exactly where a from-scratch run seeds before
            # stream_generate: prefill draws no random numbers, so both draw the same sequence.
            mx.random.seed(params.seed)
        responses = stream_generate(
            self._loaded.model,
            self._loaded.tokenizer,
            request.ids[-1:],
            max_tokens=request.max_tokens,
            sampler=params.make_sampler(),
            logits_processors=params.make_logits_processors(request.ids[:-1]),
            prompt_cache=stack.caches,
        )
        try:
            for response in responses:
                last_at = time.perf_counter()
                if not generated:
                    # The first step fed the last prompt token.
                    stack.tokens.append(request.ids[-1])
                    first_at = last_at
                    request.on_progress(request.prefill_tokens, request.prefill_tokens)
                # generate_step feeds each token into the cache before yielding it, so the
                # ledger grows in step with the cache offset.
                stack.tokens.append(response.token)
                generated.append(response.token)
                text, hit_stop_string = stopper.feed(response.text)
                emit(text)
                if hit_stop_string:
                    finish = "stop"
                    break
                if response.finish_reason is not None:
                    finish = "stop" if response.finish_reason == "stop" else "length"
                    break
                if request.cancel.is_set():
                    finish = "cancelled"
                    break
        finally:
            # Closed here, on the thread that runs it (never from another thread).
            responses.close()
        if not hit_stop_string:
            emit(stopper.flush())

        if stack.is_consistent():
            self._store.put(stack, request.conversation_id)
            self._store.touch_path(stack.tokens, request.conversation_id)

        ttft = first_at - request.started
        stats = request.stats(
            len(generated),
            ttft,
            _rate(request.prefill_tokens, ttft),
            _rate(len(generated) - 1, last_at - first_at),
        )
        return GenerationResult("".join(pieces), tuple(generated), finish, stats)


@dataclass
class _Request:
    """One generate call's inputs, as the prefill and decode steps need them."""

    ids: list[int]
    messages: list[dict[str, str]]
    params: SamplingParams
    max_tokens: int
    conversation_id: Hashable
    on_token: Callable[[str], None]
    on_progress: Callable[[int, int], None]
    cancel: threading.Event
    started: float
    template_kwargs: dict[str, Any]
    cached: int = 0

    @property
    def prefill_tokens(self) -> int:
        return len(self.ids) - self.cached

    def stats(
        self, generated: int, ttft_s: float, prefill_tps: float, decode_tps: float = 0.0
    ) -> GenerationStats:
        return GenerationStats(
            prompt_tokens=len(self.ids),
            cached_tokens=self.cached,
            prefill_tokens=self.prefill_tokens,
            generated_tokens=generated,
            ttft_s=ttft_s,
            prefill_tps=prefill_tps,
            decode_tps=decode_tps,
        )


def _rate(count: int, seconds: float) -> float:
    return count / seconds if count > 0 and seconds > 0 else 0.0
