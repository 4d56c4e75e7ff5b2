"""Speculative decoding: draft a few tokens cheaply, check them all in one forward pass.

The target model runs on the last token plus up to k drafted tokens at once; position i of that
pass gives the target's own choice after the first i drafts. Choices are made one position at a
time with the request's own logits processors and sampler (as mlx-lm's `speculative_generate_step`
does), and drafts are accepted while they equal the target's choice; the first differing choice
is kept as the target's token and the rest of the pass is trimmed from the cache. So with greedy
decoding the reply is exactly what plain decoding writes, and with sampling every token is drawn
from the target's distribution: a drafted token is accepted only when the target's own draw
equals it. Positions are sampled in order and only as far as they are used, so a seeded run draws
the same random numbers, in the same order, as plain decoding, and gives the same reply.

Drafters propose tokens (`PromptLookupDrafter` from the conversation's own n-grams,
`DraftModelDrafter` from a smaller model with the same tokenizer); nothing is drafted when they
have no guess, and steps with no draft are ordinary one-token steps, pipelined as mlx-lm's
`generate_step` pipelines them, so a reply with nothing to copy keeps plain speed. `DraftLength`
drafts only as far as it pays on this machine (inference.decoding.draft_length). Only caches that
can be trimmed back (plain KV caches) are decoded this way: the engine declines to speculate on
recurrent, sliding-window or convolution layers.

Worker thread only, like every MLX object.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import mlx.core as mx
from mlx_lm.generate import generation_stream, wired_limit
from mlx_lm.models.cache import trim_prompt_cache

from inference.decoding.draft_length import DraftLength
from inference.decoding.prompt_lookup import PromptLookup
from inference.decoding.sampling import token_id

if TYPE_CHECKING:
    import mlx.nn as nn

    from inference.decoding.sampling import LogitsProcessor, Sampler


class Drafter(Protocol):
    """Guesses the tokens after a token sequence that only ever grows by the target's choices."""

    def draft(self, limit: int) -> list[int]:
        """Up to `limit` guessed next tokens (none when there is no good guess)."""
        ...

    def extend(self, tokens: Sequence[int]) -> None:
        """The target chose `tokens` next."""
        ...

    def ready(self) -> bool:
        """Whether `draft` would guess something now (asked between plain steps, so cheap)."""
        ...

    def release(self) -> None:
        """The reply is over (or failed): let go of whatever the drafter holds."""
        ...


class PromptLookupDrafter:
    """Drafts by copying what followed the latest earlier occurrence of the last few tokens."""

    def __init__(self, prompt: Sequence[int]) -> None:
        self._lookup = PromptLookup(prompt)

    def draft(self, limit: int) -> list[int]:
        return self._lookup.draft(limit)

    def extend(self, tokens: Sequence[int]) -> None:
        self._lookup.extend(tokens)

    def ready(self) -> bool:
        return bool(self._lookup.draft(1))

    def release(self) -> None:
        """Nothing to let go of: the index is dropped with the drafter."""


@dataclass(frozen=True)
class Response:
    """One generated token, as the engine reads mlx-lm's `GenerationResponse`: its text
    segment, its id, and (on the last one) why generation ended."""

    text: str
    token: int
    finish_reason: str | None = None


