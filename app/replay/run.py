"""A replay run where a model runs (the worker thread, or `branchwise replay`'s process): the
recorded model (the engine at hand when it runs that folder, else loaded for this replay alone,
in the recorded form of its weights), the plan's request through the same engine call a reply
makes, and the new provenance compared with the recorded one.

`inference` is imported here lazily: importing `app` must not load MLX.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from app.generation.reply_provenance import reply_provenance
from app.generation.worker_engine import EngineLike, default_engine_factory
from app.generation.worker_generation import generate_chat, sampling_json, sampling_params
from app.generation.worker_requests import GenerationRequest
from app.replay.outcome import ReplayOutcome, compare
from app.replay.plan import ReplayPlan

# Tokens shown either side of the first difference.
_PIECE_TOKENS = 8


def run_replay(
    plan: ReplayPlan, engine: EngineLike | None = None, loaded: dict[str, Any] | None = None
) -> ReplayOutcome:
    """Generate the reply `plan` describes again and compare it, token for token; `engine`,
    when given, is the one at hand and `loaded` the identity its model had when it loaded."""
    from inference.loading.identity import model_identity
    from inference.prompt.reasoning import reply_splitter

    engine, identity = _engine_for(plan, engine, loaded)
    model = engine.model
    request = GenerationRequest(
        -1,
        plan.messages,
        plan.params,
        conversation_id=plan.conversation_id,
        template_kwargs=plan.template_kwargs,
        continue_reply=plan.continued is not None,
        tools=plan.tools or None,
    )
    params = sampling_params(plan.params)
    result = generate_chat(engine, request, params, conversation_id=plan.conversation_id)
    now = reply_provenance(
        identity or model_identity(model),
        request,
        plan.params,
        sampling_json(params, plan.params),
        False,
        engine.context_length,
        list(result.token_ids),
    )
    splitter = reply_splitter(model.tokenizer, plan.messages, plan.template_kwargs)
    splitter.feed(result.text)
    splitter.finish()
    calls = tuple(result.tool_calls)
    # As a reply stores it: an answer that called tools without the calls' markup, and its calls.
    answer = result.content if calls else splitter.answer
    outcome = compare(
        plan.message_id, plan.recorded, now, (answer, splitter.reasoning), plan.notes, calls
    )
    if outcome.first_difference is None:
        return outcome
    was, is_now = _pieces(model.tokenizer, plan.recorded, now, outcome.first_difference)
    return replace(outcome, recorded_piece=was, replayed_piece=is_now)


def _engine_for(
    plan: ReplayPlan, engine: EngineLike | None, loaded: dict[str, Any] | None
) -> tuple[EngineLike, dict[str, Any] | None]:
    """The engine at hand, with what its model was at load, when it runs the recorded folder
    and the folder has not changed since (else its weights in memory are not the file's); or
    one loaded for this replay, its weights in the form and matrix layout recorded (float32 on
    the CPU or as stored; transposed or not) so the replay computes what the reply computed (its
    identity then read anew). A reply recorded before layouts were recorded names none."""
    from inference.cpu.weight_layout import AS_STORED, TRANSPOSED
    from inference.loading.identity import unchanged_on_disk

    recorded = plan.recorded.get("model") or {}
    layout = recorded.get("layout")
    current = getattr(engine, "model", None)
    if (
        engine is not None
        and current is not None
        and loaded is not None
        and _same(current.path, plan.model_path)
        and unchanged_on_disk(loaded, plan.model_path)
        and layout in (None, current.matrix_layout.layout)
    ):
        return engine, loaded
    policy = "always" if str(recorded.get("form") or "").startswith("float32 (") else "never"
    fresh, _info = default_engine_factory(
        plan.model_path,
        lambda _stage, _done, _total: None,
        cpu_float32=lambda: policy,
        layout={TRANSPOSED: "transposed", AS_STORED: "stored"}.get(str(layout), "auto"),
        layout_forced_by="the replayed reply's record",
    )
    return fresh, None


def _same(a: Path, b: Path) -> bool:
    return a.resolve() == b.resolve()


def _pieces(tokenizer: Any, recorded: dict, now: dict, first: int) -> tuple[str, str]:
    """The text of the tokens from just before the first difference, recorded and now."""
    start = max(0, first - 2)

    def piece(provenance: dict) -> str:
        ids = list(provenance.get("token_ids") or [])
        return str(tokenizer.decode(ids[start : first + _PIECE_TOKENS]))

    return piece(recorded), piece(now)
