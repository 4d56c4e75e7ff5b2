"""One reply as its tokens come, whoever decodes it (mlx-lm's `stream_generate`, the speculative
decoder, or a batch of variants): the tokens, kept in step with the stack's ledger; the text,
cut before a stop string; why the reply ended; and when its tokens came, for the stats.

Every decoder feeds it the same way, so text, stop strings, cancellation and finish reasons are
the same token for token whichever decoded the reply.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from inference.decoding.sampling import StopMatcher
from inference.engine.request import Request, rate
from inference.engine.result import FinishReason, GenerationResult
from inference.engine.tool_reply import read_reply

if TYPE_CHECKING:
    from inference.cache.stack import CacheStack
    from inference.decoding.speculative import SpeculativeDecoder


@dataclass
class DecodedReply:
    request: Request
    stack: CacheStack
    stopper: StopMatcher = field(init=False)
    pieces: list[str] = field(default_factory=list[str])
    generated: list[int] = field(default_factory=list[int])
    finish: FinishReason = "length"
    first_at: float = field(init=False)
    last_at: float = field(init=False)

    def __post_init__(self) -> None:
        self.stopper = StopMatcher(self.request.params.stop)
        self.first_at = self.last_at = self.request.started

    def add(self, token: int, text: str, finish: str | None, now: float) -> bool:
        """Take one generated token, already fed into the stack's caches, with its text segment
        and the decoder's finish reason (None while it goes on); True when the reply is over."""
        request = self.request
        self.last_at = now
        if not self.generated:
            # The first step fed the last prompt token.
            self.stack.tokens.append(request.key[-1])
            self.first_at = now
            request.on_progress(request.prefill_tokens, request.prefill_tokens)
        # Decoders feed each token into the cache before yielding it, so the ledger grows in
        # step with the cache offset.
        self.stack.tokens.append(token)
        self.generated.append(token)
        shown, hit_stop_string = self.stopper.feed(text)
        self._emit(shown)
        if hit_stop_string:
            self.finish = "stop"
        elif finish is not None:
            self.finish = "stop" if finish == "stop" else "length"
        elif request.cancel.is_set():
            self.finish = "cancelled"
        else:
            return False
        self.end()
        return True

    def end(self) -> None:
        """Show the text held back for a stop string that never completed (none after one
        did; calling it again shows nothing more)."""
        self._emit(self.stopper.flush())

    def _emit(self, text: str) -> None:
        if text:
            self.pieces.append(text)
            self.request.on_token(text)

    def result(self, speculative: SpeculativeDecoder | None = None) -> GenerationResult:
        request = self.request
        finish = self.finish
        if finish == "length" and request.capped_by_context:
            finish = "context"
        ttft = self.first_at - request.started
        stats = request.stats(
            len(self.generated),
            ttft,
            rate(request.prefill_tokens, ttft),
            rate(len(self.generated) - 1, self.last_at - self.first_at),
            speculative,
        )
        text = "".join(self.pieces)
        calls, content, finish = read_reply(request, text, finish)
        return GenerationResult(
            text, tuple(self.generated), finish, stats, request.dropped, calls, content
        )
