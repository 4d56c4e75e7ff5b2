"""GGUF import (issue 4, items 1, 2 and 7): a GGUF file becomes an MLX folder that mlx-lm loads
and that answers exactly as the original model."""

from __future__ import annotations

import errno
import json
import threading
from pathlib import Path
from typing import Any

import gguf
import mlx.core as mx
import mlx.nn as nn
import mlx_lm
import numpy as np
import pytest
from gguf import GGMLQuantizationType as Type
from mlx.utils import tree_flatten

import inference.importing.gguf_import as gguf_import
import inference.importing.gguf_reader as gguf_reader
import inference.loading.file_limits as file_limits
from inference import ModelLoadError, import_gguf
from inference.importing.model_folder import ImportCancelled
from tests.tiny_gguf import tiny_model, write_gguf
from tests.tiny_models import CHATML_TEMPLATE, build_tokenizer

# Issue 4, item 2: reference ids from Hugging Face transformers on the same dequantized weights.
QUESTION = [{"role": "user", "content": "What is the capital of France? Answer in one sentence."}]
PROMPT_IDS = [
    1,
    9690,
    198,
    2683,
    359,
    253,
    5356,
    5646,
    11173,
    3365,
    3511,
    308,
    34519,
    28,
    7018,
    411,
    407,
    19712,
    8182,
    2,
    198,
    1,
    4093,
    198,
    1780,
    314,
    260,
    3575,
    282,
    4649,
    47,
    19842,
    281,
    582,
    6330,
    30,
    2,
    198,
    1,
    520,
    9531,
    198,
]
REPLY_IDS = [504, 3575, 282, 4649, 314, 7042, 30, 2]
TOKEN_IDS = mx.array([[5, 17, 42, 99, 200, 301, 7, 8, 9, 10, 64, 128]])


@pytest.fixture(scope="session")
def smollm2(smollm2_folder: Path) -> tuple[Path, nn.Module, Any]:
    """The embedded SmolLM2 GGUF, imported once per session and loaded with mlx-lm."""
    model, tokenizer = mlx_lm.load(str(smollm2_folder))
    return smollm2_folder, model, tokenizer


@pytest.fixture
def library(tmp_path: Path) -> Path:
    """A models folder that already holds one model, which no failed import may touch."""
    models = tmp_path / "models"
    (models / "existing-model").mkdir(parents=True)
    (models / "existing-model" / "config.json").write_text('{"model_type": "llama"}')
    return models


def snapshot(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_size for p in sorted(folder.rglob("*"))}


@pytest.fixture(scope="module")
def llama_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    model, config = tiny_model("llama")
    path = tmp_path_factory.mktemp("gguf") / "tiny-llama.Q8_0.gguf"
    return write_gguf(model, config, path, Type.Q8_0)


@pytest.mark.slow
def test_smollm2_prompt_and_greedy_reply_are_exact(smollm2: tuple[Path, nn.Module, Any]) -> None:
    _, model, tokenizer = smollm2
    prompt = tokenizer.apply_chat_template(QUESTION, add_generation_prompt=True)
    assert list(prompt) == PROMPT_IDS
    reply = []
    for step in mlx_lm.stream_generate(model, tokenizer, prompt, max_tokens=len(REPLY_IDS)):
        reply.append(step.token)
    assert reply == REPLY_IDS
    assert tokenizer.decode(reply, skip_special_tokens=True) == "The capital of France is Paris."


def test_smollm2_keeps_its_8_bit_embedding_and_4_bit_layers(
    smollm2: tuple[Path, nn.Module, Any],
) -> None:
    folder, model, tokenizer = smollm2
    config = json.loads((folder / "config.json").read_text())
    assert config["rope_traditional"] is True
    assert config["tie_word_embeddings"] is True  # the GGUF has no output.weight
    assert config["quantization"]["bits"] == 4
    assert config["quantization"]["model.embed_tokens"]["bits"] == 8
    assert isinstance(model.model.embed_tokens, nn.QuantizedEmbedding)
    assert model.model.embed_tokens.bits == 8
    assert model.model.layers[0].self_attn.q_proj.bits == 4
    assert sorted(p.name for p in folder.iterdir()) == [
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "tokenizer_config.json",
    ]
    assert tokenizer.eos_token_ids == {2}


