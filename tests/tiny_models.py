"""Tiny random-weight models, one per layer-cache kind, saved in MLX format.

They are built with mlx-lm's own model classes and written as an ordinary model folder
(config.json, model.safetensors, tokenizer.json, tokenizer_config.json with a ChatML template), so
`load_model(path)` reads them through the real loading path. Dhara, which mlx-lm lacks, is
written the way its checkpoints are published (transformers-style names, PyTorch's Conv1d
layout, a config naming its own code) and converted with `inference.import_dhara`. Building all
of them takes a few seconds; the session fixture in conftest.py builds them once per test run.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import mlx.core as mx
import mlx.nn as nn
from mlx.utils import tree_flatten, tree_map
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from inference import import_dhara
from inference.models.registry import get_model_classes

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
VOCAB_SIZE = 384
# "<|im_end|>": special tokens take the first ids, in the order above.
EOS_ID = SPECIAL_TOKENS.index("<|im_end|>")
# A logit bias that bans the end-of-sequence token, for tests that need a reply of exactly
# max_tokens tokens (a random model may end its reply at any step). Written as the store keeps
# sampling params (JSON: a string key, a finite number), it also works in SamplingParams.
NO_EOS: dict[str, float] = {str(EOS_ID): -1e9}
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

# Qwen2.5-Instruct's chat template (tools in the system turn, calls as <tool_call>{json}
# </tool_call>, consecutive tool results grouped in one user turn as <tool_response>s): the
# tools-capable template of the tool-use tests (`with_template`). Its tool-call format is
# "hermes".
QWEN_TOOLS_TEMPLATE = (Path(__file__).parent / "templates" / "qwen2.5-tools.jinja").read_text(
    encoding="utf-8"
)
# A tool the tool-use tests offer, in OpenAI's shape.
WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}

# A small English corpus so the byte-level BPE learns real merges and prompts tokenize to a
# realistic number of tokens (a few characters per token), not one token per byte.
_CORPUS = (
    """
You are a helpful assistant. Answer the question in one sentence.
What is the capital of France? The capital of France is Paris.
Tell me a story about a cat and a dog who became friends in the city.
Write a haiku about the sea. The sea is calm and blue; waves fold over sand.
How do I sort a list in Python? Use the sorted function or the list sort method.
Explain recursion to a child. A function that calls itself on a smaller problem.
Hello! How are you today? I am fine, thank you. What would you like to talk about?
Please summarize the following text in three bullet points for a busy reader.
The quick brown fox jumps over the lazy dog near the river bank at noon.
Can you translate this sentence into German, French and Spanish for me please?
Numbers: 0 1 2 3 4 5 6 7 8 9 10 100 1000. Code: def main(): return 0
"""
    * 4
)

COMMON: dict[str, Any] = {
    "vocab_size": VOCAB_SIZE,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "rms_norm_eps": 1e-6,
    "max_position_embeddings": 4096,
    "tie_word_embeddings": False,
    "bos_token_id": None,
    "eos_token_id": EOS_ID,
}

CONFIGS: dict[str, dict[str, Any]] = {
    # Attention KV with grouped-query attention (4 query heads over 2 KV heads).
    "llama": {
        **COMMON,
        "model_type": "llama",
        "num_hidden_layers": 2,
        "head_dim": 16,
        "rope_theta": 10000.0,
    },
    # GatedDeltaNet hybrid: layers 0-2 are recurrent (ArraysCache), layer 3 is full attention.
    "qwen3_5": {
        "model_type": "qwen3_5",
        "tie_word_embeddings": False,
        "eos_token_id": EOS_ID,
        "text_config": {
            **COMMON,
            "model_type": "qwen3_5_text",
            "num_hidden_layers": 4,
            "full_attention_interval": 4,
            "head_dim": 16,
            "linear_num_value_heads": 4,
            "linear_num_key_heads": 2,
            "linear_key_head_dim": 16,
            "linear_value_head_dim": 16,
            "linear_conv_kernel_dim": 4,
            "rope_parameters": {
                "type": "default",
                "rope_theta": 10000.0,
                "partial_rotary_factor": 0.5,
            },
        },
    },
    # Sliding window of 16 tokens on layers 0-1 (RotatingKVCache), global KV on layer 2.
    "gemma3_text": {
        **COMMON,
        "model_type": "gemma3_text",
        "num_hidden_layers": 3,
        "head_dim": 16,
        "query_pre_attn_scalar": 16,
        "sliding_window": 16,
        "sliding_window_pattern": 3,
        "rope_theta": 10000.0,
        "rope_local_base_freq": 10000.0,
    },
    # Multi-head latent attention: the cache holds the compressed latent and the RoPE key part.
    "deepseek_v3": {
        **COMMON,
        "model_type": "deepseek_v3",
        "num_hidden_layers": 2,
        "num_key_value_heads": 4,
        "kv_lora_rank": 32,
        "q_lora_rank": 48,
        "qk_rope_head_dim": 8,
        "qk_nope_head_dim": 16,
        "v_head_dim": 16,
        "moe_intermediate_size": 32,
        "n_routed_experts": 4,
        "n_shared_experts": 1,
        "num_experts_per_tok": 2,
        "first_k_dense_replace": 1,
        "n_group": 1,
        "topk_group": 1,
        "rope_theta": 10000.0,
    },
}

# Dhara in its published form: all four canon positions, canon D on the gated product, tied
# embeddings, a logit soft cap, and an auto_map naming code that the import must never run.
DHARA_CONFIG: dict[str, Any] = {
    **COMMON,
    "model_type": "dhara",
    "architectures": ["DharaForCausalLM"],
    "auto_map": {"AutoModelForCausalLM": "modeling_dhara.DharaForCausalLM"},
    "num_hidden_layers": 2,
    "head_dim": 16,
    "rope_theta": 10000.0,
    "tie_word_embeddings": True,
    "canon_set": "ABCD",
    "canon_kernel": 4,
    "canon_bias": False,
    "canon_residual": True,
    "canon_activation": False,
    "final_logit_softcapping": 30.0,
}

KINDS = (*CONFIGS, "dhara")

# Random init gives logits with a spread of a few hundredths, where greedy choices are near-ties
# that summation order could flip. Scaling the output layer spreads the logits so the argmax is
# well separated, which keeps the exactness tests meaningful rather than flaky.
_OUTPUT_SCALE = 8.0


def build_tokenizer() -> Tokenizer:
    """Train a byte-level BPE tokenizer of VOCAB_SIZE tokens with the ChatML special tokens."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(_CORPUS.splitlines(), trainer=trainer)
    return tokenizer


