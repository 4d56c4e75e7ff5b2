"""One generation on the worker thread: the request turned into an engine call (with its draft
model set, its sampling parameters and context options), its tokens split into reasoning and
answer and coalesced, its end reported through the worker's signals
(`app.generation.worker_events`), its failure as a `WorkerFailure`.

`inference` is imported here lazily, on the worker thread only.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol

from app.generation.reply_provenance import reply_provenance, with_drawn_seed
from app.generation.token_coalescer import TokenCoalescer
from app.generation.worker_errors import failure_of
from app.generation.worker_events import (
    GenerationFinished,
    PrefillProgress,
    TokensReady,
)

_log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from app.generation.worker_drafts import WorkerDrafts
    from app.generation.worker_engine import EngineLike
    from app.generation.worker_models import Resident
    from app.generation.worker_requests import GenerationRequest
    from app.qt_signal import QtSignal
    from inference import GenerationStats


class GenerationSignals(Protocol):
    """The inference worker's signals a generation reports through."""

    generationStarted: Final[QtSignal]
    prefillProgress: Final[QtSignal]
    tokensReady: Final[QtSignal]
    generationFinished: Final[QtSignal]
    generationFailed: Final[QtSignal]
    draftModelFailed: Final[QtSignal]


def run_generation(
    resident: Resident,
    request: GenerationRequest,
    signals: GenerationSignals,
    drafts: WorkerDrafts,
) -> None:
    """Generate the reply to `request` with the model `resident` (its engine, the tool-call
    format it writes, what names it in provenance), streaming it through `signals`; a failure
    is reported, never raised."""
    engine, model_id, tool_format = resident.engine, resident.model_id, resident.tool_format
    identity = resident.identity
    signals.generationStarted.emit(request.request_id)
    rid = request.request_id
    splitter = _reply_splitter(engine, request)
    calling = _call_watch(tool_format if request.tools else None)

    def emit(reasoning: str, answer: str) -> None:
        call, hidden = calling(answer)
        signals.tokensReady.emit(
            TokensReady(rid, answer, reasoning, splitter.thinking, call, hidden)
        )

    coalescer = TokenCoalescer(emit)

    def on_token(delta: str) -> None:
        coalescer.add(*splitter.feed(delta))

    def on_progress(done: int, total: int) -> None:
        signals.prefillProgress.emit(PrefillProgress(rid, done, total))

    # A chat and a raw prompt stream, report and stop the same way.
    listeners: dict[str, Any] = {
        "conversation_id": request.conversation_id,
        "on_token": on_token,
        "on_progress": on_progress,
        "cancel": request.cancel,
    }
    try:
        settled, seed_drawn = with_drawn_seed(
            _with_draft(engine, request, signals, drafts, model_id)
        )
        params = sampling_params(settled)
        if request.prompt is None:
            result = generate_chat(engine, request, params, **listeners)
        else:
            result = engine.complete(request.prompt, params, **listeners)
    except Exception as exc:
        coalescer.add(*splitter.finish())
        coalescer.flush()
        signals.generationFailed.emit(failure_of(exc, rid))
        return
    coalescer.add(*splitter.finish())
    coalescer.flush()
    stats = plain_stats(result.stats)
    if splitter.reasoning:
        # A delta is about one token (one that completes no character shows none); a reply
        # that never left its reasoning is all reasoning, counted exactly.
        stats["reasoning_tokens"] = (
            stats["generated_tokens"] if splitter.thinking else splitter.reasoning_deltas
        )
        stats["reasoning_s"] = splitter.reasoning_s
    calls = tuple(getattr(result, "tool_calls", ()))
    provenance = None
    if identity is not None and request.prompt is None:
        try:
            provenance = reply_provenance(
                identity,
                request,
                settled,
                sampling_json(params, settled),
                seed_drawn,
                engine.context_length,
                list(result.token_ids),
            )
        except Exception:  # a bug here must cost the record, never the reply (or the thread)
            _log.exception("The provenance of reply %s could not be recorded", rid)
    signals.generationFinished.emit(
        GenerationFinished(
            rid,
            # A reply that called tools: its answer without the calls' markup (str once tools were
            # offered).
            (result.content or "") if calls else splitter.answer,
            result.finish_reason,
            stats,
            reasoning=splitter.reasoning,
            tool_calls=calls,
            dropped_messages=tuple(result.dropped_messages),
            provenance=provenance,
        )
    )


