"""What the inference worker's signals carry, as frozen dataclasses: a model's load and the facts
it reported, one generation's progress, text and end, and the memory the models and their caches
take (a failure is a `WorkerFailure`, built where it was caught: `app.generation.worker_errors`).
`RemoteBackend` (`app.remote.backend`) reports a server's replies with the same generation
payloads, so a reply streams into the store alike from either.

The fields hold plain Python values only (never MLX objects): they cross from the worker thread
to the GUI thread. What the store keeps as JSON (a reply's stats, its tool calls, its
provenance, a model's identity) stays in that JSON form here, since it is written as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class LoadProgress:
    """How far a model's load has come: `done` of `total` steps of `stage`."""

    stage: str
    done: int
    total: int


@dataclass(frozen=True, slots=True)
class ModelLoaded:
    """A model the worker loaded, as its load reported it: what the window, the local server,
    token counts and the tool loop read about the model they use."""

    model_id: str
    path: str
    context_length: int | None  # None: its config does not say
    model_type: str = ""
    weights_bytes: int = 0
    weights_form: str = ""  # how its weights are held ("bfloat16", "4-bit", ...), for About
    cpu_float32: str = "auto"  # the policy it loaded under: a draft model follows it
    blas: str = ""  # which BLAS MLX uses on the CPU, in words
    blas_in_use: bool = False
    # How its float32 matrices lie on the CPU and whether that was measured or forced, in words
    # ("" where no layout applies: a GPU, quantized weights).
    matrix_layout: str = ""
    reasons: bool = False  # its replies may begin with reasoning
    # The chat-template switches it reads (`enable_thinking`, `reasoning_effort`; None: none)
    # and the effort levels it takes.
    think_switch: str | None = None
    effort_switch: str | None = None
    effort_levels: tuple[str, ...] = ()
    tool_format: str | None = None  # the format its tool calls are in; None: takes no tools
    vision: bool = False  # it reads images
    text_only_reason: str = ""  # why a vision model reads none here ("" when it does)
    # What names the model in each reply's provenance (weights' and template's digests).
    identity: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class PrefillProgress:
    """Request `request_id` has read `done` of its prompt's `total` tokens (`total` -1: a
    server's prompt, whose size is unknown until its first token)."""

    request_id: int
    done: int
    total: int


@dataclass(frozen=True, slots=True)
class TokensReady:
    """New text of request `request_id` since its last update: `text` of the answer,
    `reasoning` of its reasoning, and `thinking`, whether the reply is still reasoning.
    `calling` is the tool a reply offered tools is calling ("" while its name is incomplete;
    None while it calls none); `hidden`, how many of the answer's last characters must not
    show (a call's markup, or what may become a marker)."""

    request_id: int
    text: str
    reasoning: str = ""
    thinking: bool = False
    calling: str | None = None
    hidden: int = 0


@dataclass(frozen=True, slots=True)
class GenerationFinished:
    """Request `request_id` ended by itself or was stopped (`finish_reason` "cancelled"):
    its whole answer `text` (a reply that called tools: without the calls' markup) and
    `reasoning`, its `stats` (the engine's GenerationStats fields, with "reasoning_tokens" and
    "reasoning_s" when it reasoned), the calls it made ({"id", "name", "arguments"} each),
    the indexes of the request's messages left out of the model's view, and its provenance
    (app.store.provenance; None for a raw prompt or an engine that cannot say)."""

    request_id: int
    text: str
    finish_reason: str
    stats: dict[str, Any]
    reasoning: str = ""
    tool_calls: tuple[dict[str, Any], ...] = ()
    dropped_messages: tuple[int, ...] = ()
    provenance: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class MemoryUse:
    """Bytes the held models' caches take in memory and on disk, the disk's budget, and the
    weights of every model held (draft models included)."""

    cache_bytes: int
    disk_bytes: int
    disk_budget_bytes: int
    weights_bytes: int
