"""A reply's provenance as the worker records it when a local model finishes it (the shape is
`app.store.provenance`'s), and the seed a sampled reply is drawn with.

A sampled reply with no seed of its own used to draw from MLX's global random state, which no
one could set again: now the worker draws a seed for it first, so the reply is one a replay can
generate again exactly. Greedy replies keep no seed: the sampler takes the largest logit and
never draws, so their tokens are what they always were.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.generation.worker_requests import GenerationRequest

# Seeds drawn for replies: within what every platform's mx.random.seed takes.
_SEED_RANGE = 2**31


def with_drawn_seed(params: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """`params` with a seed drawn when they sample (temperature above 0) and set none; and
    whether one was drawn."""
    if params.get("seed") is None and float(params.get("temperature") or 0) > 0:
        return {**params, "seed": secrets.randbelow(_SEED_RANGE)}, True
    return params, False


def prompt_digest(messages: Sequence[dict[str, Any]]) -> str:
    """A digest of the messages a reply was asked with. An image part is named by its file's
    name (the image store names files by their SHA-256) or its bytes' digest, not by the data
    folder it lies in, so a copied data folder gives the same digest."""

    def plain(value: Any) -> Any:
        if isinstance(value, dict):
            if value.get("type") == "image":
                return {**value, "image": _image_name(value.get("image"))}
            return {key: plain(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [plain(item) for item in value]
        return value

    text = json.dumps(plain(list(messages)), ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def image_detail(messages: Sequence[dict[str, Any]]) -> int | None:
    """The detail the prompt's images were given at (one per model, so all share it)."""
    for message in messages:
        content = message.get("content")
        for part in content if isinstance(content, list) else ():
            if isinstance(part, dict) and part.get("type") == "image" and part.get("detail"):
                return int(part["detail"])
    return None


def reply_provenance(
    identity: dict[str, Any],
    request: GenerationRequest,
    params: dict[str, Any],
    sampling: dict[str, Any],
    seed_drawn: bool,
    model_context: int | None,
    token_ids: Sequence[int],
) -> dict[str, Any]:
    """The provenance of a reply generated for `request` by the model `identity` names
    (`inference.loading.identity.model_identity`): `params` as the engine was given them (seed
    drawn, draft settled), `sampling` every sampling setting in JSON form; `model_context` the
    engine's context length (None where the model does not say), used unless the chat set its
    own."""
    speculation = str(params.get("speculation") or "off")
    return {
        **identity,
        "sampling": sampling,
        "seed": sampling.get("seed"),
        "seed_drawn": seed_drawn,
        "speculation": speculation,
        "draft_model": str(request.draft_model) if speculation == "draft" else None,
        "tools": list(request.tools or ()),
        "template_kwargs": dict(request.template_kwargs),
        "context_length": params.get("context_length") or model_context,
        "context_limit": params.get("context_length"),
        "overflow": params.get("overflow") or "truncate_middle",
        "prompt_digest": prompt_digest(request.messages),
        # The largest size the model was given its pictures at (None: its processor's own).
        "image_detail": image_detail(request.messages),
        # A continued reply: the text it went on from, which the prompt ends with.
        "continued": request.messages[-1]["content"] if request.continue_reply else None,
        "token_ids": [int(t) for t in token_ids],
    }


def _image_name(image: object) -> str:
    if isinstance(image, bytes | bytearray):
        return hashlib.sha256(image).hexdigest()
    return Path(str(image)).name
