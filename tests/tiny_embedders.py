"""Tiny random-weight embedding models in the sentence-transformers layout, one per way of
embedding: Qwen3-Embedding's (causal, last token, a query instruction; its checkpoint names
without `model.`), EmbeddingGemma's (Gemma 3 both ways with a sliding window, mean, two dense
steps) and bge's (a BERT, the first token). Built with mlx-lm's classes where it has them and
written as the published folders are, so `load_embedder` reads them through the real path. Each
tokenizer frames texts with special tokens as its family's does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mlx.core as mx
import mlx.nn as nn
from mlx.utils import tree_flatten
from tokenizers import processors

from inference.models.registry import get_model_classes
from tests.tiny_models import COMMON, VOCAB_SIZE, _write_tokenizer, build_tokenizer

QUERY_INSTRUCTION = "Instruct: Find the passage\nQuery:"
GEMMA_QUERY = "task: search result | query: "
GEMMA_DOCUMENT = "title: none | text: "

QWEN3: dict[str, Any] = {
    **COMMON,
    "model_type": "qwen3",
    "num_hidden_layers": 2,
    "head_dim": 16,
    "rope_theta": 10000.0,
    "tie_word_embeddings": True,
}
# A window of 8 in the config: Hugging Face's both-ways Gemma reaches 8 // 2 + 1 = 5 positions
# less than 5 away, so texts of a dozen tokens tell a sliding layer from a global one.
GEMMA: dict[str, Any] = {
    **COMMON,
    "model_type": "gemma3_text",
    "num_hidden_layers": 3,
    "head_dim": 16,
    "query_pre_attn_scalar": 16,
    "sliding_window": 8,
    "layer_types": ["sliding_attention", "sliding_attention", "full_attention"],
    "rope_theta": 10000.0,
    "rope_local_base_freq": 10000.0,
    "use_bidirectional_attention": True,
}
BERT: dict[str, Any] = {
    "model_type": "bert",
    "architectures": ["BertModel"],
    "vocab_size": VOCAB_SIZE,
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "intermediate_size": 64,
    "max_position_embeddings": 64,
    "type_vocab_size": 2,
    "layer_norm_eps": 1e-12,
    "hidden_act": "gelu",
}
GEMMA_DENSE = ((64, 96), (96, 48))

# The modes as sentence-transformers' Pooling config names them.
_MODES = ("cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens", "lasttoken")


def build_qwen3_embedding(folder: Path, seed: int = 0) -> Path:
    folder.mkdir(parents=True)
    model = _decoder(QWEN3, seed)
    # Qwen3-Embedding's checkpoint is the bare model: no `model.` prefix, no output layer.
    weights = {k.removeprefix("model."): v for k, v in _weights(model).items()}
    _write(folder, QWEN3, weights, "$A <|endoftext|>", "lasttoken")
    _settings(folder, query=QUERY_INSTRUCTION, document="")
    return folder


def build_embedding_gemma(folder: Path, seed: int = 0) -> Path:
    folder.mkdir(parents=True)
    model = _decoder({**GEMMA, "sliding_window_pattern": 3}, seed)
    weights = {k: v for k, v in _weights(model).items() if not k.startswith("lm_head")}
    _write(folder, GEMMA, weights, "<|im_start|> $A <|im_end|>", "mean_tokens", len(GEMMA_DENSE))
    for index, (inputs, outputs) in enumerate(GEMMA_DENSE, start=2):
        step = folder / f"{index}_Dense"
        step.mkdir()
        linear = {"linear.weight": mx.random.normal((outputs, inputs)) * inputs**-0.5}
        mx.save_safetensors(str(step / "model.safetensors"), linear)
        activation = "torch.nn.modules.linear.Identity"
        config = {"in_features": inputs, "out_features": outputs, "bias": False}
        (step / "config.json").write_text(json.dumps({**config, "activation_function": activation}))
    _settings(folder, query=GEMMA_QUERY, document=GEMMA_DOCUMENT)
    return folder


def build_bge(folder: Path, seed: int = 0) -> Path:
    folder.mkdir(parents=True)
    _write(folder, BERT, bert_weights(seed), "<|im_start|> $A <|im_end|>", "cls_token")
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 32}))
    return folder


def bert_weights(seed: int) -> dict[str, mx.array]:
    """Random weights under Hugging Face's BertModel names (with its pooler, which embedding
    never reads), written out from the layout rather than from Branchwise's module."""
    mx.random.seed(seed)
    h, inter = BERT["hidden_size"], BERT["intermediate_size"]
    shapes: dict[str, tuple[int, ...]] = {
        "embeddings.word_embeddings.weight": (VOCAB_SIZE, h),
        "embeddings.position_embeddings.weight": (BERT["max_position_embeddings"], h),
        "embeddings.token_type_embeddings.weight": (2, h),
        "embeddings.LayerNorm.weight": (h,),
        "embeddings.LayerNorm.bias": (h,),
        "pooler.dense.weight": (h, h),
        "pooler.dense.bias": (h,),
    }
    for i in range(BERT["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        for part in ("attention.self.query", "attention.self.key", "attention.self.value"):
            shapes |= {f"{p}{part}.weight": (h, h), f"{p}{part}.bias": (h,)}
        shapes |= {
            f"{p}attention.output.dense.weight": (h, h),
            f"{p}attention.output.dense.bias": (h,),
            f"{p}attention.output.LayerNorm.weight": (h,),
            f"{p}attention.output.LayerNorm.bias": (h,),
            f"{p}intermediate.dense.weight": (inter, h),
            f"{p}intermediate.dense.bias": (inter,),
            f"{p}output.dense.weight": (h, inter),
            f"{p}output.dense.bias": (h,),
            f"{p}output.LayerNorm.weight": (h,),
            f"{p}output.LayerNorm.bias": (h,),
        }
    weights = {}
    for name, shape in shapes.items():
        if "LayerNorm.weight" in name:
            weights[name] = 1.0 + 0.1 * mx.random.normal(shape)
        else:
            weights[name] = mx.random.normal(shape) * (shape[-1] ** -0.5 if len(shape) > 1 else 0.1)
    return weights


def _decoder(config: dict[str, Any], seed: int) -> nn.Module:
    mx.random.seed(seed)
    model_class, args_class = get_model_classes(config)
    return model_class(args_class.from_dict(config))


def _weights(model: nn.Module) -> dict[str, mx.array]:
    return {k: v.astype(mx.float32) for k, v in tree_flatten(model.parameters())}


def _write(
    folder: Path,
    config: dict[str, Any],
    weights: dict[str, mx.array],
    frame: str,
    mode: str,
    dense: int = 0,
) -> None:
    mx.save_safetensors(str(folder / "model.safetensors"), weights, metadata={"format": "pt"})
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    tokenizer = build_tokenizer()
    specials = [(name, tokenizer.token_to_id(name)) for name in frame.split() if name != "$A"]
    tokenizer.post_processor = processors.TemplateProcessing(single=frame, special_tokens=specials)
    _write_tokenizer(folder, tokenizer)
    steps = [("", "Transformer"), ("1_Pooling", "Pooling")]
    steps += [(f"{i}_Dense", "Dense") for i in range(2, 2 + dense)]
    steps.append((f"{len(steps)}_Normalize", "Normalize"))
    modules = [
        {"idx": i, "name": str(i), "path": path, "type": f"sentence_transformers.models.{kind}"}
        for i, (path, kind) in enumerate(steps)
    ]
    (folder / "modules.json").write_text(json.dumps(modules, indent=2))
    (folder / "1_Pooling").mkdir()
    pooling = {"word_embedding_dimension": config["hidden_size"], "include_prompt": True}
    pooling |= {f"pooling_mode_{m}": m == mode for m in _MODES}
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(pooling, indent=2))


def _settings(folder: Path, query: str, document: str) -> None:
    settings = {"prompts": {"query": query, "document": document}, "default_prompt_name": None}
    (folder / "config_sentence_transformers.json").write_text(json.dumps(settings))
