"""A reply's provenance as the rows of its Details view: plain (label, value) text, every
item the reply recorded, "unknown" for what it could not say (an imported reply, or one written
before provenance was recorded), and whether it can be replayed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from app.store.provenance import is_replayable, item
from app.store.records import Message

UNKNOWN = "unknown"


@dataclass(frozen=True)
class ReplyDetails:
    message_id: int
    rows: tuple[tuple[str, str], ...]
    replayable: bool
    # Why it cannot be replayed (None when it can), for the person.
    why_not: str | None


def reply_details(message: Message) -> ReplyDetails:
    origin = message.provenance
    if origin.get("imported_from"):
        name = item(origin, "model.name") or UNKNOWN
        rows = (
            ("Source", f"imported from {origin['imported_from']}"),
            ("Model", str(name)),
            *((label, UNKNOWN) for label in _RECORDED_LABELS[1:]),
        )
        return ReplyDetails(
            message.id, rows, False, "Imported replies keep only the model their source named."
        )
    if not origin:
        rows = (
            ("Model", message.model_id or UNKNOWN),
            *((label, UNKNOWN) for label in _RECORDED_LABELS[1:]),
        )
        return ReplyDetails(
            message.id,
            rows,
            False,
            "This reply was written before Branchwise recorded provenance, or by a remote server.",
        )
    return ReplyDetails(message.id, _recorded_rows(origin), is_replayable(origin), None)


_RECORDED_LABELS = (
    "Model",
    "Library path",
    "Weights digest",
    "Weights form",
    "Chat template digest",
    "Sampling",
    "Seed",
    "Speculation",
    "Tools offered",
    "Context",
    "Versions",
    "Tokens",
)


def _weights_form(origin: dict[str, Any]) -> str | None:
    """The weights' form, with how their float32 matrices lay where that was recorded."""
    form, layout = item(origin, "model.form"), item(origin, "model.layout")
    if not (form and layout):
        return form
    return f"{form}, matrices {'transposed' if 'transposed' in layout else 'as stored'}"


def _recorded_rows(origin: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    seed = origin.get("seed")
    seed_text = (
        "none (greedy: nothing is drawn)"
        if seed is None
        else f"{seed} (drawn for this reply)"
        if origin.get("seed_drawn")
        else str(seed)
    )
    speculation = str(origin.get("speculation") or "off")
    if origin.get("draft_model"):
        speculation += f": {origin['draft_model']}"
    tools = [str(item(t, "function.name") or "?") for t in origin.get("tools") or ()]
    limit = origin.get("context_limit")
    length = origin.get("context_length")
    context = (f"{length} tokens" if length else "as long as the model takes") + (
        " (the chat's own)" if limit is not None else " (the model's)"
    )
    versions = origin.get("versions") or {}
    values = (
        item(origin, "model.name"),
        item(origin, "model.path"),
        item(origin, "model.weights_digest"),
        _weights_form(origin),
        origin.get("template_digest"),
        _sampling(origin.get("sampling") or {}),
        seed_text,
        speculation,
        ", ".join(tools) or "none",
        f"{context}, overflow: {str(origin.get('overflow')).replace('_', ' ')}",
        f"Branchwise {versions.get('branchwise') or UNKNOWN}, MLX {versions.get('mlx') or UNKNOWN}"
        f", mlx-lm {versions.get('mlx_lm') or UNKNOWN}",
        f"{len(origin.get('token_ids') or ())} generated",
    )
    return tuple(
        (label, UNKNOWN if value is None else str(value))
        for label, value in zip(_RECORDED_LABELS, values, strict=True)
    )


def _sampling(sampling: dict[str, Any]) -> str:
    shown = {k: v for k, v in sampling.items() if k not in ("seed", "speculation")}
    return ", ".join(f"{k} {json.dumps(v, ensure_ascii=False)}" for k, v in sorted(shown.items()))