def generate_chat(
    engine: EngineLike, request: GenerationRequest, params: Any, **listeners: Any
) -> Any:
    """`engine.generate` for a chat request: its messages, template switches, continuation,
    context options and tools. A replay calls it too, so both ask the engine alike."""
    return engine.generate(
        request.messages,
        params,
        template_kwargs=request.template_kwargs,
        continue_reply=request.continue_reply,
        **fit_options(request.params),
        **({"tools": request.tools} if request.tools else {}),
        **listeners,
    )


def _with_draft(
    engine: EngineLike,
    request: GenerationRequest,
    signals: GenerationSignals,
    drafts: WorkerDrafts,
    model_id: str,
) -> dict:
    """The request's params, once its draft model is set on the engine; without a usable
    one, a "draft" request guesses from the conversation (prompt lookup) instead."""
    params = request.params
    if params.get("speculation") != "draft":
        return params
    drafting, problem = drafts.prepare(engine, model_id, request.draft_model)
    if problem is not None:
        signals.draftModelFailed.emit(problem)
    return params if drafting else {**params, "speculation": "prompt_lookup"}


def _call_watch(tool_format: str | None) -> Callable[[str], tuple[str | None, int]]:
    """For a reply offered tools: whether its answer so far has begun a call (the tool's name,
    "" while incomplete) and how many of its last characters must not show (the call's markup,
    or what may become a marker), from the whole answer each time (deltas arrive coalesced)."""
    if tool_format is None:
        return lambda _delta: (None, 0)
    from inference.toolcalls.formats import call_in_progress
    from inference.toolcalls.streaming import hidden_tail

    parts: list[str] = []

    def watch(delta: str) -> tuple[str | None, int]:
        parts.append(delta)
        answer = "".join(parts)
        return call_in_progress(answer, tool_format), hidden_tail(answer, tool_format)

    return watch


def _reply_splitter(engine: EngineLike, request: GenerationRequest) -> Any:
    """Splits the reply into reasoning and answer (imported on this thread: it loads mlx-lm).
    An engine without a model tokenizer (a stand-in) gets a splitter that passes all through."""
    from inference.prompt.reasoning import reply_splitter

    model = getattr(engine, "model", None)
    tokenizer = getattr(model, "tokenizer", None)
    return reply_splitter(tokenizer, request.messages, request.template_kwargs)


def sampling_params(params: dict) -> Any:
    """Plain dict from the store -> the engine's SamplingParams (imported on this thread)."""
    from inference import SamplingParams

    known = set(SamplingParams.__dataclass_fields__)
    return SamplingParams(**{k: v for k, v in params.items() if k in known})


def sampling_json(params: Any, given: dict) -> dict[str, Any]:
    """Every field of the engine's SamplingParams `params` as JSON values; the logit bias as
    `given` (the store's JSON form: decimal-string keys)."""
    fields = {name: getattr(params, name) for name in params.__dataclass_fields__}
    return {**fields, "stop": list(params.stop), "logit_bias": dict(given.get("logit_bias") or {})}


def fit_options(params: dict) -> dict[str, Any]:
    """The chat's overflow policy and context length, when it has them (not sampling
    parameters), as the engine's `overflow` and `context_limit` arguments. A context length
    the engine cannot use is passed on all the same: its refusal says why."""
    options: dict[str, Any] = {}
    if params.get("overflow"):
        options["overflow"] = params["overflow"]
    if params.get("context_length") is not None:
        options["context_limit"] = params["context_length"]
    return options


def plain_stats(stats: GenerationStats | Mapping[str, Any]) -> dict[str, Any]:
    """The engine's stats (a dataclass; a stand-in engine's may be a mapping already) as the
    plain dict the store keeps."""
    if isinstance(stats, Mapping):
        return dict(stats)
    return dataclasses.asdict(stats)
