"""Tiny random-weight vision models, built from mlx-vlm's own classes and saved as ordinary
model folders (config.json with `vision_config`, model.safetensors, a tokenizer with the
family's image tokens, the image processor's settings and the family's chat template), so
`load_model` reads them through the real loading path: no download, a fraction of a second each.

- `smolvlm`: Idefics3's layout (image tiles of 32 px, 4 tokens each plus a global tile), 1-D RoPE.
- `qwen2_5_vl`: M-RoPE over (t, h, w) grids, 14 px patches merged 2×2, at most 64 tokens.
- `qwen3_vl`: M-RoPE, 16 px patches, and deepstack features added into the first two layers.
- `qwen3_5`: Qwen3-VL's vision with a hybrid language model (Gated DeltaNet recurrent layers
  between attention layers), whose caches cannot rewind: checkpoints at message boundaries.
- `gemma3`, `gemma4`: tests.tiny_vision_gemma.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np

from tests.tiny_vision_gemma import gemma3, gemma4
from tests.tiny_vision_weights import save_model, tokenizer_with

VISION_KINDS = ("smolvlm", "qwen2_5_vl", "qwen3_vl", "qwen3_5", "gemma3", "gemma4")

_SMOLVLM_TOKENS = [
    "<image>",
    "<fake_token_around_image>",
    "<global-img>",
    "<end_of_utterance>",
    *(f"<row_{r}_col_{c}>" for r in range(1, 7) for c in range(1, 7)),
]
_QWEN_TOKENS = ["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]

SMOLVLM_TEMPLATE = (
    "<|im_start|>{% for message in messages %}{{ message['role'] | capitalize }}"
    "{% if message['content'][0]['type'] == 'image' %}{{ ':' }}{% else %}{{ ': ' }}{% endif %}"
    "{% for line in message['content'] %}{% if line['type'] == 'text' %}{{ line['text'] }}"
    "{% elif line['type'] == 'image' %}{{ '<image>' }}{% endif %}{% endfor %}"
    "<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
)
# Qwen2.5-VL's template without its tool branch: ChatML, an image as
# <|vision_start|><|image_pad|><|vision_end|> where it was sent.
QWEN_VL_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif content['type'] == 'text' %}{{ content['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _smolvlm(folder: Path, seed: int) -> None:
    tokenizer = tokenizer_with(_SMOLVLM_TOKENS)
    vocab = tokenizer.get_vocab_size()
    text = {
        "model_type": "llama",
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": vocab,
        "num_hidden_layers": 2,
        "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0,
    }
    vision = {
        "model_type": "idefics3_vision",
        "hidden_size": 32,
        "num_attention_heads": 2,
        "patch_size": 8,
        "num_hidden_layers": 1,
        "intermediate_size": 64,
        "image_size": 32,
    }
    config = {
        "model_type": "smolvlm",
        "text_config": text,
        "vision_config": vision,
        "vocab_size": vocab,
        "scale_factor": 2,
        "image_token_id": tokenizer.token_to_id("<image>"),
        "eos_token_id": tokenizer.token_to_id("<end_of_utterance>"),
    }
    save_model(folder, config, tokenizer, seed)
    processor = {
        "image_processor_type": "SmolVLMImageProcessor",
        "processor_class": "SmolVLMProcessor",
        "do_convert_rgb": True,
        "do_image_splitting": True,
        "do_normalize": True,
        "do_pad": True,
        "do_rescale": True,
        "do_resize": True,
        "image_mean": [0.5, 0.5, 0.5],
        "image_std": [0.5, 0.5, 0.5],
        "max_image_size": {"longest_edge": 32},
        "resample": 1,
        "rescale_factor": 1 / 255,
        "size": {"longest_edge": 96},
    }
    (folder / "preprocessor_config.json").write_text(json.dumps(processor, indent=2))
    (folder / "processor_config.json").write_text(
        json.dumps({"processor_class": "SmolVLMProcessor", "image_seq_len": 4})
    )
    (folder / "chat_template.json").write_text(json.dumps({"chat_template": SMOLVLM_TEMPLATE}))


def _qwen2_5_vl(folder: Path, seed: int, large: bool = False) -> None:
    """`large`: a model big enough for benchmark ratios to mean something on a CPU (hidden 256,
    6 layers, images of up to 1,024 tokens), still random and built in seconds."""
    tokenizer = tokenizer_with(_QWEN_TOKENS)
    vocab = tokenizer.get_vocab_size()
    ids = {t: tokenizer.token_to_id(t) for t in _QWEN_TOKENS}
    width, layers, image_tokens = (256, 6, 1024) if large else (64, 2, 64)
    vision = {
        "model_type": "qwen2_5_vl",
        "depth": 4 if large else 2,
        "hidden_size": width // 2,
        "intermediate_size": width,
        "out_hidden_size": width,
        "num_heads": 2,
        "patch_size": 14,
        "spatial_patch_size": 14,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "window_size": 56,
        "fullatt_block_indexes": [1],
        "in_channels": 3,
    }
    config = {
        "model_type": "qwen2_5_vl",
        "hidden_size": width,
        "num_hidden_layers": layers,
        "intermediate_size": 2 * width,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "rms_norm_eps": 1e-6,
        "vocab_size": vocab,
        "rope_theta": 10000.0,
        "rope_scaling": {"type": "mrope", "mrope_section": [2, 3, 3]},
        "tie_word_embeddings": False,
        "max_position_embeddings": 4096,
        "vision_config": vision,
        "image_token_id": ids["<|image_pad|>"],
        "video_token_id": ids["<|video_pad|>"],
        "vision_start_token_id": ids["<|vision_start|>"],
        "vision_end_token_id": ids["<|vision_end|>"],
        "eos_token_id": tokenizer.token_to_id("<|im_end|>"),
        "bos_token_id": tokenizer.token_to_id("<|endoftext|>"),
    }
    save_model(folder, config, tokenizer, seed)
    processor = {
        "image_processor_type": "Qwen2VLImageProcessor",
        "processor_class": "Qwen2_5_VLProcessor",
        "do_convert_rgb": True,
        "do_normalize": True,
        "do_rescale": True,
        "do_resize": True,
        "image_mean": [0.48145466, 0.4578275, 0.40821073],
        "image_std": [0.26862954, 0.26130258, 0.27577711],
        "min_pixels": 56 * 56,
        "max_pixels": 28 * 28 * image_tokens,
        "merge_size": 2,
        "patch_size": 14,
        "temporal_patch_size": 2,
        "resample": 3,
        "rescale_factor": 1 / 255,
    }
    (folder / "preprocessor_config.json").write_text(json.dumps(processor, indent=2))
    (folder / "chat_template.json").write_text(json.dumps({"chat_template": QWEN_VL_TEMPLATE}))


def _qwen_ids(tokenizer: Any) -> dict[str, int]:
    """The token ids a Qwen3 vision config names (images, video, their markers, the end)."""
    ids = {t: tokenizer.token_to_id(t) for t in _QWEN_TOKENS}
    return {
        "image_token_id": ids["<|image_pad|>"],
        "video_token_id": ids["<|video_pad|>"],
        "vision_start_token_id": ids["<|vision_start|>"],
        "vision_end_token_id": ids["<|vision_end|>"],
        "vocab_size": tokenizer.get_vocab_size(),
        "eos_token_id": tokenizer.token_to_id("<|im_end|>"),
    }


def _qwen3_vision(model_type: str) -> dict[str, Any]:
    """The vision tower both Qwen3 families share here: 16-pixel patches merged 2 by 2, which
    `_qwen3_processor`'s settings match."""
    return {
        "model_type": model_type,
        "depth": 2,
        "hidden_size": 32,
        "intermediate_size": 64,
        "out_hidden_size": 64,
        "num_heads": 2,
        "patch_size": 16,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "num_position_embeddings": 64,
        "in_channels": 3,
    }


