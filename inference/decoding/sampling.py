"""Sampling settings, turned into mlx-lm's own samplers and logits processors, and stop strings."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, TypeGuard, cast, get_args

import mlx.core as mx
from mlx_lm.sample_utils import make_logits_processors, make_sampler

from inference.errors import SamplingError

Sampler = Callable[[mx.array], mx.array]
LogitsProcessor = Callable[[mx.array, mx.array], mx.array]


# How far back the repetition penalty looks (mlx-lm's default, passed explicitly so the prefix
# handed to it below is exactly long enough).
PENALTY_CONTEXT_TOKENS = 20

# How the engine may guess tokens ahead (see inference.speculative): "prompt_lookup" copies from
# the conversation itself, "draft" asks the engine's draft model; both give the same reply.
Speculation = Literal["off", "prompt_lookup", "draft"]


@dataclass(frozen=True)
class SamplingParams:
    """How to pick each next token. Invalid values raise `SamplingError` when constructed.

    `temperature` 0 means greedy. `top_p` 1.0, `top_k` 0, `min_p` 0.0 and `repetition_penalty`
    1.0 switch those filters off. `seed` makes sampling reproducible: the engine calls
    `mx.random.seed(seed)` right before decoding, as a from-scratch mlx-lm run seeded just
    before `stream_generate` does. Generation ends at the model's end-of-sequence token, after
    `max_tokens`, or when the text contains one of the `stop` strings (cut before it).

    `logit_bias` maps token ids to a number added to their logits before sampling, as in the
    OpenAI API: -inf (or a large negative number) bans a token, e.g. the end-of-sequence id.
    Keys may be ints or decimal strings (JSON object keys are strings); they are stored as ints
    in a read-only mapping. Values must be finite or -inf.

    `speculation` lets the engine draft tokens and check several in one forward pass; it
    changes speed, never the reply (the engine declines where the model's caches cannot be
    trimmed back). "off" decodes one token per pass.
    """

    temperature: float = 0.0
    top_p: float = 1.0
    top_k: int = 0
    min_p: float = 0.0
    repetition_penalty: float = 1.0
    max_tokens: int = 512
    seed: int | None = None
    stop: tuple[str, ...] = ()
    # Left out of the hash (a mapping has none); equality still compares it.
    logit_bias: Mapping[int, float] = field(
        default_factory=lambda: MappingProxyType({}), hash=False
    )
    speculation: Speculation = "prompt_lookup"

    def __post_init__(self) -> None:
        # A list of stop strings is accepted for convenience and frozen into a tuple.
        object.__setattr__(self, "stop", tuple(self.stop))
        bias = _token_bias(self.logit_bias)
        if bias is not None:
            object.__setattr__(self, "logit_bias", MappingProxyType(bias))
        problems = [
            message
            for bad, message in (
                (
                    not _finite(self.temperature) or self.temperature < 0,
                    f"temperature must be 0 or more, not {self.temperature}",
                ),
                (
                    not _finite(self.top_p) or not 0 < self.top_p <= 1,
                    f"top_p must be above 0 and at most 1, not {self.top_p}",
                ),
                (
                    not _whole(self.top_k) or self.top_k < 0,
                    f"top_k must be a whole number, 0 or more, not {self.top_k}",
                ),
                (
                    not _finite(self.min_p) or not 0 <= self.min_p <= 1,
                    f"min_p must be between 0 and 1, not {self.min_p}",
                ),
                (
                    not _finite(self.repetition_penalty) or self.repetition_penalty <= 0,
                    f"repetition_penalty must be above 0, not {self.repetition_penalty}",
                ),
                (
                    not _whole(self.max_tokens) or self.max_tokens <= 0,
                    f"max_tokens must be a whole number above 0, not {self.max_tokens}",
                ),
                (
                    self.seed is not None and (not _whole(self.seed) or self.seed < 0),
                    f"seed must be a whole number, 0 or more, not {self.seed}",
                ),
                (not all(_text(s) for s in self.stop), "stop strings must be non-empty text"),
                (
                    self.speculation not in get_args(Speculation),
                    f"speculation must be one of {', '.join(get_args(Speculation))}, "
                    f"not {self.speculation!r}",
                ),
                (
                    bias is None,
                    "logit_bias must map token ids (whole numbers, 0 or more) to finite numbers "
                    f"or -inf, not {self.logit_bias!r}",
                ),
            )
            if bad
        ]
        if problems:
            raise SamplingError("Invalid sampling settings: " + "; ".join(problems) + ".")

    def make_sampler(self) -> Sampler:
        return make_sampler(
            temp=self.temperature, top_p=self.top_p, min_p=self.min_p, top_k=self.top_k
        )

    def make_logits_processors(self, cached_prompt: Sequence[int]) -> list[LogitsProcessor]:
        """mlx-lm's processors, seeing `cached_prompt` before the tokens fed to the generator.

        mlx-lm's generator shows a processor only the tokens it was given itself; the engine
        feeds it just the uncached tail, so the prompt before it is prepended to match what a
        from-scratch run sees (the repetition penalty looks back over the prompt).
        """
        penalty = None if self.repetition_penalty == 1.0 else self.repetition_penalty
        processors = make_logits_processors(
            logit_bias=dict(self.logit_bias),
            repetition_penalty=penalty,
            repetition_context_size=PENALTY_CONTEXT_TOKENS,
        )
        if not processors or not cached_prompt:
            return processors
        # The penalty reads only the last PENALTY_CONTEXT_TOKENS tokens, so a longer prefix would
        # be copied into every decode step for nothing.
        prefix = mx.array(list(cached_prompt[-PENALTY_CONTEXT_TOKENS:]), dtype=mx.int32)
        return [_after_prefix(p, prefix) for p in processors]


def _after_prefix(processor: LogitsProcessor, prefix: mx.array) -> LogitsProcessor:
    def apply(tokens: mx.array, logits: mx.array) -> mx.array:
        return processor(mx.concatenate([prefix, tokens.astype(mx.int32)]), logits)

    return apply


def _token_bias(value: object) -> dict[int, float] | None:
    """`value` as {token id: bias}, or None when it is not a valid logit bias."""
    if not isinstance(value, Mapping):
        return None
    bias: dict[int, float] = {}
    for key, number in cast("Mapping[object, object]", value).items():
        token = int(key) if isinstance(key, str) and key.isascii() and key.isdigit() else key
        if not _whole(token) or token < 0 or not _bias_number(number):
            return None
        bias[token] = float(number)
    return bias


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _bias_number(value: object) -> TypeGuard[float]:
    """A finite number, or -inf (which bans the token)."""
    return _finite(value) or value == -math.inf


def _whole(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _text(value: object) -> bool:
    """Non-empty text (the fields' types are not checked where the values come from JSON)."""
    return isinstance(value, str) and bool(value)


def token_id(sampled: mx.array) -> int:
    """The id in a one-element array of sampled (or argmax) token ids: mlx types `item()` as
    any scalar, but these arrays hold integers."""
    return cast(int, sampled.item())


class StopMatcher:
    """Cuts streamed text at the first stop string, holding back a tail that may begin one.

    Text is released only once it can no longer be the start of a stop string, so a stop string
    split across tokens never reaches the reader.
    """

    def __init__(self, stops: Sequence[str]) -> None:
        self._stops = tuple(stops)
        self._held = ""

    def feed(self, segment: str) -> tuple[str, bool]:
        """Return (text safe to show, whether a stop string was found)."""
        text = self._held + segment
        hits = [i for i in (text.find(s) for s in self._stops) if i >= 0]
        if hits:
            self._held = ""
            return text[: min(hits)], True
        hold = self._partial_stop_length(text)
        self._held = text[len(text) - hold :]
        return text[: len(text) - hold], False

    def flush(self) -> str:
        """The held-back text, once generation ended without completing a stop string."""
        held, self._held = self._held, ""
        return held

    def _partial_stop_length(self, text: str) -> int:
        longest = max((len(s) - 1 for s in self._stops), default=0)
        for k in range(min(longest, len(text)), 0, -1):
            tail = text[-k:]
            if any(s.startswith(tail) for s in self._stops):
                return k
        return 0
