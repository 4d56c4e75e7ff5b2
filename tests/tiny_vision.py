"""Tiny random-weight vision models, built from mlx-vlm's own classes and saved as ordinary
model folders (config.json with `vision_config`, model.safetensors, a tokenizer with the
family's image tokens, the image processor's settings and the family's chat template), so
`load_model` reads them through the real loading path: no download, a fraction of a second each.

- `smolvlm`: Idefics3's layout (image tiles of 32 px, 4 tokens each plus a global tile), 1-D RoPE.
- `qwen2_5_vl`: M-RoPE over (t, h, w) grids, 14 px patches merged 2×2, at most 64 tokens.
- `qwen3_vl`: M-RoPE, 16 px patches, and deepstack features added into the first two layers.
- `gemma3`: SigLIP tiles of 32 px pooled to 4 tokens, each image written as
  "\n\n<start_of_image>…<end_of_image>\n\n" (its newlines merge with the text around them),
  sliding-window layers between global ones.
- `qwen3_5`: Qwen3-VL's vision with a hybrid language model (Gated DeltaNet recurrent layers
  between attention layers), whose caches cannot rewind: checkpoints at message boundaries.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import mlx.core as mx
import numpy as np
from mlx.utils import tree_flatten
from tokenizers import AddedToken

from tests.tiny_models import _OUTPUT_SCALE, _write_tokenizer, build_tokenizer

VISION_KINDS = ("smolvlm", "qwen2_5_vl", "qwen3_vl", "qwen3_5", "gemma3")

_SMOLVLM_TOKENS = [
    "<image>", "<fake_token_around_image>", "<global-img>", "<end_of_utterance>",
    *(f"<row_{r}_col_{c}>" for r in range(1, 7) for c in range(1, 7)),
]
_QWEN_TOKENS = ["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
_GEMMA_TOKENS = ["<start_of_image>", "<end_of_image>", "<image_soft_token>", "<start_of_turn>",
                 "<end_of_turn>"]

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


# Gemma 3's template without its system-prompt folding: turns as <start_of_turn>role, an image
# as <start_of_image> where it was sent.
GEMMA3_TEMPLATE = (
    "{% for message in messages %}<start_of_turn>"
    "{{ 'model' if message['role'] == 'assistant' else message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for item in message['content'] %}"
    "{% if item['type'] == 'image' %}<start_of_image>"
    "{% elif item['type'] == 'text' %}{{ item['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<end_of_turn>\n{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)


def _tokenizer(extra: list[str]) -> Any:
    tokenizer = build_tokenizer()
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in extra])
    return tokenizer


def _model(config: dict[str, Any]) -> Any:
    """The model mlx-vlm's loader would build from `config`, through its public helpers."""
    from mlx_vlm.utils import get_model_and_args, update_module_configs

    config = json.loads(json.dumps(config))
    config.setdefault("text_config", {})
    model_class, _ = get_model_and_args(config=config)
    model_config = model_class.ModelConfig.from_dict(config)
    model_config = update_module_configs(model_config, model_class, config, ["text", "vision"])
    return model_class.Model(model_config)


def _save(
    folder: Path, config: dict[str, Any], tokenizer: Any, seed: int, embed_scale: float = 1.0
) -> None:
    """Random weights for `config`'s model; `embed_scale` shrinks the token embeddings of
    models that scale them up themselves (Gemma: by the square root of the width), which would
    otherwise drown every layer's contribution and make the model repeat one token."""
    model = _model(config)
    mx.random.seed(seed)
    weights = {
        name: (mx.random.normal(value.shape) * 0.2).astype(mx.float32)
        for name, value in tree_flatten(model.parameters())
    }
    for name in weights:
        if name.endswith("embed_tokens.weight"):
            weights[name] = weights[name] * embed_scale
    for name in weights:
        # As the text models' (tests.tiny_models): spread logits so greedy choices are clear.
        if name.endswith("lm_head.weight"):
            weights[name] = weights[name] * _OUTPUT_SCALE
    mx.save_safetensors(str(folder / "model.safetensors"), weights, metadata={"format": "mlx"})
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    _write_tokenizer(folder, tokenizer)


