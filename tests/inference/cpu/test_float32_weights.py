"""Float32 weights on the CPU: "always" converts a 4-bit or bfloat16 model, "never" keeps it as
stored, "auto" converts only what fits its share of the memory; the form is recorded, keys the
saved caches, and the converted model still answers exactly as mlx-lm does on the same weights."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import mlx.core as mx
import mlx.nn as nn
import pytest
from mlx.utils import tree_flatten

import inference.cpu.float32_weights as float32_weights
from inference import Engine, ModelLoadError, SamplingParams, load_model
from inference.cache.key import cache_key
from inference.cpu.float32_weights import float32_bytes, should_convert
from tests.engine_reference import Comparison, check_tokens, reference
from tests.stored_forms import stored_copy
from tests.tiny_models import NO_EOS

GREEDY = SamplingParams(max_tokens=6, logit_bias=NO_EOS)
MESSAGES = [{"role": "user", "content": "Tell me a story about a cat in Paris."}]


@pytest.fixture(scope="module")
def four_bit(quantized_models_dir: Path) -> Path:
    return quantized_models_dir / "llama"


def dtypes(model: nn.Module) -> set[str]:
    return {str(a.dtype) for _, a in tree_flatten(model.parameters())}


def quantized_layers(model: nn.Module) -> int:
    return sum(
        isinstance(m, nn.QuantizedLinear | nn.QuantizedEmbedding) for _, m in model.named_modules()
    )


def test_never_keeps_the_model_as_stored(four_bit: Path) -> None:
    loaded = load_model(four_bit, cpu_float32="never")
    assert loaded.weights_form == "4-bit"
    assert quantized_layers(loaded.model) > 0


def test_always_turns_a_4_bit_model_into_float32(four_bit: Path) -> None:
    stored = load_model(four_bit, cpu_float32="never")
    expected = float32_bytes(stored.model)
    loaded = load_model(four_bit, cpu_float32="always")
    assert loaded.weights_form == "float32 (from 4-bit)"
    assert quantized_layers(loaded.model) == 0
    assert dtypes(loaded.model) == {"mlx.core.float32"}
    assert loaded.weights_bytes == expected > stored.weights_bytes
    # The same numbers: each dequantized matrix is exactly the 4-bit one.
    q_proj = stored.model.model.layers[0].self_attn.q_proj
    dense = mx.dequantize(
        q_proj.weight, q_proj.scales, q_proj.biases, q_proj.group_size, q_proj.bits
    )
    assert mx.array_equal(loaded.model.model.layers[0].self_attn.q_proj.weight, dense)


def test_always_turns_a_bfloat16_model_into_float32(tiny_models_dir: Path, tmp_path: Path) -> None:
    folder = stored_copy(tiny_models_dir / "llama", tmp_path / "bf16", "bfloat16")
    assert load_model(folder, cpu_float32="never").weights_form == "bfloat16"
    loaded = load_model(folder, cpu_float32="always")
    assert loaded.weights_form == "float32 (from bfloat16)"
    assert dtypes(loaded.model) == {"mlx.core.float32"}


def test_a_float32_model_is_left_alone(tiny_models_dir: Path) -> None:
    assert load_model(tiny_models_dir / "llama", cpu_float32="always").weights_form == "float32"


def test_auto_converts_only_what_fits_its_share_of_the_memory(
    four_bit: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    needed = float32_bytes(load_model(four_bit, cpu_float32="never").model)

    def machine(total: int, available: int) -> None:
        memory = SimpleNamespace(total=total, available=available)
        monkeypatch.setattr(float32_weights.psutil, "virtual_memory", lambda: memory)

    machine(total=4 * needed, available=4 * needed)  # exactly a quarter
    assert load_model(four_bit).weights_form == "float32 (from 4-bit)"
    machine(total=4 * needed - 4, available=4 * needed)  # a little over a quarter
    assert load_model(four_bit).weights_form == "4-bit"
    machine(total=100 * needed, available=needed // 2)  # a large machine, little memory free
    assert load_model(four_bit).weights_form == "4-bit"
    # "always" ignores the share; on a GPU nothing converts, whatever the policy.
    assert load_model(four_bit, cpu_float32="always").weights_form == "float32 (from 4-bit)"
    model = load_model(four_bit, cpu_float32="never").model
    assert not should_convert("always", model, cpu=False)
    assert not should_convert("auto", model, cpu=False, total_ram=10**12, available=10**12)


def test_an_unknown_policy_is_refused_by_name(four_bit: Path) -> None:
    with pytest.raises(ValueError, match="sometimes"):
        load_model(four_bit, cpu_float32="sometimes")


def test_a_missing_folder_still_says_so(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError):
        load_model(tmp_path / "nothing", cpu_float32="always")


def test_the_float32_form_answers_as_mlx_lm_does_on_the_same_weights(four_bit: Path) -> None:
    loaded = load_model(four_bit, cpu_float32="always")
    result = Engine(loaded).generate(MESSAGES, GREEDY)
    ids = loaded.tokenizer.apply_chat_template(MESSAGES, add_generation_prompt=True)
    check_tokens(result.token_ids, reference(loaded, ids, GREEDY, 6), Comparison(), "float32")


def test_the_cache_key_records_the_form(four_bit: Path) -> None:
    stored = cache_key(load_model(four_bit, cpu_float32="never"))
    converted = cache_key(load_model(four_bit, cpu_float32="always"))
    assert (stored["weights_form"], converted["weights_form"]) == ("4-bit", "float32 (from 4-bit)")
    assert stored != converted


def test_a_cache_saved_by_one_form_is_never_reused_by_the_other(
    four_bit: Path, tmp_path: Path
) -> None:
    first = Engine(load_model(four_bit, cpu_float32="never"), 10**9, cache_dir=tmp_path)
    first.generate(MESSAGES, GREEDY, "c")
    first.flush()
    assert first.disk_bytes() > 0
    first.close()
    same = Engine(load_model(four_bit, cpu_float32="never"), 10**9, cache_dir=tmp_path)
    assert same.generate(MESSAGES, GREEDY, "c").stats.disk_tokens > 0  # the control
    same.close()
    other = Engine(load_model(four_bit, cpu_float32="always"), 10**9, cache_dir=tmp_path)
    assert other.generate(MESSAGES, GREEDY, "c").stats.disk_tokens == 0


@pytest.mark.slow
def test_smollm2_as_float32_replies_as_its_4_bit_form_up_to_near_ties(
    smollm2_folder: Path,
) -> None:
    """The embedded model's greedy replies agree token for token with the 4-bit form's, or part
    only at a near-tie of the 4-bit form's top two tokens. (Measured on 8 prompts of 64 tokens:
    7 identical; "Say hello in one short sentence." parts at token 11, where the two forms' top
    two tokens differ by 0.012 and 0.006 nats in opposite order; not one of the three here.)"""
    folder = smollm2_folder
    stored = load_model(folder, cpu_float32="never")
    converted = load_model(folder, cpu_float32="always")
    assert (stored.weights_form, converted.weights_form) == ("4-bit", "float32 (from 4-bit)")
    engine, comparison = Engine(converted), Comparison()
    for question in (
        "What is the capital of France? Answer in one sentence.",
        "How do I sort a list in Python?",
        "What is 17 times 23?",
    ):
        messages = [{"role": "user", "content": question}]
        ids = stored.tokenizer.apply_chat_template(messages, add_generation_prompt=True)
        params = SamplingParams(max_tokens=24)
        got = engine.generate(messages, params).token_ids
        check_tokens(got, reference(stored, ids, params, 24), comparison, question)
