"""Regenerate ×N: several replies to one prompt, decoded side by side from one prefill.

The prompt is prefilled (or restored from the branch cache) once, up to its last token, exactly
as `Engine.generate` does. Then each variant gets its own fork of that stack (`cache_fork`) and
all decode as one batch with mlx-lm's `BatchGenerator`: the forks are merged into batch caches,
every variant feeds the last prompt token as its first step, and each samples with a sampler that
owns its random key (`seeded_sampler`), so variant i draws exactly what a single run seeded with
`seeds[i]` draws. Text, stop strings, cancellation and finish reasons come from the same
`DecodedReply` as the engine's own decoder, token for token, so `results[i]` equals
`engine.generate(messages, replace(params, seed=seeds[i]))`.

Some cache kinds cannot be merged into a batch (mlx-lm raises when a layer's cache has no batch
form): then the variants decode one after another from their forks, with the engine's own
decoder, and the same results. Either way the finished stacks go back to the branch cache one by
one, so every variant stays cached as a sibling branch.

Worker thread only, like the engine.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from mlx_lm.generate import BatchGenerator

from inference.cache.fork import fork_stack
from inference.cache.stack import CacheStack
from inference.decoding.sampling import SamplingParams
from inference.decoding.seeded_sampler import seeded_sampler
from inference.engine.decoded_reply import DecodedReply
from inference.engine.request import Request
from inference.engine.result import GenerationResult
from inference.errors import SamplingError

if TYPE_CHECKING:
    from inference.engine.request_builder import RequestBuilder
    from inference.engine.runner import RequestRunner
    from inference.prompt.context_fit import Overflow

log = logging.getLogger(__name__)

MAX_VARIANTS = 8


class _AllSet:
    """Set when every variant's cancel event is set: the shared prefill stops only then."""

    def __init__(self, events: Sequence[threading.Event]) -> None:
        self._events = events

    def is_set(self) -> bool:
        return all(event.is_set() for event in self._events)


def generate_variants(
    builder: RequestBuilder,
    runner: RequestRunner,
    messages: Sequence[Mapping[str, Any]],
    params: SamplingParams | None,
    seeds: Sequence[int | None],
    conversation_id: Hashable,
    on_token: Callable[[int, str], None] | None,
    cancel: threading.Event | Sequence[threading.Event] | None,
    overflow: Overflow,
    context_limit: int | None = None,
) -> list[GenerationResult]:
    """See `Engine.generate_variants`."""
    params = SamplingParams() if params is None else params
    seeds = list(seeds)
    if not 1 <= len(seeds) <= MAX_VARIANTS:
        raise SamplingError(f"Variants need 1 to {MAX_VARIANTS} seeds, not {len(seeds)}.")
    settings = [replace(params, seed=seed) for seed in seeds]  # validates each seed
    cancels = _cancel_events(cancel, len(seeds))
    emit: Callable[[int, str], None] = on_token or (lambda index, text: None)
    request = builder.chat_request(
        messages, params, conversation_id, overflow, context_limit=context_limit
    )
    request.cancel = _AllSet(cancels)
    stack = runner.prefilled(request)
    if isinstance(stack, GenerationResult):
        return [stack] * len(seeds)
    cache = runner.cache
    requests = [
        replace(request, params=p, cancel=c, on_token=_for_variant(emit, i))
        for i, (p, c) in enumerate(zip(settings, cancels, strict=True))
    ]
    forks = [fork_stack(stack) for _ in seeds]
    try:
        results = _decode_batch(runner, forks, requests)
    except _NotBatchable as why:
        log.info("variants decode one after another: %s", why)
        results = [runner.decode(fork, r) for fork, r in zip(forks, requests, strict=True)]
    except BaseException:
        cache.discard(stack)
        raise
    for fork in forks:
        cache.give_back(fork, conversation_id)
    return results


def _cancel_events(
    cancel: threading.Event | Sequence[threading.Event] | None, n: int
) -> list[threading.Event]:
    if cancel is None:
        return [threading.Event() for _ in range(n)]
    if isinstance(cancel, threading.Event):
        return [cancel] * n
    events = list(cancel)
    if len(events) != n:
        raise SamplingError(f"{n} variants need {n} cancel events, not {len(events)}.")
    return events


def _for_variant(emit: Callable[[int, str], None], index: int) -> Callable[[str], None]:
    return lambda text: emit(index, text)


class _NotBatchable(Exception):
    """A layer's cache has no batch form; raised before any variant has produced a token."""


@dataclass
class _Variant:
    """One variant in the batch: mlx-lm's batch yields bare token ids, so its text is
    detokenized here before the reply takes it."""

    reply: DecodedReply
    detokenizer: Any
    eos: frozenset[int]

    def add(self, token: int, finish: str | None, now: float) -> bool:
        """Take one generated token (already fed into the cache); True when the reply ended."""
        # As mlx-lm's stream_generate: the end-of-sequence token adds no text.
        if token not in self.eos:
            self.detokenizer.add_token(token)
        if finish is not None:
            self.detokenizer.finalize()
        return self.reply.add(token, self.detokenizer.last_segment, finish, now)


def _decode_batch(
    runner: RequestRunner, forks: list[CacheStack], requests: list[Request]
) -> list[GenerationResult]:
    """Decode every fork in one `BatchGenerator`; each fork ends up holding its variant's
    caches and tokens, as `RequestRunner.decode` leaves its stack."""
    loaded = runner.loaded
    tokenizer = loaded.tokenizer
    eos = frozenset(tokenizer.eos_token_ids)
    n = len(forks)
    generator = BatchGenerator(
        loaded.model,
        stop_tokens=[[token] for token in sorted(eos)],
        completion_batch_size=n,
        prefill_batch_size=n,
    )
    try:
        prompt = requests[0].ids
        uids = generator.insert(
            [[prompt[-1]] for _ in forks],
            max_tokens=[r.max_tokens for r in requests],
            caches=[fork.caches for fork in forks],
            # Each variant's own copy: mlx-lm appends to it. Processors look back over it,
            # as a single run's processors look back over the prompt.
            all_tokens=[list(prompt[:-1]) for _ in forks],
            samplers=[seeded_sampler(r.params) for r in requests],
            logits_processors=[r.params.make_logits_processors(()) for r in requests],
        )
        variants = {
            uid: _Variant(DecodedReply(r, fork), tokenizer.detokenizer, eos)
            for uid, r, fork in zip(uids, requests, forks, strict=True)
        }
        try:
            first = generator.next_generated()
        except (ValueError, TypeError, AttributeError, NotImplementedError) as error:
            raise _NotBatchable(f"{type(error).__name__}: {error}") from error
        _run(generator, variants, first)
    finally:
        generator.close()
    return [variant.reply.result() for variant in variants.values()]


def _run(generator: BatchGenerator, variants: dict[int, _Variant], responses: list[Any]) -> None:
    pending = set(variants)
    while True:
        now = time.perf_counter()
        for response in responses:
            variant = variants[response.uid]
            if not variant.add(response.token, response.finish_reason, now):
                continue
            pending.discard(response.uid)
            if response.finish_reason is not None:
                caches = response.prompt_cache
            else:  # a stop string or a cancel: take it out of the batch with its caches
                caches = generator.remove([response.uid], return_prompt_caches=True)[response.uid][
                    0
                ]
            variant.reply.stack.caches = caches
        if not pending:
            return
        responses = generator.next_generated()
