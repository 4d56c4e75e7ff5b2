"""The tiny fixture models load through the real loader (mlx-lm's, with Branchwise's model
families added through its get_model_classes hook) and generate."""

from __future__ import annotations

import json
from pathlib import Path

import mlx.core as mx
import mlx_lm
from mlx_lm.models.cache import (
    ArraysCache,
    CacheList,
    KVCache,
    RotatingKVCache,
    make_prompt_cache,
)

from inference import load_model

EXPECTED_CACHE_KINDS = {
    "llama": {KVCache},
    "qwen3_5": {ArraysCache, KVCache},
    "gemma3_text": {RotatingKVCache, KVCache},
    "deepseek_v3": {KVCache},
    "dhara": {CacheList},
}


def test_tiny_model_loads_and_generates(tiny_model_path: Path) -> None:
    kind = tiny_model_path.name
    files = {p.name for p in tiny_model_path.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} <= files
    assert json.loads((tiny_model_path / "config.json").read_text())["model_type"] == kind

    loaded = load_model(tiny_model_path)
    model, tokenizer = loaded.model, loaded.tokenizer
    cache = make_prompt_cache(model)
    assert {type(c) for c in cache} == EXPECTED_CACHE_KINDS[kind]

    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "What is the capital of France?"}], add_generation_prompt=True
    )
    assert tokenizer.decode(prompt).startswith("<|im_start|>user\nWhat is the capital")
    tokens = [r.token for r in mlx_lm.stream_generate(model, tokenizer, prompt, max_tokens=8)]
    assert len(tokens) >= 1

    # Greedy choices are well separated, so the exactness tests are not decided by ties.
    logits = model(mx.array([prompt]))[0, -1]
    top2 = mx.sort(logits)[-2:]
    assert (top2[1] - top2[0]).item() > 1e-3


def test_gemma_window_is_small_enough_to_wrap(tiny_models_dir: Path) -> None:
    model, _ = mlx_lm.load(str(tiny_models_dir / "gemma3_text"))
    rotating = [c for c in make_prompt_cache(model) if isinstance(c, RotatingKVCache)]
    assert rotating and all(c.max_size == 16 for c in rotating)


def test_deepseek_cache_holds_latent_of_rank_kv_lora(tiny_models_dir: Path) -> None:
    model, tokenizer = mlx_lm.load(str(tiny_models_dir / "deepseek_v3"))
    cache = make_prompt_cache(model)
    model(mx.array([tokenizer.encode("Hello there")]), cache=cache)
    # MLA keeps the compressed latent (kv_lora_rank) as keys and the RoPE part as values.
    assert cache[0].keys.shape[-1] == 32
    assert cache[0].values.shape[-1] == 8