def test_smollm2_splits_numbers_into_digits_like_its_original_tokenizer(
    smollm2: tuple[Path, nn.Module, Any],
) -> None:
    # tokenizer.ggml.pre = "smollm": every digit is its own pre-token, as in SmolLM2's
    # tokenizer.json (Digits(individual_digits=True) before the byte-level split).
    _, _, tokenizer = smollm2
    ids = tokenizer.encode("In 2024", add_special_tokens=False)
    assert [tokenizer.decode([i]) for i in ids][-4:] == ["2", "0", "2", "4"]


def _dequantized_reference(model: nn.Module, qtype: Type) -> nn.Module:
    """The model with every matrix rounded through the GGUF type by gguf's own numpy code."""
    if qtype == Type.F32:
        return model
    rounded = [
        (name, mx.array(gguf.quants.dequantize(gguf.quants.quantize(np.array(v), qtype), qtype)))
        if v.ndim == 2
        else (name, v)
        for name, v in tree_flatten(model.parameters())
    ]
    model.load_weights(rounded)
    return model


@pytest.mark.parametrize(
    ("model_type", "qtype", "bits", "tolerance"),
    [
        ("llama", Type.F32, None, 1e-4),
        ("qwen2", Type.F32, None, 1e-4),
        ("qwen3", Type.F32, None, 1e-4),
        # Read by MLX straight into its quantized layout: the same numbers as the file.
        ("llama", Type.Q8_0, 8, 0.05),
        ("llama", Type.Q4_0, 4, 0.05),
        ("qwen3", Type.Q4_1, 4, 0.05),
        # Not an MLX type: dequantized with gguf and quantized again (8 bits), so a bit looser.
        ("llama", Type.Q5_0, 8, 0.5),
    ],
    ids=lambda value: value.name if isinstance(value, Type) else None,
)
def test_imported_model_computes_what_the_original_computed(
    tmp_path: Path, model_type: str, qtype: Type, bits: int | None, tolerance: float
) -> None:
    model, config = tiny_model(model_type)
    source = write_gguf(model, config, tmp_path / f"tiny-{model_type}.gguf", qtype)
    folder = import_gguf(source, tmp_path / "models")

    imported, _ = mlx_lm.load(str(folder))
    expected = _dequantized_reference(model, qtype)(TOKEN_IDS)
    actual = imported(TOKEN_IDS)
    assert mx.abs(actual.astype(mx.float32) - expected).max().item() < tolerance
    assert actual.argmax(-1).tolist() == expected.argmax(-1).tolist()
    quantization = json.loads((folder / "config.json").read_text()).get("quantization")
    assert (quantization or {}).get("bits") == bits


def test_imported_tokenizer_matches_the_original(tmp_path: Path, llama_gguf: Path) -> None:
    folder = import_gguf(llama_gguf, tmp_path)
    _, tokenizer = mlx_lm.load(str(folder))
    original = build_tokenizer()
    text = "Hello! How are you today? The capital of France is Paris, 1000 km away."
    assert tokenizer.encode(text, add_special_tokens=False) == original.encode(text).ids
    rendered = tokenizer.apply_chat_template(QUESTION, add_generation_prompt=True, tokenize=False)
    assert rendered.startswith("<|im_start|>user\n")
    assert json.loads((folder / "tokenizer_config.json").read_text())["chat_template"] == (
        CHATML_TEMPLATE
    )
    assert tokenizer.eos_token_ids == {2}


def test_llama3_rope_factors_become_mlx_lm_rope_scaling(tmp_path: Path) -> None:
    scaling = {
        "rope_type": "llama3",
        "factor": 32.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    }
    model, config = tiny_model(
        "llama", rope_scaling=scaling, rope_theta=500000.0, max_position_embeddings=131072
    )
    folder = import_gguf(write_gguf(model, config, tmp_path / "llama3.gguf"), tmp_path / "models")

    assert json.loads((folder / "config.json").read_text())["rope_scaling"] == scaling
    imported, _ = mlx_lm.load(str(folder))
    long_ids = mx.tile(TOKEN_IDS, (1, 40))  # long enough for the scaled frequencies to matter
    assert mx.allclose(imported(long_ids), model(long_ids), atol=1e-4).item()


