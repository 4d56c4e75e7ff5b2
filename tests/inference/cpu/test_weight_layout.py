"""Float32 matrices kept transposed on the CPU: the same shapes and values, replies decoded
faster, saved caches keyed by the layout, and nothing changed for weights the CPU's BLAS does
not multiply (quantized, on a GPU, an untied model's embedding table)."""

from __future__ import annotations

import time
from pathlib import Path

import mlx.core as mx
import mlx.nn as nn
import pytest

import inference.cpu.float32_weights as float32_weights
from inference import Engine, SamplingParams, load_model
from inference.cache.key import cache_key
from inference.cpu.weight_layout import AS_STORED, TRANSPOSED, layout, transpose_for_blas
from tests.perf import best_of
from tests.tiny_models import NO_EOS

GREEDY = SamplingParams(max_tokens=6, logit_bias=NO_EOS)
MESSAGES = [{"role": "user", "content": "Tell me a story about a cat in Paris."}]


def strides(array: mx.array) -> tuple[int, ...]:
    return memoryview(array).strides


def stored_weights(folder: Path) -> dict[str, mx.array]:
    weights: dict[str, mx.array] = {}
    for file in sorted(folder.glob("model*.safetensors")):
        weights.update(mx.load(str(file)))
    return weights


def test_a_float32_model_s_matrices_are_transposed_views_of_the_same_values(
    tiny_models_dir: Path,
) -> None:
    folder = tiny_models_dir / "llama"
    loaded = load_model(folder, cpu_float32="always")
    assert layout(loaded.model) == TRANSPOSED
    stored = stored_weights(folder)
    q_proj = loaded.model.model.layers[0].self_attn.q_proj.weight
    original = stored["model.layers.0.self_attn.q_proj.weight"]
    assert q_proj.shape == original.shape and mx.array_equal(q_proj, original)
    assert strides(q_proj) == (4, 4 * q_proj.shape[0])  # column after column
    # An untied model looks its prompt up in the embedding and multiplies by lm_head.
    embedding = loaded.model.model.embed_tokens.weight
    assert strides(embedding) == (4 * embedding.shape[1], 4)
    assert strides(loaded.model.lm_head.weight) == (4, 4 * loaded.model.lm_head.weight.shape[0])


def test_a_tied_embedding_is_transposed_since_it_is_the_output_product(
    tiny_models_dir: Path,
) -> None:
    folder = tiny_models_dir / "dhara"  # tie_word_embeddings: true
    loaded = load_model(folder, cpu_float32="always")
    embedding = loaded.model.model.embed_tokens.weight
    assert not hasattr(loaded.model, "lm_head")
    assert strides(embedding) == (4, 4 * embedding.shape[0])
    assert mx.array_equal(embedding, stored_weights(folder)["model.embed_tokens.weight"])


def test_quantized_weights_and_a_gpu_keep_the_stored_layout(
    quantized_models_dir: Path, tiny_models_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    four_bit = load_model(quantized_models_dir / "llama", cpu_float32="never")
    assert layout(four_bit.model) == AS_STORED
    monkeypatch.setattr(float32_weights, "on_cpu", lambda: False)
    assert layout(load_model(tiny_models_dir / "llama", cpu_float32="always").model) == AS_STORED


def test_turning_twice_changes_nothing(tiny_models_dir: Path) -> None:
    loaded = load_model(tiny_models_dir / "llama", cpu_float32="always")
    assert transpose_for_blas(loaded.model) == 0
    assert layout(loaded.model) == TRANSPOSED


def test_a_cache_saved_with_one_layout_is_never_reused_by_the_other(
    tiny_models_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tiny_models_dir / "llama"
    first = Engine(load_model(folder, cpu_float32="always"), 10**9, cache_dir=tmp_path)
    first.generate(MESSAGES, GREEDY, "c")
    first.flush()
    first.close()
    same = Engine(load_model(folder, cpu_float32="always"), 10**9, cache_dir=tmp_path)
    assert same.generate(MESSAGES, GREEDY, "c").stats.disk_tokens > 0  # the control
    same.close()
    monkeypatch.setattr(float32_weights, "transpose_for_blas", lambda model: 0)
    stored = load_model(folder, cpu_float32="always")
    assert cache_key(stored)["arithmetic"][1] == AS_STORED
    other = Engine(stored, 10**9, cache_dir=tmp_path)
    assert other.generate(MESSAGES, GREEDY, "c").stats.disk_tokens == 0


@pytest.mark.perf
def test_a_decode_step_s_products_are_faster_on_transposed_matrices() -> None:
    """One-row products over SmolLM2's shapes: ten layers' matrices and the output layer."""
    layer = [(576, 576), (192, 576), (192, 576), (576, 576), (1536, 576), (1536, 576), (576, 1536)]
    stored = [mx.random.normal(shape) for shape in [*layer * 10, (49152, 576)]]
    transposed = [mx.contiguous(weight.T).T for weight in stored]
    rows = {width: mx.random.normal((1, width)) for width in (576, 1536)}
    mx.eval(stored, transposed, list(rows.values()))

    def seconds(matrices: list[mx.array]) -> float:
        start = time.perf_counter()
        for _ in range(5):
            mx.eval([rows[m.shape[1]] @ m.T for m in matrices])
        return time.perf_counter() - start

    def share() -> float:
        return seconds(transposed) / seconds(stored)

    assert best_of(share, limit=0.9) < 0.9


def test_a_model_with_no_float32_matrix_reports_as_stored() -> None:
    model = nn.Sequential(nn.Linear(4, 4))
    model.set_dtype(mx.bfloat16)
    assert transpose_for_blas(model) == 0 and layout(model) == AS_STORED
