"""Where a reply came from, as the store keeps it (the `provenance` column, JSON) and the
export carries it. Written by `app.generation.reply_provenance` when a local model finishes a
reply; read by the reply's Details view and by a replay (`app.replay`).

    {"model": {"name", "path", "weights_digest", "form"},
     "template_digest": str,             # the chat template's source, hashed
     "sampling": {...},                  # every SamplingParams field, the seed actually used
     "seed": int | None,                 # None: greedy (the seed changes nothing)
     "seed_drawn": bool,                 # the chat set none: this one was drawn for the reply
     "speculation": "off" | "prompt_lookup" | "draft", "draft_model": str | None,
     "tools": [OpenAI tool schemas], "template_kwargs": {...},
     "context_length": int, "overflow": str,
     "versions": {"branchwise", "mlx", "mlx_lm"},
     "prompt_digest": str,               # the messages sent, hashed (images by their digest)
     "token_ids": [int, ...]}            # what the model generated, end-of-sequence included

The token ids are kept because a reply's text cannot give them back: tokenizing the text again
is not the inverse of decoding (several id runs decode alike), and the stored answer has lost its
reasoning and any tool call's markup. A replay compares ids, so it can say where they first part.

A reply imported from another app keeps what its source said, the model's name, and says where
it came from (`"imported_from"`); everything else is unknown. A reply made before provenance was
recorded, or by a remote server, holds {}.
"""

from __future__ import annotations

from typing import Any, cast

# The items a replay compares with what it finds now, and how the person reads each.
IDENTITY_ITEMS: tuple[tuple[str, str], ...] = (
    ("model.weights_digest", "the weights"),
    ("model.form", "the weights' form"),
    ("template_digest", "the chat template"),
    ("versions.branchwise", "the Branchwise version"),
    ("versions.mlx", "the MLX version"),
    ("versions.mlx_lm", "the mlx-lm version"),
    ("prompt_digest", "the prompt (the conversation or its system prompt changed)"),
)


def imported_provenance(source_format: str, model: str | None) -> dict[str, Any]:
    """What an imported reply can say of its origin: its source and the model it named."""
    return {"imported_from": source_format, "model": {"name": model}}


def item(provenance: dict[str, Any], dotted: str) -> Any:
    """The value at `dotted` ("model.weights_digest"), None where it is not recorded."""
    value: Any = provenance
    for key in dotted.split("."):
        value = cast("dict[str, Any]", value).get(key) if isinstance(value, dict) else None
    return value


def is_replayable(provenance: dict[str, Any]) -> bool:
    """Whether the reply recorded enough to be generated again and compared."""
    return bool(item(provenance, "model.path")) and isinstance(provenance.get("token_ids"), list)
