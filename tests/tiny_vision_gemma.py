"""The tiny Gemma vision models (see tests.tiny_vision for the other families).

- `gemma3`: SigLIP tiles of 32 px pooled to 4 tokens, each image written as
  "\\n\\n<start_of_image>…<end_of_image>\\n\\n" (its newlines merge with the text around them),
  sliding-window layers between global ones.
- `gemma4`: Gemma 4's variable-size images (8 px patches pooled 2×2, at most 12 tokens, the
  picture's aspect kept), image tokens that attend both ways (`use_bidirectional_attention:
  "vision"`), per-layer input embeddings, sliding-window and global layers with their own head
  sizes, and the last two layers reading the keys and values of the first two (KV sharing).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.tiny_vision_weights import save_model, tokenizer_with

_GEMMA3_TOKENS = [
    "<start_of_image>",
    "<end_of_image>",
    "<image_soft_token>",
    "<start_of_turn>",
    "<end_of_turn>",
]
# Gemma 4's own markers: "<|image>" opens an image, "<image|>" closes it, "<|image|>" stands for
# each of its tokens; turns are "<|turn>role … <turn|>". "<|video|>" is there because mlx-vlm's
# processor would otherwise add it to its tokenizer, giving it one token more than the model's.
_GEMMA4_TOKENS = ["<|image>", "<image|>", "<|image|>", "<|video|>", "<|turn>", "<turn|>"]

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
# Gemma 4's turns, an image as <|image|> where it was sent (the processor adds its markers).
GEMMA4_TEMPLATE = (
    GEMMA3_TEMPLATE.replace("<start_of_turn>", "<|turn>")
    .replace("<end_of_turn>", "<turn|>")
    .replace("<start_of_image>", "<|image|>")
)


def _name_image_tokens(folder: Path, boi: str, eoi: str, image: str, eos: str) -> None:
    """Gemma's processors find their image tokens by these names on the tokenizer."""
    settings = json.loads((folder / "tokenizer_config.json").read_text())
    settings["extra_special_tokens"] = {"boi_token": boi, "eoi_token": eoi, "image_token": image}
    settings["eos_token"] = eos
    (folder / "tokenizer_config.json").write_text(json.dumps(settings, indent=2))


def _write_json(folder: Path, name: str, content: dict[str, Any]) -> None:
    (folder / name).write_text(json.dumps(content, indent=2))


def gemma3(folder: Path, seed: int) -> None:
    tokenizer = tokenizer_with(_GEMMA3_TOKENS)
    vocab = tokenizer.get_vocab_size()
    text = {
        "model_type": "gemma3_text",
        "hidden_size": 64,
        "num_hidden_layers": 4,
        "intermediate_size": 128,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "query_pre_attn_scalar": 16,
        "vocab_size": vocab,
        "sliding_window": 24,
        "sliding_window_pattern": 2,
        "mm_tokens_per_image": 4,
        "rope_global_base_freq": 10000.0,
        "rope_local_base_freq": 10000.0,
    }
    vision = {
        "model_type": "siglip_vision_model",
        "hidden_size": 32,
        "num_attention_heads": 2,
        "patch_size": 8,
        "image_size": 32,
        "num_hidden_layers": 1,
        "intermediate_size": 64,
    }
    config = {
        "model_type": "gemma3",
        "text_config": text,
        "vision_config": vision,
        "vocab_size": vocab,
        "image_token_index": tokenizer.token_to_id("<image_soft_token>"),
        "eos_token_id": tokenizer.token_to_id("<end_of_turn>"),
        "pad_token_id": 0,
    }
    # Gemma scales its embeddings up by the square root of the width, which would otherwise drown
    # every layer's contribution and make the model repeat one token.
    save_model(folder, config, tokenizer, seed, {"embed_tokens.weight": 1 / 8})
    _name_image_tokens(
        folder, "<start_of_image>", "<end_of_image>", "<image_soft_token>", "<end_of_turn>"
    )
    _write_json(
        folder,
        "preprocessor_config.json",
        {
            "image_processor_type": "Gemma3ImageProcessor",
            "processor_class": "Gemma3Processor",
            "do_convert_rgb": True,
            "do_normalize": True,
            "do_rescale": True,
            "do_resize": True,
            "do_pan_and_scan": False,
            "image_mean": [0.5, 0.5, 0.5],
            "image_std": [0.5, 0.5, 0.5],
            "resample": 2,
            "rescale_factor": 1 / 255,
            "size": {"height": 32, "width": 32},
        },
    )
    _write_json(
        folder,
        "processor_config.json",
        {"processor_class": "Gemma3Processor", "image_seq_length": 4},
    )
    _write_json(folder, "chat_template.json", {"chat_template": GEMMA3_TEMPLATE})


def gemma4(folder: Path, seed: int, sliding: bool = True) -> None:
    """`sliding=False`: every layer global, so plain KV caches that can restore any prefix."""
    tokenizer = tokenizer_with(_GEMMA4_TOKENS)
    vocab = tokenizer.get_vocab_size()
    ids = {t: tokenizer.token_to_id(t) for t in _GEMMA4_TOKENS}
    text = {
        "model_type": "gemma4_text",
        "hidden_size": 64,
        "num_hidden_layers": 4,
        "intermediate_size": 128,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "global_head_dim": 32,
        "vocab_size": vocab,
        "vocab_size_per_layer_input": vocab,
        "hidden_size_per_layer_input": 8,
        "num_kv_shared_layers": 2,
        "sliding_window": 24,
        "layer_types": ["sliding_attention" if sliding else "full_attention", "full_attention"] * 2,
        "use_bidirectional_attention": "vision",
        "final_logit_softcapping": 30.0,
    }
    vision = {
        "model_type": "gemma4_vision",
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "global_head_dim": 16,
        "patch_size": 8,
        "pooling_kernel_size": 2,
        "position_embedding_size": 64,
        "default_output_length": 12,
    }
    config = {
        "model_type": "gemma4",
        "text_config": text,
        "vision_config": vision,
        "vocab_size": vocab,
        "hidden_size": 64,
        "image_token_id": ids["<|image|>"],
        "boi_token_id": ids["<|image>"],
        "eoi_token_id": ids["<image|>"],
        "video_token_id": ids["<|video|>"],
        "vision_soft_tokens_per_image": 12,
        "eos_token_id": [ids["<turn|>"]],
        "pad_token_id": 0,
    }
    # Gemma 4 reads its logits through the embeddings (tied); a wider final norm spreads them
    # so greedy choices are clear, as the other families' scaled output layers do.
    save_model(folder, config, tokenizer, seed, {"model.norm.weight": 10.0})
    _name_image_tokens(folder, "<|image>", "<image|>", "<|image|>", "<turn|>")
    _write_json(
        folder,
        "processor_config.json",
        {
            "processor_class": "Gemma4Processor",
            "image_processor": {
                "image_processor_type": "Gemma4ImageProcessor",
                "patch_size": 8,
                "max_soft_tokens": 12,
                "pooling_kernel_size": 2,
                "do_resize": True,
                "do_rescale": True,
                "do_normalize": False,
                "rescale_factor": 1 / 255,
            },
        },
    )
    _write_json(folder, "chat_template.json", {"chat_template": GEMMA4_TEMPLATE})
