"""One request as the engine's prefill and decode steps carry it: the prompt's token ids, the
sampling settings, the reply's token limit, the callbacks, and what the branch cache supplied.

A chat request (`Engine.generate`) also holds the messages it rendered, for the checkpoints at
message boundaries; a raw prompt (`Engine.complete`) has none.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from inference.decoding.sampling import SamplingParams
from inference.engine.result import GenerationResult, GenerationStats

if TYPE_CHECKING:
    from inference.decoding.speculative import SpeculativeDecoder
    from inference.prompt.chat_prompt import RenderedPrompt
    from inference.vision.prompt import VisionPrompt


def _no_text(text: str) -> None:
    """The default `on_token`: nobody is listening."""


def _no_progress(done: int, total: int) -> None:
    """The default `on_progress`: nobody is listening."""


class CancelFlag(Protocol):
    """What a request polls to learn it was cancelled: a `threading.Event`, or several."""

    def is_set(self) -> bool: ...


@dataclass
class Request:
    """One generate call's inputs, as the prefill and decode steps need them."""

    ids: list[int]
    params: SamplingParams
    max_tokens: int
    capped_by_context: bool
    conversation_id: Hashable
    started: float
    # The rendered chat and its messages; None and empty for a raw prompt.
    prompt: RenderedPrompt | None = None
    messages: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    template_kwargs: dict[str, Any] = field(default_factory=dict[str, Any])
    dropped: tuple[int, ...] = ()
    on_token: Callable[[str], None] = _no_text
    on_progress: Callable[[int, int], None] = _no_progress
    cancel: CancelFlag = field(default_factory=threading.Event)
    cached: int = 0
    disk_tokens: int = 0
    # With tools offered: the tool-call format the reply is read in, the schemas (which type
    # some formats' values), and whether the prompt left a reasoning block open.
    tool_format: str | None = None
    tools: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    starts_thinking: bool = False
    # With images: where each image's tokens lie, and the key the branch cache stores the
    # prompt under (image spans replaced by ids from each image's digest).
    vision: VisionPrompt | None = None

    @property
    def key(self) -> list[int]:
        """The ids the branch cache looks the prompt up by: the ids themselves without images."""
        return self.vision.key if self.vision is not None else self.ids

    @property
    def whole_spans(self) -> tuple[tuple[int, int], ...]:
        """Token ranges no cache cut or prefill chunk end may fall inside (images whose tokens
        attend both ways)."""
        return self.vision.whole_spans() if self.vision is not None else ()

    @property
    def prefill_tokens(self) -> int:
        return len(self.ids) - self.cached

    def listen(
        self,
        on_token: Callable[[str], None] | None,
        on_progress: Callable[[int, int], None] | None,
        cancel: threading.Event | None,
    ) -> None:
        """Take the caller's callbacks and cancel event, keeping the defaults for those None."""
        self.on_token = on_token or self.on_token
        self.on_progress = on_progress or self.on_progress
        self.cancel = cancel or self.cancel

    def stats(
        self,
        generated: int,
        ttft_s: float,
        prefill_tps: float,
        decode_tps: float = 0.0,
        speculative: SpeculativeDecoder | None = None,
    ) -> GenerationStats:
        return GenerationStats(
            prompt_tokens=len(self.ids),
            cached_tokens=self.cached,
            prefill_tokens=self.prefill_tokens,
            generated_tokens=generated,
            ttft_s=ttft_s,
            prefill_tps=prefill_tps,
            decode_tps=decode_tps,
            disk_tokens=self.disk_tokens,
            drafted_tokens=speculative.drafted if speculative is not None else 0,
            accepted_tokens=speculative.accepted if speculative is not None else 0,
        )

    def cancelled(self, computed: int) -> GenerationResult:
        """The result of a request cancelled during prefill, after computing `computed`
        prompt tokens."""
        elapsed = time.perf_counter() - self.started
        stats = self.stats(0, 0.0, rate(computed, elapsed))
        return GenerationResult("", (), "cancelled", stats, self.dropped)


def rate(count: int, seconds: float) -> float:
    return count / seconds if count > 0 and seconds > 0 else 0.0
