"""Exact, cache-aware generation across turns, branches and restarts.

`Engine.generate` renders a conversation path with the chat template (leaving whole turns out when
it would overflow the context, as the chosen policy says), takes from the branch cache a live stack
holding the longest stored token prefix of it, prefills only the rest in chunks and decodes with
mlx-lm's `stream_generate`, or speculatively, checking drafted tokens several per forward pass
(inference.decoding.speculative). Caching and speculation change speed and memory, never the tokens:
the output equals a from-scratch mlx-lm run on the same rendered prompt.

Stacks whose layers cannot all go back (recurrent state, a sliding window that has wrapped) get
checkpoints at message boundaries while prefilling, so a regenerate or an edit resumes from the
nearest one. With a cache folder, stored caches are saved in the worker's idle time
(`save_pending`) and found again by a later engine on the same folder and model.

Threading: one engine belongs to one thread, the inference worker's. Every call (generate,
complete, count_prompt_tokens, cache_bytes, clear_cache, forget, flush, the budget setters) must
be made on that thread, because MLX arrays and streams belong to the thread that made them.
Callbacks run on it too; `cancel` is the only object meant to be touched from elsewhere.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mlx.core as mx
import psutil
from mlx_lm.generate import generation_stream, stream_generate

from inference.cache.branch_cache import BranchCache
from inference.cache.files import CacheFolder, default_disk_budget, folder_bytes
from inference.cache.key import cache_key, model_slug
from inference.cache.stack import CacheStack
from inference.decoding.draft_length import DraftLength, PassTimes
from inference.decoding.draft_model import DraftCaches
from inference.decoding.sampling import LogitsProcessor, Sampler, SamplingParams
from inference.decoding.speculative import Drafter, PromptLookupDrafter, SpeculativeDecoder
from inference.engine.decoded_reply import DecodedReply
from inference.engine.prefill_pacer import PrefillPacer
from inference.engine.raw_prompt import check_room, prompt_ids
from inference.engine.request import Request
from inference.engine.result import GenerationResult
from inference.errors import PromptError, SamplingError
from inference.prompt.chat_prompt import (
    generation_suffix,
    message_boundaries,
    render_ids,
    render_prompt,
    validate_messages,
)
from inference.prompt.context_fit import Overflow, chat_context, fit_messages, reply_room

if TYPE_CHECKING:
    from inference.loading.load import LoadedModel

DEFAULT_PREFILL_CHUNK = 512
# Stored caches may use this share of the machine's memory unless the app sets a budget.
DEFAULT_BUDGET_FRACTION = 0.2


def default_cache_budget() -> int:
    """The default byte budget for stored caches: a fifth of the machine's memory."""
    return int(psutil.virtual_memory().total * DEFAULT_BUDGET_FRACTION)


class _Cancelled(Exception):
    """Raised between prefill chunks when the request's cancel event is set."""


