"""The reference a vision reply must equal: mlx-vlm's own generation from scratch, on the same
model, with its own processor run on the whole rendered prompt (`prepare_inputs`) and its own
`generate_step` (the vision tower over all the prompt's images, its own position handling).

Only the chat template's rendering is shared with the engine: the expansion of each image into
tokens, the pixel values, the merge of features and the positions are mlx-vlm's.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import mlx.core as mx

from inference.loading.load import LoadedModel
from tests.engine_reference import Reference


def _pictures(messages: Sequence[dict[str, Any]]) -> list[Any]:
    from PIL import Image

    found = []
    for message in messages:
        content = message["content"]
        if isinstance(content, list):
            found += [
                Image.open(io.BytesIO(part["image"])).convert("RGB")
                for part in content
                if part["type"] == "image"
            ]
    return found


def template_messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages as a vision template reads them: every content a list of parts."""
    out = []
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            parts = [{"type": "text", "text": content}]
        else:
            parts = [
                {"type": "image"} if p["type"] == "image" else {"type": "text", "text": p["text"]}
                for p in content
            ]
        out.append({"role": message["role"], "content": parts})
    return out


def mlx_vlm_reference(
    loaded: LoadedModel,
    messages: Sequence[dict[str, Any]],
    max_tokens: int,
    tools: list[dict[str, Any]] | None = None,
) -> Reference:
    """Greedy tokens from mlx-vlm's `generate_step` for `messages` (images as PNG bytes), with
    the top-2 margin each was chosen by (tests.engine_reference.check_tokens reads them)."""
    from mlx_vlm.generate.ar import generate_step
    from mlx_vlm.utils import prepare_inputs

    assert loaded.vision is not None
    processor = loaded.vision.processing._processor
    text = loaded.tokenizer.apply_chat_template(
        template_messages(messages), add_generation_prompt=True, tokenize=False, tools=tools
    )
    pictures = _pictures(messages)
    inputs = prepare_inputs(processor, images=pictures or None, prompts=text)
    extra = {
        k: v
        for k, v in inputs.items()
        if k not in ("input_ids", "pixel_values", "attention_mask") and v is not None
    }
    model = loaded.vision.model
    # A fresh run: no positions left over from an earlier call on this model.
    model.language_model._rope_deltas = None
    model.language_model._position_ids = None
    eos = set(loaded.tokenizer.eos_token_ids)
    tokens: list[int] = []
    margins: list[float] = []
    for token, logprobs in generate_step(
        inputs["input_ids"],
        model,
        inputs.get("pixel_values"),
        inputs.get("attention_mask"),
        max_tokens=max_tokens,
        temperature=0.0,
        **extra,
    ):
        value = int(token.item() if isinstance(token, mx.array) else token)
        top2 = mx.sort(logprobs.reshape(-1))[-2:]
        tokens.append(value)
        margins.append((top2[1] - top2[0]).item())
        if value in eos:
            break
    return Reference(tuple(tokens), tuple(margins))


def mlx_vlm_prompt_length(
    loaded: LoadedModel,
    messages: Sequence[dict[str, Any]],
    tools: list[dict[str, Any]] | None = None,
) -> int:
    """How many tokens mlx-vlm's processor makes of the prompt, images expanded."""
    from mlx_vlm.utils import prepare_inputs

    assert loaded.vision is not None
    text = loaded.tokenizer.apply_chat_template(
        template_messages(messages), add_generation_prompt=True, tokenize=False, tools=tools
    )
    pictures = _pictures(messages)
    inputs = prepare_inputs(
        loaded.vision.processing._processor, images=pictures or None, prompts=text
    )
    return int(inputs["input_ids"].shape[-1])