def _qwen3_vl(folder: Path, seed: int) -> None:
    tokenizer = tokenizer_with(_QWEN_TOKENS)
    vocab = tokenizer.get_vocab_size()
    text = {
        "model_type": "qwen3_vl",
        "hidden_size": 64,
        "num_hidden_layers": 3,
        "intermediate_size": 128,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "rms_norm_eps": 1e-6,
        "vocab_size": vocab,
        "rope_theta": 10000.0,
        "max_position_embeddings": 4096,
        "tie_word_embeddings": False,
        "rope_scaling": {
            "rope_type": "default",
            "mrope_section": [2, 3, 3],
            "mrope_interleaved": True,
        },
    }
    vision = {**_qwen3_vision("qwen3_vl"), "deepstack_visual_indexes": [0, 1]}
    config = {
        "model_type": "qwen3_vl",
        "text_config": text,
        "vision_config": vision,
        **_qwen_ids(tokenizer),
        "bos_token_id": tokenizer.token_to_id("<|endoftext|>"),
    }
    save_model(folder, config, tokenizer, seed)
    _qwen3_processor(folder)


def _qwen3_processor(folder: Path) -> None:
    processor = {
        "image_processor_type": "Qwen3VLImageProcessor",
        "processor_class": "Qwen3VLProcessor",
        "do_convert_rgb": True,
        "do_normalize": True,
        "do_rescale": True,
        "image_mean": [0.5, 0.5, 0.5],
        "image_std": [0.5, 0.5, 0.5],
        "min_pixels": 64 * 64,
        "max_pixels": 32 * 32 * 64,
        "merge_size": 2,
        "patch_size": 16,
        "temporal_patch_size": 2,
        "rescale_factor": 1 / 255,
    }
    (folder / "preprocessor_config.json").write_text(json.dumps(processor, indent=2))
    (folder / "chat_template.json").write_text(json.dumps({"chat_template": QWEN_VL_TEMPLATE}))