def test_progress_runs_to_the_end_and_a_second_import_gets_its_own_folder(
    library: Path, llama_gguf: Path
) -> None:
    seen: list[tuple[int, int]] = []
    first = import_gguf(llama_gguf, library, progress=lambda *step: seen.append(step))
    second = import_gguf(llama_gguf, library)

    done = [step[0] for step in seen]
    assert done == sorted(done) and seen[-1][0] == seen[-1][1] > 0
    assert (first.name, second.name) == ("tiny-llama.Q8_0", "tiny-llama.Q8_0-2")
    assert sorted(p.name for p in library.iterdir()) == [
        "existing-model",
        "tiny-llama.Q8_0",
        "tiny-llama.Q8_0-2",
    ]


# --- bad input: a clear message, and the library exactly as it was ---------------------------


def _refused(source: Path, library: Path, **kwargs: Any) -> str:
    before = snapshot(library)
    with pytest.raises(ModelLoadError) as caught:
        import_gguf(source, library, **kwargs)
    assert snapshot(library) == before
    return str(caught.value)


def test_a_file_that_is_not_gguf_is_refused(tmp_path: Path, library: Path) -> None:
    source = tmp_path / "notes.gguf"
    source.write_text("just some text")
    assert "notes.gguf is not a GGUF file" in _refused(source, library)


def test_a_truncated_gguf_is_refused(tmp_path: Path, library: Path, llama_gguf: Path) -> None:
    source = tmp_path / "cut.gguf"
    source.write_bytes(llama_gguf.read_bytes()[: llama_gguf.stat().st_size // 2])
    assert "damaged or incomplete" in _refused(source, library)


def test_an_unsupported_architecture_is_named(tmp_path: Path, library: Path) -> None:
    model, config = tiny_model("llama")
    source = write_gguf(model, config, tmp_path / "encoder.gguf", architecture="bert")
    message = _refused(source, library)
    assert "'bert'" in message and "llama" in message


def test_an_unknown_pre_tokenizer_is_named(tmp_path: Path, library: Path) -> None:
    model, config = tiny_model("llama")
    source = write_gguf(model, config, tmp_path / "odd.gguf", pre="someday-bpe")
    assert "'someday-bpe'" in _refused(source, library)


def test_an_unreadable_tensor_type_is_named(tmp_path: Path, library: Path) -> None:
    # Neither MLX nor gguf's numpy code reads Q8_1 blocks.
    model, config = tiny_model("llama")
    source = write_gguf(model, config, tmp_path / "q8_1.gguf", Type.Q8_1)
    assert "GGUF type Q8_1" in _refused(source, library)


def test_missing_metadata_is_named(tmp_path: Path, library: Path) -> None:
    writer = gguf.GGUFWriter(tmp_path / "bare.gguf", "llama")
    writer.add_tensor("token_embd.weight", np.zeros((8, 32), np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    assert "lacks the metadata embedding_length" in _refused(tmp_path / "bare.gguf", library)


def test_cancel_leaves_nothing_behind(library: Path, llama_gguf: Path) -> None:
    cancel = threading.Event()

    def progress(done: int, total: int) -> None:
        if done > 0:
            cancel.set()

    before = snapshot(library)
    with pytest.raises(ImportCancelled):
        import_gguf(llama_gguf, library, progress=progress, cancel=cancel)
    assert snapshot(library) == before


def test_too_little_free_space_is_refused_before_writing(
    library: Path, llama_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gguf_import.shutil, "disk_usage", lambda _: _Usage(free=1000))
    message = _refused(llama_gguf, library)
    assert "Not enough disk space" in message and "0.00 GB is free" in message


def test_a_disk_that_fills_up_while_writing_is_reported(
    library: Path, llama_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fill_disk(path: str, *args: object, **kwargs: object) -> None:
        Path(path).write_bytes(b"\0" * 4096)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(gguf_import.mx, "save_safetensors", fill_disk)
    assert "Not enough disk space" in _refused(llama_gguf, library)


class _Usage:
    def __init__(self, free: int = 0, available: int = 0) -> None:
        self.free = free
        self.available = available


def test_a_gguf_larger_than_the_free_memory_is_refused_before_its_tensors_are_read(
    library: Path, llama_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The tensors' size comes from the checked header, so MLX never starts reading them.
    monkeypatch.setattr(file_limits.psutil, "virtual_memory", lambda: _Usage(available=1000))
    monkeypatch.setattr(gguf_reader.mx, "load", _never_called)
    message = _refused(llama_gguf, library)
    assert "Importing tiny-llama.Q8_0.gguf needs about" in message
    assert "only 0.0 GB is available" in message


def _never_called(*args: object, **kwargs: object) -> None:
    raise AssertionError("MLX was asked to read the tensors")
