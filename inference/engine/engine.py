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
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inference.cache.branch_cache import BranchCache
from inference.decoding.draft_length import PassTimes
from inference.decoding.sampling import SamplingParams
from inference.engine.cache_state import PathCacheState, cache_state
from inference.engine.engine_caches import EngineCaches
from inference.engine.request_builder import RequestBuilder
from inference.engine.result import GenerationResult
from inference.engine.runner import RequestRunner
from inference.engine.variants import generate_variants
from inference.prompt.context_fit import Overflow

if TYPE_CHECKING:
    from inference.loading.load import LoadedModel

DEFAULT_PREFILL_CHUNK = 512


class Engine:
    """Generates replies for conversation paths, reusing every prefix it has computed.

    `cache_dir` keeps caches across restarts (within `disk_budget_bytes`, by default the smaller
    of 30 GiB and a quarter of the free space). Use from one thread only, the inference
    worker's (see the module docstring). The work is done by three parts: a `RequestBuilder`
    (messages to a fitted, rendered request), `EngineCaches` (the branch caches and their
    budgets) and a `RequestRunner` (prefill and decode).
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
        self._builder = RequestBuilder(model)
        self._caches = EngineCaches(model, cache_budget_bytes, cache_dir, disk_budget_bytes)
        self._runner = RequestRunner(
            model, self._caches.main, self._builder, prefill_chunk_tokens, self._caches.features
        )

    @property
    def model(self) -> LoadedModel:
        return self._loaded

    @property
    def _cache(self) -> BranchCache:
        """The main model's branch cache (tests look inside it)."""
        return self._caches.main

    @property
    def _lookup_times(self) -> PassTimes:
        """What prompt-lookup verification passes cost here (tests teach it)."""
        return self._runner.lookup_times

    @property
    def context_length(self) -> int | None:
        """The longest sequence the model handles (None when its config does not say)."""
        return self._loaded.context_length

    @property
    def cache_budget_bytes(self) -> int:
        return self._caches.cache_budget_bytes

    @cache_budget_bytes.setter
    def cache_budget_bytes(self, value: int) -> None:
        """Change the memory budget; caches beyond it are evicted at once."""
        self._caches.cache_budget_bytes = value

    @property
    def draft_model(self) -> LoadedModel | None:
        draft = self._caches.draft
        return draft.model if draft is not None else None

    def set_draft_model(self, draft: LoadedModel | None) -> None:
        """Use `draft` for requests whose speculation is "draft" (None: no draft model; they
        then draft by prompt lookup). Raises ModelLoadError when its tokenizer differs from the
        main model's or its caches cannot be trimmed back. Its stored caches share the memory
        and disk budgets, in proportion to the bytes each model's cache takes per token; with a
        cache folder they are saved, and found again by a later engine, as the main model's."""
        self._runner.draft = self._caches.set_draft_model(draft)

    @property
    def disk_budget_bytes(self) -> int:
        return self._caches.disk_budget_bytes

    @disk_budget_bytes.setter
    def disk_budget_bytes(self, value: int) -> None:
        """Change the disk budget for saved caches (applied at the next save)."""
        self._caches.disk_budget_bytes = value

    @property
    def disk_error(self) -> str | None:
        """Why saving caches stopped (a full disk, say), or None. Caches stay in memory."""
        return self._caches.disk_error

    def cache_bytes(self) -> int:
        """Bytes held in memory by stored caches, each shared segment counted once."""
        return self._caches.nbytes()

    def disk_bytes(self) -> int:
        """Bytes of saved caches under the cache folder (every model's)."""
        return self._caches.disk_bytes()

    def clear_cache(self) -> None:
        """Drop every cache held in memory and return the memory (saved files stay)."""
        self._caches.clear()

    def clear_saved_caches(self) -> None:
        """Delete every saved cache file of this model and of its draft model."""
        self._caches.clear_saved()

    def forget(self, conversation_id: Hashable, keep_saved: bool = False) -> None:
        """Drop the caches only `conversation_id` used, in memory and on disk. With
        `keep_saved`, free only the memory (a deletion that may still be undone): its saved
        files stay, and a later `forget` without it deletes them."""
        self._caches.forget(conversation_id, keep_saved)

    def save_pending(self, seconds: float = 0.05) -> bool:
        """Save unsaved caches for about `seconds` (the worker calls this when idle), the main
        model's first; True while some remain."""
        return self._caches.save_pending(seconds)

    def flush(self) -> None:
        """Finish pending cache writes."""
        while self.save_pending(1.0):
            pass

    def close(self) -> None:
        """Finish pending cache writes; the engine is not used after this."""
        self.flush()

    def count_prompt_tokens(
        self,
        messages: Sequence[Mapping[str, Any]],
        template_kwargs: Mapping[str, Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> int:
        """Tokens the rendered prompt for `messages` takes, generation prompt included (and the
        `tools` offered, as `generate` renders them)."""
        return self._builder.count_prompt_tokens(messages, template_kwargs, tools)

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
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> GenerationResult:
        """Generate the reply that follows `messages` (the path from the root to the new turn).

        `on_token(text_delta)` streams the reply; `on_progress(done, total)` reports prompt
        tokens computed out of those this request must compute; setting `cancel` stops within
        one prefill chunk or one token, and the result then has finish_reason "cancelled".
        When the path does not fit the context with room for a reply, `overflow` chooses:
        "truncate_middle", "rolling" or "stop" (see inference.prompt.context_fit).
        `context_limit` is the chat's own context length (None: the model's): prompt and reply
        then fit the smaller of the two, and the policy acts there. `continue_reply` goes on
        writing the last message, a partial assistant reply, as it stands (its turn is left
        open, as HF's `continue_final_message` renders it). Raises PromptError (an
        InferenceError) for bad messages or a prompt that cannot fit; the engine stays usable
        after any error. `template_kwargs` go to the chat template (e.g. `enable_thinking`,
        `reasoning_effort`). Worker thread only.

        `tools` are OpenAI-style schemas rendered through the chat template (PromptError when
        its template takes none); the messages may then hold assistant `tool_calls` and `tool`
        results (see inference.prompt.tool_messages), and the result carries the calls the
        reply made (`tool_calls`, `content`, finish_reason "tool_calls"; see
        inference.engine.tool_reply).
        """
        request = self._builder.chat_request(
            messages,
            params,
            conversation_id,
            overflow,
            template_kwargs,
            continue_reply,
            context_limit,
            tools,
        )
        request.listen(on_token, on_progress, cancel)
        return self._runner.run(request)

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
        request = self._builder.raw_request(prompt, params, conversation_id)
        request.listen(on_token, on_progress, cancel)
        return self._runner.run(request)

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
        one per variant; `context_limit` as for `generate`. See inference.engine.variants.
        Worker thread only."""
        return generate_variants(
            self._builder,
            self._runner,
            messages,
            params,
            seeds,
            conversation_id,
            on_token,
            cancel,
            overflow,
            context_limit,
        )

    def cache_state(self, paths: Sequence[Sequence[Mapping[str, Any]]]) -> list[PathCacheState]:
        """Where each path's prompt is cached, as plain values for the GUI's branch map (see
        inference.engine.cache_state). Worker thread only."""
        return cache_state(self._builder, self._caches.main, paths)
