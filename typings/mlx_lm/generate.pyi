from collections.abc import Generator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

import mlx.core as mx
from mlx import nn
from mlx_lm.sample_utils import LogitsProcessor, Sampler
from mlx_lm.tokenizer_utils import TokenizerWrapper

generation_stream: mx.ThreadLocalStream

def wired_limit(
    model: nn.Module, streams: list[mx.Stream | mx.ThreadLocalStream] | None = None
) -> AbstractContextManager[None]: ...

class GenerationResponse:
    text: str
    token: int
    logprobs: mx.array
    from_draft: bool
    prompt_tokens: int
    prompt_tps: float
    generation_tokens: int
    generation_tps: float
    peak_memory: float
    finish_reason: str | None

# Only the keyword arguments of generate_step that Branchwise passes are declared.
def stream_generate(
    model: nn.Module,
    tokenizer: TokenizerWrapper,
    prompt: str | mx.array | list[int],
    max_tokens: int = 256,
    draft_model: nn.Module | None = None,
    stream: mx.Stream | mx.ThreadLocalStream = ...,
    *,
    sampler: Sampler | None = None,
    logits_processors: list[LogitsProcessor] | None = None,
    prompt_cache: list[Any] | None = None,
) -> Generator[GenerationResponse]: ...

# (state name or None at the end, trie node, the machine's states, held-back text)
_MachineState = tuple[str | None, Any, Any, str]

class TextStateMachine:
    def __init__(self, transitions: Mapping[str, list[tuple[str, str]]] | None = None) -> None: ...
    def make_state(self, initial: str = "normal") -> _MachineState: ...
    # (state after, one (state name, text) segment per state passed)
    @staticmethod
    def split(
        state: _MachineState, text: str
    ) -> tuple[_MachineState, list[tuple[str | None, str]]]: ...
    # (state after, the held-back text, the state name)
    @staticmethod
    def flush(state: _MachineState) -> tuple[_MachineState, str, str | None]: ...

class GenerationBatch:
    class Response:
        uid: int
        token: int
        logprobs: mx.array
        finish_reason: str | None
        prompt_cache: list[Any] | None
        all_tokens: list[int] | None

class BatchGenerator:
    def __init__(
        self,
        model: nn.Module,
        *,
        max_tokens: int = 128,
        stop_tokens: Sequence[Sequence[int]] | None = None,
        sampler: Sampler | None = None,
        logits_processors: list[LogitsProcessor] | None = None,
        completion_batch_size: int = 32,
        prefill_batch_size: int = 8,
        prefill_step_size: int = 2048,
        max_kv_size: int | None = None,
        stream: mx.Stream | mx.ThreadLocalStream | None = None,
    ) -> None: ...
    def close(self) -> None: ...
    # The new sequences' uids.
    def insert(
        self,
        prompts: list[list[int]],
        max_tokens: list[int] | None = None,
        caches: list[list[Any]] | None = None,
        all_tokens: list[list[int]] | None = None,
        samplers: list[Sampler] | None = None,
        logits_processors: list[list[LogitsProcessor]] | None = None,
    ) -> list[int]: ...
    # With return_prompt_caches, uid -> (its caches, its tokens); else empty.
    def remove(
        self, uids: list[int], return_prompt_caches: bool = False
    ) -> dict[int, tuple[list[Any], list[int]]]: ...
    def next_generated(self) -> list[GenerationBatch.Response]: ...