class Engine:
    """Generates replies for conversation paths, reusing every prefix it has computed.

    `cache_dir` keeps caches across restarts (within `disk_budget_bytes`, by default the smaller
    of 30 GiB and a quarter of the free space). Use from one thread only, the inference
    worker's (see the module docstring).
    """

    def __init__(
        self,
        model: LoadedModel,
        cache_budget_bytes: int | None = None,
        cache_dir: str | Path | None = None,
        disk_budget_bytes: int | None = None,
        prefill_chunk_tokens: int = DEFAULT_PREFILL_CHUNK,
    ) -> None:
        if prefill_chunk_tokens < 1:
            raise ValueError("prefill_chunk_tokens must be at least 1")
        self._loaded = model
        self._pacer = PrefillPacer(prefill_chunk_tokens)
        budget = default_cache_budget() if cache_budget_bytes is None else cache_budget_bytes
        folder = None
        self._cache_dir = None if cache_dir is None else Path(cache_dir)
        if self._cache_dir is not None:
            folder = CacheFolder(self._cache_dir, model_slug(model), cache_key(model))
            folder.open()
        self._folder = folder
        self._cache = BranchCache(model.model, budget, folder)
        # What the chat template appends for the generation prompt, per set of template switches
        # (thinking off may add an empty reasoning block): it places the last user turn's
        # checkpoint without rendering the conversation again.
        self._suffixes: dict[tuple, str | None] = {}
        self._draft: DraftCaches | None = None
        self._other_disk_bytes = self._count_other_disk_bytes()
        # What a verification pass costs here, learnt across replies (a property of the machine).
        self._lookup_times = PassTimes()
        if self._cache_dir is not None:
            self.disk_budget_bytes = (
                default_disk_budget(self._cache_dir)
                if disk_budget_bytes is None
                else disk_budget_bytes
            )

    @property
    def model(self) -> LoadedModel:
        return self._loaded

    @property
    def context_length(self) -> int | None:
        """The longest sequence the model handles (None when its config does not say)."""
        return self._loaded.context_length

    @property
    def cache_budget_bytes(self) -> int:
        draft = self._draft.cache.budget_bytes if self._draft is not None else 0
        return self._cache.budget_bytes + draft

    @cache_budget_bytes.setter
    def cache_budget_bytes(self, value: int) -> None:
        """Change the memory budget; caches beyond it are evicted at once."""
        if self._draft is None:
            self._cache.budget_bytes = value
        else:
            self._cache.budget_bytes, self._draft.cache.budget_bytes = self._draft.split(value)

    @property
    def draft_model(self) -> LoadedModel | None:
        return self._draft.model if self._draft is not None else None

    def set_draft_model(self, draft: LoadedModel | None) -> None:
        """Use `draft` for requests whose speculation is "draft" (None: no draft model; they
        then draft by prompt lookup). Raises ModelLoadError when its tokenizer differs from the
        main model's or its caches cannot be trimmed back. Its stored caches share the memory
        and disk budgets, in proportion to the bytes each model's cache takes per token; with a
        cache folder they are saved, and found again by a later engine, as the main model's."""
        total, disk_total = self.cache_budget_bytes, self.disk_budget_bytes
        self._draft = (
            None if draft is None else DraftCaches(self._loaded, draft, self._cache_dir)
        )
        self.cache_budget_bytes = total
        self.disk_budget_bytes = disk_total
        self._other_disk_bytes = self._count_other_disk_bytes()

    def _count_other_disk_bytes(self) -> int:
        """Bytes saved in the cache folder by other models (counted once, at opening: only
        this engine writes there while it runs)."""
        if self._cache_dir is None:
            return 0
        own = [self._folder, self._draft.folder if self._draft is not None else None]
        return folder_bytes(self._cache_dir) - sum(
            folder_bytes(folder.folder) for folder in own if folder is not None
        )

    @property
    def disk_budget_bytes(self) -> int:
        draft = self._draft.cache.disk_budget_bytes if self._draft is not None else 0
        return self._cache.disk_budget_bytes + draft

    @disk_budget_bytes.setter
    def disk_budget_bytes(self, value: int) -> None:
        """Change the disk budget for saved caches (applied at the next save)."""
        value = max(0, int(value))
        if self._draft is None:
            self._cache.disk_budget_bytes = value
        else:
            self._cache.disk_budget_bytes, self._draft.cache.disk_budget_bytes = (
                self._draft.split(value)
            )

    @property
    def disk_error(self) -> str | None:
        """Why saving caches stopped (a full disk, say), or None. Caches stay in memory."""
        draft = self._draft.cache.disk_error if self._draft is not None else None
        return self._cache.disk_error or draft

    def cache_bytes(self) -> int:
        """Bytes held in memory by stored caches, each shared segment counted once."""
        draft = self._draft.cache.nbytes() if self._draft is not None else 0
        return self._cache.nbytes() + draft

    def disk_bytes(self) -> int:
        """Bytes of saved caches under the cache folder (every model's)."""
        draft = self._draft.cache.disk_bytes() if self._draft is not None else 0
        return self._other_disk_bytes + self._cache.disk_bytes() + draft

    def clear_cache(self) -> None:
        """Drop every cache held in memory and return the memory (saved files stay)."""
        self._cache.clear()
        if self._draft is not None:
            self._draft.cache.clear()

    def clear_saved_caches(self) -> None:
        """Delete every saved cache file of this model and of its draft model."""
        self._cache.clear_saved()
        if self._draft is not None:
            self._draft.cache.clear_saved()

    def forget(self, conversation_id: Hashable, keep_saved: bool = False) -> None:
        """Drop the caches only `conversation_id` used, in memory and on disk. With
        `keep_saved`, free only the memory (a deletion that may still be undone): its saved
        files stay, and a later `forget` without it deletes them."""
        for cache in self._caches():
            cache.forget(conversation_id, keep_saved)

    def save_pending(self, seconds: float = 0.05) -> bool:
        """Save unsaved caches for about `seconds` (the worker calls this when idle), the main
        model's first; True while some remain."""
        deadline = time.monotonic() + seconds
        remaining = False
        for cache in self._caches():
            remaining = cache.save_some(max(0.0, deadline - time.monotonic())) or remaining
        return remaining

    def flush(self) -> None:
        """Finish pending cache writes."""
        while self.save_pending(1.0):
            pass

    def _caches(self) -> list[BranchCache]:
        """The main model's branch cache, then the draft model's if there is one."""
        return [self._cache, *([self._draft.cache] if self._draft is not None else [])]

    def close(self) -> None:
        """Finish pending cache writes; the engine is not used after this."""
        self.flush()

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
        overflow: Overflow = "truncate_middle",
        template_kwargs: Mapping[str, Any] | None = None,
        continue_reply: bool = False,
        context_limit: int | None = None,
    ) -> GenerationResult:
        """Generate the reply that follows `messages` (the path from the root to the new turn).

        `on_token(text_delta)` streams the reply; `on_progress(done, total)` reports prompt
        tokens computed out of those this request must compute; setting `cancel` stops within
        one prefill chunk or one token, and the result then has finish_reason "cancelled".
        When the path does not fit the context with room for a reply, `overflow` chooses:
        "truncate_middle", "rolling" or "stop" (see inference.prompt.context_fit). `context_limit`
        is the chat's own context length (None: the model's): prompt and reply then fit the
        smaller of the two, and the policy acts there. `continue_reply`
        goes on writing the last message, a partial assistant reply, as it stands (its turn is
        left open, as HF's `continue_final_message` renders it). Raises PromptError
        (an InferenceError) for bad messages or a prompt that cannot fit; the engine stays
        usable after any error. `template_kwargs` go to the chat template (e.g.
        `enable_thinking`, `reasoning_effort`). Worker thread only.
        """
        request = self._request(
            messages, params, conversation_id, overflow, template_kwargs, continue_reply,
            context_limit,
        )
        request.listen(on_token, on_progress, cancel)
        return self._generate(request)

    def complete(
        self,
        prompt: str | Sequence[int],
        params: SamplingParams | None = None,
        conversation_id: Hashable = None,
        on_token: Callable[[str], None] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> GenerationResult:
        """Continue a raw prompt (text, tokenized without the chat template, or token ids), as
        the local server's /v1/completions asks, with the same prefill and decode as
        `generate`: a prompt that begins with one computed before reuses its cache. With no
        messages there are no turns to leave out, and the only checkpoint is the prompt's end.
        Raises PromptError for an empty prompt, an id outside the vocabulary or a prompt that
        leaves no room for one token in the context. Worker thread only."""
        started = time.perf_counter()
        params = SamplingParams() if params is None else params
        self._check_token_ids(params)
        ids = prompt_ids(self._loaded.tokenizer, prompt, self._vocab_size)
        check_room(ids, self.context_length)
        max_tokens, capped = _reply_limit(self.context_length, len(ids), params.max_tokens)
        request = Request(ids, params, max_tokens, capped, conversation_id, started)
        request.listen(on_token, on_progress, cancel)
        return self._generate(request)

    def generate_variants(
        self,
        messages: Sequence[Mapping[str, Any]],
        params: SamplingParams | None = None,
        seeds: Sequence[int | None] = (),
        conversation_id: Hashable = None,
        on_token: Callable[[int, str], None] | None = None,
        cancel: threading.Event | Sequence[threading.Event] | None = None,
        overflow: Overflow = "truncate_middle",
        context_limit: int | None = None,
    ) -> list[GenerationResult]:
        """Several replies to one path at once, one per seed, in order: `results[i]` equals
        `generate(messages, replace(params, seed=seeds[i]))` token for token. The prompt is
        computed once and the replies decode as one batch; all stay cached as siblings.
        `on_token(variant_index, text_delta)` streams them; `cancel` is one event for all or
        one per variant; `context_limit` as for `generate`. See inference.engine.variants. Worker
        thread only."""
        from inference.engine.variants import generate_variants

        return generate_variants(self, messages, params, seeds, conversation_id, on_token,
                                 cancel, overflow, context_limit)

    def cache_state(self, paths: Sequence[Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
        """Where each path's prompt is cached, as plain values for the GUI's branch map (see
        inference.engine.cache_state). Worker thread only."""
        from inference.engine.cache_state import cache_state

        return cache_state(self, paths)

    def _request(
        self,
        messages: Sequence[Mapping[str, Any]],
        params: SamplingParams | None,
        conversation_id: Hashable,
        overflow: Overflow,
        template_kwargs: Mapping[str, Any] | None = None,
        continue_reply: bool = False,
        context_limit: int | None = None,
    ) -> Request:
        """A request for the reply after `messages`, fitted to the context (the chat's
        `context_limit` when smaller than the model's) and rendered (with `continue_reply`, the
        last message is a partial reply the model goes on writing)."""
        started = time.perf_counter()
        params = SamplingParams() if params is None else params
        self._check_token_ids(params)
        context = chat_context(self.context_length, context_limit)
        whose = "this model's context" if context == self.context_length else (
            "this chat's context length"
        )
        clean = validate_messages(messages)
        if continue_reply and clean[-1]["role"] != "assistant":
            raise PromptError("Only a reply can be continued: the last message is not one.")
        kept, dropped = self._fit(
            clean, params, overflow, template_kwargs, continue_reply, context, whose
        )
        prompt = render_prompt(self._loaded.tokenizer, kept, template_kwargs, continue_reply)
        ids = prompt.ids
        max_tokens, capped = _reply_limit(context, len(ids), params.max_tokens)
        return Request(
            ids=ids,
            params=params,
            max_tokens=max_tokens,
            capped_by_context=capped,
            conversation_id=conversation_id,
            started=started,
            prompt=prompt,
            messages=kept,
            template_kwargs=dict(template_kwargs or {}),
            dropped=tuple(dropped),
        )

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
        self,
        messages: list[dict[str, str]],
        template_kwargs: Mapping[str, Any] | None,
        continue_reply: bool = False,
    ) -> list[int]:
        return render_ids(
            self._loaded.tokenizer,
            messages,
            not continue_reply,
            continue_final=continue_reply,
            **(template_kwargs or {}),
        )

    def _generation_suffix(self, template_kwargs: Mapping[str, Any]) -> str | None:
        key = tuple(sorted((k, repr(v)) for k, v in template_kwargs.items()))
        if key not in self._suffixes:
            self._suffixes[key] = generation_suffix(self._loaded.tokenizer, template_kwargs)
        return self._suffixes[key]

    def _fit(
        self,
        messages: list[dict[str, str]],
        params: SamplingParams,
        overflow: Overflow,
        template_kwargs: Mapping[str, Any] | None,
        continue_reply: bool,
        limit: int | None,
        whose: str,
    ) -> tuple[list[dict[str, str]], list[int]]:
        """The messages that fit `limit` tokens with room for a reply, and those left out."""
        if limit is None:
            return messages, []
        room = reply_room(limit, params.max_tokens)

        def count(kept: list[dict[str, str]]) -> int:
            return len(self._render(kept, template_kwargs, continue_reply))

        return fit_messages(messages, count, limit, room, overflow, whose)

    def _prefill(self, stack: CacheStack, request: Request) -> None:
        """Feed `ids[len(stack.tokens):-1]` in chunks; the last token goes to the decoder.

        Chunks end on message boundaries when the stack cannot rewind, and a checkpoint is
        stored at each, so later branches resume there.
        """
        ids = request.ids
        start, end = len(stack.tokens), len(ids) - 1
        checkpoints: set[int] = set()
        # A raw prompt has no message boundaries: its one checkpoint is its end, stored when
        # the stack goes back to the branch cache.
        if not self._cache.rewinds_anywhere and end > start and request.prompt is not None:
            boundaries = message_boundaries(
                self._loaded.tokenizer,
                request.messages,
                request.prompt,
                start,
                self._generation_suffix(request.template_kwargs),
                request.template_kwargs,
            )
            checkpoints = {b for b in boundaries if start < b <= end}
        request.on_progress(0, request.prefill_tokens)
        position = start
        while position < end:
            if request.cancel.is_set():
                raise _Cancelled
            size = self._pacer.next_chunk()
            stop = min([position + size, end, *(b for b in checkpoints if b > position)])
            chunk_started = time.perf_counter()
            with mx.stream(generation_stream):
                self._loaded.model(mx.array(ids[position:stop])[None], cache=stack.caches)
                stack.evaluate()
            self._pacer.record(stop - position, time.perf_counter() - chunk_started)
            stack.tokens.extend(ids[position:stop])
            position = stop
            mx.clear_cache()
            request.on_progress(position - start, request.prefill_tokens)
            if position in checkpoints:
                self._cache.checkpoint(stack, request.conversation_id)
        if request.cancel.is_set():
            raise _Cancelled

    def _generate(self, request: Request) -> GenerationResult:
        """Prefill the request's prompt from the branch cache, decode, and store the stack."""
        stack = self._prefilled(request)
        if isinstance(stack, GenerationResult):
            return stack
        try:
            result = self._decode(stack, request)
        except BaseException:
            self._cache.discard(stack)
            raise
        self._cache.give_back(stack, request.conversation_id)
        return result

    def _prefilled(self, request: Request) -> CacheStack | GenerationResult:
        """A stack from the branch cache holding every prompt token but the last; or, when the
        request is cancelled during prefill, its result (the stack goes back as far as it got,
        so a retry resumes there)."""
        taken = self._cache.take(request.ids, request.conversation_id)
        request.cached, request.disk_tokens = taken.cached, taken.disk_tokens
        stack = taken.stack
        try:
            self._prefill(stack, request)
        except _Cancelled:
            self._cache.give_back(stack, request.conversation_id)
            return request.cancelled(len(stack.tokens) - request.cached)
        except BaseException:
            self._cache.discard(stack)
            raise
        return stack

    def _decode(self, stack: CacheStack, request: Request) -> GenerationResult:
        """Decode with mlx-lm's stream_generate, feeding it the one prompt token left."""
        params = request.params
        if params.seed is not None:
            # Seeded right before decoding, exactly where a from-scratch run seeds before
            # stream_generate: prefill draws no random numbers, so both draw the same sequence.
            mx.random.seed(params.seed)
        sampler = params.make_sampler()
        processors = params.make_logits_processors(request.ids[:-1])
        speculative = self._speculative_decoder(stack, request, sampler, processors)
        responses = iter(speculative) if speculative is not None else stream_generate(
            self._loaded.model,
            self._loaded.tokenizer,
            request.ids[-1:],
            max_tokens=request.max_tokens,
            sampler=sampler,
            logits_processors=processors,
            prompt_cache=stack.caches,
        )
        reply = DecodedReply(request, stack)
        try:
            for response in responses:
                now = time.perf_counter()
                if reply.add(response.token, response.text, response.finish_reason, now):
                    break
        finally:
            # Closed here, on the thread that runs it (never from another thread).
            responses.close()
        reply.end()
        return reply.result(speculative)

    def _speculative_decoder(
        self,
        stack: CacheStack,
        request: Request,
        sampler: Sampler,
        processors: list[LogitsProcessor],
    ) -> SpeculativeDecoder | None:
        """A decoder that drafts ahead, or None to decode plainly: when asked to, or when a
        layer cannot be trimmed back (recurrent state, sliding windows: drafts there could not
        be taken back, so this engine declines rather than checkpointing every step), or when
        drafting has been measured not to pay on this machine."""
        if request.params.speculation == "off" or not self._cache.rewinds_anywhere:
            return None
        draft = self._draft if request.params.speculation == "draft" else None
        times = draft.times if draft is not None else self._lookup_times
        if not times.may_pay():
            return None
        drafter: Drafter = (
            draft.drafter(request.ids, request.conversation_id, self._pacer.next_chunk())
            if draft is not None
            else PromptLookupDrafter(request.ids)
        )
        return SpeculativeDecoder(
            self._loaded.model,
            self._loaded.tokenizer,
            stack.caches,
            request.ids,
            request.max_tokens,
            sampler,
            processors,
            drafter,
            DraftLength(times),
        )


def _reply_limit(limit: int | None, prompt_tokens: int, max_tokens: int) -> tuple[int, bool]:
    """How many tokens the reply may take within a context of `limit` tokens, and whether the
    context (not max_tokens) is what limits it."""
    if limit is None or limit - prompt_tokens >= max_tokens:
        return max_tokens, False
    return limit - prompt_tokens, True