def _smolvlm(folder: Path, seed: int) -> None:
    tokenizer = _tokenizer(_SMOLVLM_TOKENS)
    vocab = tokenizer.get_vocab_size()
    text = {
        "model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
        "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": vocab,
        "num_hidden_layers": 2, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
    }
    vision = {
        "model_type": "idefics3_vision", "hidden_size": 32, "num_attention_heads": 2,
        "patch_size": 8, "num_hidden_layers": 1, "intermediate_size": 64, "image_size": 32,
    }
    config = {
        "model_type": "smolvlm", "text_config": text, "vision_config": vision,
        "vocab_size": vocab, "scale_factor": 2,
        "image_token_id": tokenizer.token_to_id("<image>"),
        "eos_token_id": tokenizer.token_to_id("<end_of_utterance>"),
    }
    _save(folder, config, tokenizer, seed)
    processor = {
        "image_processor_type": "SmolVLMImageProcessor", "processor_class": "SmolVLMProcessor",
        "do_convert_rgb": True, "do_image_splitting": True, "do_normalize": True,
        "do_pad": True, "do_rescale": True, "do_resize": True,
        "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
        "max_image_size": {"longest_edge": 32}, "resample": 1, "rescale_factor": 1 / 255,
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
    tokenizer = _tokenizer(_QWEN_TOKENS)
    vocab = tokenizer.get_vocab_size()
    ids = {t: tokenizer.token_to_id(t) for t in _QWEN_TOKENS}
    width, layers, image_tokens = (256, 6, 1024) if large else (64, 2, 64)
    vision = {
        "model_type": "qwen2_5_vl", "depth": 4 if large else 2, "hidden_size": width // 2,
        "intermediate_size": width, "out_hidden_size": width, "num_heads": 2,
        "patch_size": 14, "spatial_patch_size": 14,
        "spatial_merge_size": 2, "temporal_patch_size": 2, "window_size": 56,
        "fullatt_block_indexes": [1], "in_channels": 3,
    }
    config = {
        "model_type": "qwen2_5_vl", "hidden_size": width, "num_hidden_layers": layers,
        "intermediate_size": 2 * width, "num_attention_heads": 4, "num_key_value_heads": 2,
        "rms_norm_eps": 1e-6, "vocab_size": vocab, "rope_theta": 10000.0,
        "rope_scaling": {"type": "mrope", "mrope_section": [2, 3, 3]},
        "tie_word_embeddings": False, "max_position_embeddings": 4096,
        "vision_config": vision,
        "image_token_id": ids["<|image_pad|>"], "video_token_id": ids["<|video_pad|>"],
        "vision_start_token_id": ids["<|vision_start|>"],
        "vision_end_token_id": ids["<|vision_end|>"],
        "eos_token_id": tokenizer.token_to_id("<|im_end|>"),
        "bos_token_id": tokenizer.token_to_id("<|endoftext|>"),
    }
    _save(folder, config, tokenizer, seed)
    processor = {
        "image_processor_type": "Qwen2VLImageProcessor", "processor_class": "Qwen2_5_VLProcessor",
        "do_convert_rgb": True, "do_normalize": True, "do_rescale": True, "do_resize": True,
        "image_mean": [0.48145466, 0.4578275, 0.40821073],
        "image_std": [0.26862954, 0.26130258, 0.27577711],
        "min_pixels": 56 * 56, "max_pixels": 28 * 28 * image_tokens, "merge_size": 2,
        "patch_size": 14,
        "temporal_patch_size": 2, "resample": 3, "rescale_factor": 1 / 255,
    }
    (folder / "preprocessor_config.json").write_text(json.dumps(processor, indent=2))
    (folder / "chat_template.json").write_text(json.dumps({"chat_template": QWEN_VL_TEMPLATE}))


def _qwen_ids(tokenizer: Any) -> dict[str, int]:
    """The token ids a Qwen3 vision config names (images, video, their markers, the end)."""
    ids = {t: tokenizer.token_to_id(t) for t in _QWEN_TOKENS}
    return {
        "image_token_id": ids["<|image_pad|>"], "video_token_id": ids["<|video_pad|>"],
        "vision_start_token_id": ids["<|vision_start|>"],
        "vision_end_token_id": ids["<|vision_end|>"], "vocab_size": tokenizer.get_vocab_size(),
        "eos_token_id": tokenizer.token_to_id("<|im_end|>"),
    }


def _qwen3_vl(folder: Path, seed: int) -> None:
    tokenizer = _tokenizer(_QWEN_TOKENS)
    vocab = tokenizer.get_vocab_size()
    text = {
        "model_type": "qwen3_vl", "hidden_size": 64, "num_hidden_layers": 3,
        "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2,
        "head_dim": 16, "rms_norm_eps": 1e-6, "vocab_size": vocab, "rope_theta": 10000.0,
        "max_position_embeddings": 4096, "tie_word_embeddings": False,
        "rope_scaling": {"rope_type": "default", "mrope_section": [2, 3, 3],
                         "mrope_interleaved": True},
    }
    vision = {
        "model_type": "qwen3_vl", "depth": 2, "hidden_size": 32, "intermediate_size": 64,
        "out_hidden_size": 64, "num_heads": 2, "patch_size": 16, "spatial_merge_size": 2,
        "temporal_patch_size": 2, "num_position_embeddings": 64, "in_channels": 3,
        "deepstack_visual_indexes": [0, 1],
    }
    config = {"model_type": "qwen3_vl", "text_config": text, "vision_config": vision,
              **_qwen_ids(tokenizer), "bos_token_id": tokenizer.token_to_id("<|endoftext|>")}
    _save(folder, config, tokenizer, seed)
    _qwen3_processor(folder)


def _qwen3_processor(folder: Path) -> None:
    processor = {
        "image_processor_type": "Qwen3VLImageProcessor", "processor_class": "Qwen3VLProcessor",
        "do_convert_rgb": True, "do_normalize": True, "do_rescale": True,
        "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
        "min_pixels": 64 * 64, "max_pixels": 32 * 32 * 64, "merge_size": 2, "patch_size": 16,
        "temporal_patch_size": 2, "rescale_factor": 1 / 255,
    }
    (folder / "preprocessor_config.json").write_text(json.dumps(processor, indent=2))
    (folder / "chat_template.json").write_text(json.dumps({"chat_template": QWEN_VL_TEMPLATE}))


def _qwen3_5(folder: Path, seed: int) -> None:
    tokenizer = _tokenizer(_QWEN_TOKENS)
    vocab = tokenizer.get_vocab_size()
    text = {
        "model_type": "qwen3_5_text", "hidden_size": 64, "intermediate_size": 128,
        "linear_num_value_heads": 2, "linear_num_key_heads": 2, "linear_key_head_dim": 16,
        "linear_value_head_dim": 16, "linear_conv_kernel_dim": 4, "num_hidden_layers": 4,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
        "rms_norm_eps": 1e-6, "vocab_size": vocab, "max_position_embeddings": 4096,
        "full_attention_interval": 2, "tie_word_embeddings": False,
        "rope_parameters": {"type": "default", "mrope_section": [2, 1, 1],
                            "rope_theta": 10000.0, "partial_rotary_factor": 0.5},
    }
    vision = {
        "model_type": "qwen3_5", "depth": 2, "hidden_size": 32, "intermediate_size": 64,
        "out_hidden_size": 64, "num_heads": 2, "patch_size": 16, "spatial_merge_size": 2,
        "temporal_patch_size": 2, "num_position_embeddings": 64, "in_channels": 3,
    }
    config = {"model_type": "qwen3_5", "text_config": text, "vision_config": vision,
              **_qwen_ids(tokenizer)}
    _save(folder, config, tokenizer, seed)
    _qwen3_processor(folder)


def _gemma3(folder: Path, seed: int) -> None:
    tokenizer = _tokenizer(_GEMMA_TOKENS)
    vocab = tokenizer.get_vocab_size()
    text = {
        "model_type": "gemma3_text", "hidden_size": 64, "num_hidden_layers": 4,
        "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2,
        "head_dim": 16, "query_pre_attn_scalar": 16, "vocab_size": vocab,
        "sliding_window": 24, "sliding_window_pattern": 2, "mm_tokens_per_image": 4,
        "rope_global_base_freq": 10000.0, "rope_local_base_freq": 10000.0,
    }
    vision = {
        "model_type": "siglip_vision_model", "hidden_size": 32, "num_attention_heads": 2,
        "patch_size": 8, "image_size": 32, "num_hidden_layers": 1, "intermediate_size": 64,
    }
    config = {
        "model_type": "gemma3", "text_config": text, "vision_config": vision,
        "vocab_size": vocab, "image_token_index": tokenizer.token_to_id("<image_soft_token>"),
        "eos_token_id": tokenizer.token_to_id("<end_of_turn>"), "pad_token_id": 0,
    }
    _save(folder, config, tokenizer, seed, embed_scale=1 / 8)
    # Gemma's processor finds its image tokens by these names on the tokenizer.
    settings = json.loads((folder / "tokenizer_config.json").read_text())
    settings["extra_special_tokens"] = {
        "boi_token": "<start_of_image>", "eoi_token": "<end_of_image>",
        "image_token": "<image_soft_token>",
    }
    settings["eos_token"] = "<end_of_turn>"
    (folder / "tokenizer_config.json").write_text(json.dumps(settings, indent=2))
    processor = {
        "image_processor_type": "Gemma3ImageProcessor", "processor_class": "Gemma3Processor",
        "do_convert_rgb": True, "do_normalize": True, "do_rescale": True, "do_resize": True,
        "do_pan_and_scan": False, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
        "resample": 2, "rescale_factor": 1 / 255, "size": {"height": 32, "width": 32},
    }
    (folder / "preprocessor_config.json").write_text(json.dumps(processor, indent=2))
    (folder / "processor_config.json").write_text(
        json.dumps({"processor_class": "Gemma3Processor", "image_seq_length": 4})
    )
    (folder / "chat_template.json").write_text(json.dumps({"chat_template": GEMMA3_TEMPLATE}))


def build_bench_vision_model(folder: Path) -> Path:
    """A larger random Qwen2.5-VL for bench/ (see `_qwen2_5_vl`)."""
    folder.mkdir(parents=True, exist_ok=True)
    _qwen2_5_vl(folder, 0, large=True)
    return folder


def build_vision_model(kind: str, folder: Path, seed: int = 0) -> Path:
    """Write the tiny `kind` vision model into `folder` (created) and return it."""
    folder.mkdir(parents=True, exist_ok=True)
    builders = {"smolvlm": _smolvlm, "qwen2_5_vl": _qwen2_5_vl, "qwen3_vl": _qwen3_vl,
                "qwen3_5": _qwen3_5, "gemma3": _gemma3}
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