class SpeculativeDecoder:
    """Decodes from a prefilled cache, yielding `Response`s the way mlx-lm's `stream_generate`
    yields them (the end-of-sequence token ends the reply and is not in the text; at most
    `max_tokens` tokens).

    The caches must have consumed every prompt token but the last, which the decoder feeds. When
    the iteration ends (or is closed early), the caches have consumed exactly the last prompt
    token and every token yielded, as after `stream_generate`. `drafted` and `accepted` count
    the drafted tokens checked and those the target agreed with.
    """

    def __init__(
        self,
        model: nn.Module,
        tokenizer: Any,
        caches: list[Any],
        prompt: Sequence[int],
        max_tokens: int,
        sampler: Sampler,
        logits_processors: Sequence[LogitsProcessor],
        drafter: Drafter,
        length: DraftLength,
    ) -> None:
        self._model = model
        self._tokenizer = tokenizer
        self._caches = caches
        self._last_prompt_token = prompt[-1]
        self._max_tokens = max_tokens
        self._sampler = sampler
        self._processors = list(logits_processors)
        self._drafter = drafter
        self._length = length
        self.drafted = 0
        self.accepted = 0

    def __iter__(self) -> Generator[Response, None, None]:
        detokenizer = self._tokenizer.detokenizer
        eos = set(self._tokenizer.eos_token_ids)
        tokens = self._tokens()
        with wired_limit(self._model, [generation_stream]):
            try:
                yield from self._responses(tokens, detokenizer, eos)
            finally:
                # Settles the caches now, on this thread, not whenever it is collected.
                tokens.close()

    def _responses(
        self, tokens: Iterator[int], detokenizer: Any, eos: set[int]
    ) -> Iterator[Response]:
        for count, token in enumerate(tokens, start=1):
            if token in eos:
                detokenizer.finalize()
                yield Response(detokenizer.last_segment, token, "stop")
                return
            detokenizer.add_token(token)
            if count == self._max_tokens:
                detokenizer.finalize()
                yield Response(detokenizer.last_segment, token, "length")
                return
            yield Response(detokenizer.last_segment, token)

    def _tokens(self) -> Generator[int, None, None]:
        """The target's tokens, several per forward pass when drafts are accepted."""
        state = _Progress(pending=self._last_prompt_token)
        limit: int | None = None  # the draft limit, when a run of plain steps just chose it
        # The caches are settled when the caller stops early or the reply ends, not after an
        # error (the engine then discards them).
        try:
            while state.produced < self._max_tokens:
                started = time.perf_counter()
                limit = self._length.limit() if limit is None else limit
                room = min(limit, self._max_tokens - state.produced - 1)
                drafts = self._drafter.draft(room) if room > 0 else []
                limit = None
                if drafts:
                    yield from self._speculate(state, drafts, started)
                else:
                    limit = yield from self._plain_steps(state)
        except GeneratorExit:
            self._settle(state)
            raise
        finally:
            self._drafter.release()
        self._settle(state)

    def _speculate(
        self, state: _Progress, drafts: list[int], started: float
    ) -> Generator[int, None, None]:
        """One verification pass over the pending token and `drafts`."""
        chosen = self._verify([state.pending, *drafts], state.fed)
        accepted = len(chosen) - 1
        self._length.update(len(drafts), accepted, time.perf_counter() - started)
        self.drafted += len(drafts)
        self.accepted += accepted
        state.fed.extend([state.pending, *drafts[:accepted]])
        self._drafter.extend(chosen)
        state.pending = chosen[-1]
        for token in chosen:
            state.produced += 1
            yield token

    def _plain_steps(self, state: _Progress) -> Generator[int, None, int | None]:
        """One-token steps pipelined as in mlx-lm's `generate_step` (the next step is queued
        before this one's token is read, so building it overlaps the computation), until the
        drafter has a guess again: then the draft limit is returned."""
        step = self._plain_step(mx.array([state.pending]), state.fed)
        state.fed.append(state.pending)
        while True:
            started = time.perf_counter()
            last = state.produced + 1 == self._max_tokens
            following = None if last else self._plain_step(step, state.fed)
            token = token_id(step)
            if following is not None:
                state.fed.append(token)
            self._length.update(0, 0, time.perf_counter() - started)
            self._drafter.extend([token])
            state.pending = token
            state.produced += 1
            yield token
            if following is None:
                return None
            step = following
            limit = self._length.limit()
            if limit > 0 and self._drafter.ready():
                # The queued step already holds the next token: hand it over, then draft.
                token = token_id(step)
                self._drafter.extend([token])
                state.pending = token
                state.produced += 1
                yield token
                return limit

    def _plain_step(self, token: mx.array, fed: list[int]) -> mx.array:
        """Queue the step that feeds `token` (a one-element array, possibly not yet computed)
        and samples the next one."""
        with mx.stream(generation_stream):
            logits = self._model(token[None], cache=self._caches)[0]
            if self._processors:
                seen = mx.concatenate([mx.array(fed, dtype=mx.int32), token.astype(mx.int32)])
                for processor in self._processors:
                    logits = processor(seen, logits)
            logprobs = logits - mx.logsumexp(logits, keepdims=True)
            following = self._sampler(logprobs)
        mx.async_eval(following)  # pyright: ignore[reportUnknownMemberType]  # mlx stub: async_eval(*args) untyped
        return following

    def _verify(self, inputs: list[int], fed: list[int]) -> list[int]:
        """Run the target on `inputs` (the pending token, then drafts) and return its choices up
        to and including the first that differs from the draft; the rest is trimmed."""
        drafts = inputs[1:]
        with mx.stream(generation_stream):
            logits = self._model(mx.array(inputs)[None], cache=self._caches)[0]
            chosen: list[int] = []
            for i in range(len(inputs)):
                row = logits[i : i + 1]
                if self._processors:
                    seen = mx.array(fed + inputs[: i + 1])
                    for processor in self._processors:
                        row = processor(seen, row)
                logprobs = row - mx.logsumexp(row, keepdims=True)
                chosen.append(token_id(self._sampler(logprobs)))
                if i == len(drafts) or chosen[-1] != drafts[i]:
                    break
            trim_prompt_cache(self._caches, len(drafts) - (len(chosen) - 1))
        return chosen

    def _settle(self, state: _Progress) -> None:
        """Leave the caches holding the last prompt token and the tokens yielded: trim what the
        caller never saw, or feed the last token it saw (as plain decoding does before yielding
        it)."""
        fed, wanted = len(state.fed), state.produced + 1
        if fed > wanted:
            trim_prompt_cache(self._caches, fed - wanted)
        elif fed < wanted:
            with mx.stream(generation_stream):
                self._model(mx.array([state.pending])[None], cache=self._caches)
                mx.eval([c.state for c in self._caches])  # pyright: ignore[reportUnknownMemberType]  # mlx stub: eval(*args) untyped


@dataclass
class _Progress:
    """Where decoding stands: `fed` the tokens the caches consumed while decoding (what the
    logits processors see), `pending` the last token chosen (fed only when the next pass
    runs), `produced` the tokens handed to the caller."""

    pending: int
    fed: list[int] = field(default_factory=list[int])
    produced: int = 0