def _qwen3_5(folder: Path, seed: int) -> None:
    tokenizer = tokenizer_with(_QWEN_TOKENS)
    vocab = tokenizer.get_vocab_size()
    text = {
        "model_type": "qwen3_5_text",
        "hidden_size": 64,
        "intermediate_size": 128,
        "linear_num_value_heads": 2,
        "linear_num_key_heads": 2,
        "linear_key_head_dim": 16,
        "linear_value_head_dim": 16,
        "linear_conv_kernel_dim": 4,
        "num_hidden_layers": 4,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "rms_norm_eps": 1e-6,
        "vocab_size": vocab,
        "max_position_embeddings": 4096,
        "full_attention_interval": 2,
        "tie_word_embeddings": False,
        "rope_parameters": {
            "type": "default",
            "mrope_section": [2, 1, 1],
            "rope_theta": 10000.0,
            "partial_rotary_factor": 0.5,
        },
    }
    vision = _qwen3_vision("qwen3_5")
    config = {
        "model_type": "qwen3_5",
        "text_config": text,
        "vision_config": vision,
        **_qwen_ids(tokenizer),
    }
    save_model(folder, config, tokenizer, seed)
    _qwen3_processor(folder)


def build_bench_vision_model(folder: Path) -> Path:
    """A larger random Qwen2.5-VL for bench/ (see `_qwen2_5_vl`)."""
    folder.mkdir(parents=True, exist_ok=True)
    _qwen2_5_vl(folder, 0, large=True)
    return folder


def build_vision_model(kind: str, folder: Path, seed: int = 0) -> Path:
    """Write the tiny `kind` vision model into `folder` (created) and return it."""
    folder.mkdir(parents=True, exist_ok=True)
    builders = {
        "smolvlm": _smolvlm,
        "qwen2_5_vl": _qwen2_5_vl,
        "qwen3_vl": _qwen3_vl,
        "qwen3_5": _qwen3_5,
        "gemma3": gemma3,
        "gemma4": gemma4,
    }
    builders[kind](folder, seed)
    return folder


def widen_pixel_budget(folder: Path, image_tokens: int = 1024) -> Path:
    """Let the tiny Qwen in `folder` take images of up to `image_tokens` tokens (about 896×896
    pixels by default, where it takes about 224×224 as built): Qwen's token count follows the
    pixels it is given, so the image details offered (512 px and up) then shrink a big picture
    as they would a real model's."""
    config_path = folder / "preprocessor_config.json"
    config = json.loads(config_path.read_text())
    config["max_pixels"] = 28 * 28 * image_tokens
    config_path.write_text(json.dumps(config, indent=2))
    return folder


def png_bytes(width: int, height: int, seed: int, mode: str = "RGB") -> bytes:
    """A PNG of random pixels: the image pool's A and B share a size and differ in content."""
    from PIL import Image

    channels = {"RGB": 3, "RGBA": 4, "L": 1}[mode]
    pixels = np.random.default_rng(seed).integers(0, 256, (height, width, channels), np.uint8)
    picture = Image.fromarray(pixels.squeeze(-1) if channels == 1 else pixels, mode)
    out = io.BytesIO()
    picture.save(out, format="PNG")
    return out.getvalue()
