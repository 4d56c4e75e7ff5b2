"""What differs between vision model families, in one place: which text stands for an image,
which token its features replace, how positions are counted, and whether image tokens attend
both ways.

Everything else goes through mlx-vlm's model API, the same for every family:
`get_input_embeddings(ids)` gives the text embeddings, and with an image's pixel inputs the
embeddings of its expanded token run, from which the rows at image-token positions are exactly
what the model's own merge would put there (a copy, cast as the merge casts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast


@dataclass(frozen=True)
class Family:
    """One family of vision models, as Branchwise runs it exactly."""

    name: str
    model_types: tuple[str, ...]
    # The text the processor expands into one image's tokens (what the template writes for it).
    placeholder: str
    # Positions as Qwen's M-RoPE counts them (an image spans a (t, h, w) grid, and text after
    # it continues from the grid's largest position), passed to the model on every call.
    mrope: bool = False
    # The text config may make image tokens attend to each other both ways (Gemma 4's
    # `use_bidirectional_attention: "vision"`, which mlx-vlm obeys); see `atomic_images`.
    bidirectional_switch: bool = False

    def image_token_id(self, config: dict[str, Any]) -> int:
        for name in ("image_token_id", "image_token_index"):
            value = config.get(name)
            if isinstance(value, int):
                return value
        raise KeyError("image_token_id")

    def atomic_images(self, config: dict[str, Any]) -> bool:
        """Whether this model's image tokens attend both ways, so that no cache cut or prefill
        chunk end may fall inside an image (its first tokens see its last)."""
        text = config.get("text_config")
        return (
            self.bidirectional_switch
            and isinstance(text, dict)
            and cast("dict[str, Any]", text).get("use_bidirectional_attention") == "vision"
        )


FAMILIES = (
    Family("SmolVLM / Idefics3", ("smolvlm", "idefics3"), "<image>"),
    Family("Qwen2-VL / Qwen2.5-VL", ("qwen2_vl", "qwen2_5_vl"), "<|image_pad|>", mrope=True),
    # Deepstack (features added into the first decoder layers) travels with each image's rows.
    Family("Qwen3-VL", ("qwen3_vl", "qwen3_vl_moe"), "<|image_pad|>", mrope=True),
    # Image features scaled to the embeddings' size, written with newlines around them that
    # merge with the text beside them; sliding-window layers checkpointed like Qwen3.5's.
    # Causal over image tokens too: mlx-vlm's merge makes a both-ways mask that its generation
    # never hands to the language model, and mlx-vlm is the reference.
    Family("Gemma 3", ("gemma3",), "<start_of_image>"),
    # Per-layer inputs computed from the ids with image tokens as padding (the chunk's own
    # embedding step returns them), the last layers reading earlier layers' keys and values
    # (they have no cache of their own), sliding-window layers checkpointed as Gemma 3's, and
    # image tokens that attend both ways (inference.vision.image_attention).
    Family("Gemma 4", ("gemma4",), "<|image|>", bidirectional_switch=True),
    # Qwen3.5's Gated DeltaNet layers cannot rewind: the branch cache checkpoints them.
    Family("Qwen3.5", ("qwen3_5", "qwen3_5_moe"), "<|image_pad|>", mrope=True),
)


def family_for(model_type: str) -> Family | None:
    """The family Branchwise runs `model_type` as, or None when it has no exact path for it."""
    return next((f for f in FAMILIES if model_type in f.model_types), None)


def supported_names() -> str:
    return ", ".join(f.name for f in FAMILIES)