def _write_tokenizer(folder: Path, tokenizer: Tokenizer) -> None:
    tokenizer.save(str(folder / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": None,
        "eos_token": "<|im_end|>",
        "pad_token": "<|endoftext|>",
        "unk_token": None,
        "model_max_length": 4096,
        "add_bos_token": False,
        "chat_template": CHATML_TEMPLATE,
    }
    (folder / "tokenizer_config.json").write_text(json.dumps(config, indent=2))
    special_map = {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}
    (folder / "special_tokens_map.json").write_text(json.dumps(special_map))


def dhara_published_weights(config: dict[str, Any], seed: int = 0) -> dict[str, mx.array]:
    """Random weights for a Dhara `config` under the published names and layouts: canon B as
    one conv over q|k|v, canon D over the gated product, convolutions as (channels, 1, kernel).
    Written out here from the layout, not derived from the MLX module, so the conversion is
    checked against an independent description of it."""
    mx.random.seed(seed)
    hidden, inter, kernel = config["hidden_size"], config["intermediate_size"], 4
    q = config["num_attention_heads"] * config["head_dim"]
    kv = config["num_key_value_heads"] * config["head_dim"]
    shapes = {"model.embed_tokens.weight": (config["vocab_size"], hidden)}
    shapes["model.norm.weight"] = None
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}."
        shapes |= {
            p + "input_layernorm.weight": None,
            p + "post_attention_layernorm.weight": None,
            p + "self_attn.q_proj.weight": (q, hidden),
            p + "self_attn.k_proj.weight": (kv, hidden),
            p + "self_attn.v_proj.weight": (kv, hidden),
            p + "self_attn.o_proj.weight": (hidden, q),
            p + "self_attn.q_norm.weight": None,
            p + "self_attn.k_norm.weight": None,
            p + "mlp.gate_proj.weight": (inter, hidden),
            p + "mlp.up_proj.weight": (inter, hidden),
            p + "mlp.down_proj.weight": (hidden, inter),
            p + "canonA.weight": (hidden, 1, kernel),
            p + "self_attn.canonB.weight": (q + 2 * kv, 1, kernel),
            p + "canonC.weight": (hidden, 1, kernel),
            p + "mlp.canonD.weight": (inter, 1, kernel),
            p + "self_attn.rotary_emb.inv_freq": (config["head_dim"] // 2,),
        }
    weights = {}
    for name, shape in shapes.items():
        if shape is None:  # an RMSNorm weight: around one
            size = config["head_dim"] if "_norm" in name and "self_attn" in name else hidden
            weights[name] = 1.0 + 0.1 * mx.random.normal((size,))
        else:
            scale = 0.5 if "canon" in name else shape[-1] ** -0.5
            weights[name] = scale * mx.random.normal(shape)
    # The embedding is the output layer too (tied), so it is not scaled up like the other kinds'
    # lm_head: a large embedding dominates the residual stream and the model only echoes its
    # input. Kept in float32 like the other tiny models (the published ones are bfloat16), so
    # summation order stays far below the exactness tests' tolerances.
    return weights


def build_dhara_checkpoint(folder: Path, seed: int = 0) -> Path:
    """Write a tiny Dhara checkpoint in its published layout into `folder` and return it."""
    folder.mkdir(parents=True, exist_ok=True)
    weights = dhara_published_weights(DHARA_CONFIG, seed)
    mx.save_safetensors(str(folder / "model.safetensors"), weights, metadata={"format": "pt"})
    (folder / "config.json").write_text(json.dumps(DHARA_CONFIG, indent=2))
    _write_tokenizer(folder, build_tokenizer())
    return folder


def build_model(kind: str, folder: Path, seed: int = 0) -> Path:
    """Write the tiny `kind` model into `folder` (created) and return the folder."""
    if kind == "dhara":
        with tempfile.TemporaryDirectory() as work:
            published = build_dhara_checkpoint(Path(work) / "published", seed)
            shutil.move(import_dhara(published, Path(work) / "models"), folder)
        return folder
    config = CONFIGS[kind]
    folder.mkdir(parents=True, exist_ok=True)
    mx.random.seed(seed)
    model_class, args_class = get_model_classes(config)
    model: nn.Module = model_class(args_class.from_dict(config))
    params = tree_map(lambda p: p.astype(mx.float32), model.parameters())
    flat = dict(tree_flatten(params))
    for name in list(flat):
        if name.endswith("lm_head.weight"):
            flat[name] = flat[name] * _OUTPUT_SCALE
    mx.save_safetensors(str(folder / "model.safetensors"), flat, metadata={"format": "mlx"})
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    _write_tokenizer(folder, build_tokenizer())
    return folder


def add_token(folder: Path, content: str = "<|tool|>") -> Path:
    """Give the model in `folder` one more added token, so its vocabulary differs from every
    other tiny model's (a draft model it cannot be); returns the folder."""
    tokenizer_file = folder / "tokenizer.json"
    data = json.loads(tokenizer_file.read_text())
    extra = dict(data["added_tokens"][-1], id=len(data["model"]["vocab"]), content=content)
    data["added_tokens"].append(extra)
    tokenizer_file.write_text(json.dumps(data))
    return folder


def with_template(source: Path, folder: Path, template: str) -> Path:
    """A copy of the model in `source` at `folder` whose chat template is `template`."""
    shutil.copytree(source, folder)
    config_file = folder / "tokenizer_config.json"
    config = json.loads(config_file.read_text())
    config["chat_template"] = template
    config_file.write_text(json.dumps(config, indent=2))
    return folder


# A reply the tool-use tests force (one token, by logit bias): a Hermes call, then a stop string
# so the reply ends by itself ("stop") rather than at max_tokens. No spaces or newlines: the
# byte-level decoder maps those to other characters.
FORCED_CALL = '<tool_call>{"name":"get_weather","arguments":{"city":"Paris"}}</tool_call>'
FORCED_STOP = "DONE"


def with_call_token(folder: Path, text: str = FORCED_CALL + FORCED_STOP) -> int:
    """Make one token of the model in `folder` decode to `text` (the byte 0x01's token, which
    no merge uses and no test prompt holds), so a logit bias on it forces that reply; returns
    its id."""
    tokenizer_file = folder / "tokenizer.json"
    data = json.loads(tokenizer_file.read_text())
    vocab = data["model"]["vocab"]
    token_id = vocab.pop("\u0101")  # byte 0x01 in the byte-level alphabet
    vocab[text] = token_id
    tokenizer_file.write_text(json.dumps(data))
    return int(token_id)


def build_all(root: Path) -> dict[str, Path]:
    """Build every kind under `root` and return {kind: folder}."""
    return {kind: build_model(kind, root / kind) for kind in KINDS}
