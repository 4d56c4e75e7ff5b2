"""Dhara without its real weights: a tiny random checkpoint in the published layout converts,
loads, and runs exactly with a cache whose canon windows save, load and fork like any state."""

from __future__ import annotations

import json
from pathlib import Path

import mlx.core as mx
import numpy as np
import pytest
from mlx_lm.models.cache import ArraysCache, load_prompt_cache, save_prompt_cache

from inference import LoadedModel, ModelLoadError, import_dhara, load_model
from inference.cache.branch_cache import BranchCache
from inference.cache.layers import capture, leaves, restore_snapshot
from inference.cache.stack import CacheStack
from inference.models.dhara import Model, ModelArgs, canon_channels
from tests.tiny_models import DHARA_CONFIG, build_dhara_checkpoint, dhara_published_weights

TOKENS = [5, 17, 200, 3, 99, 42, 7, 8, 150, 61, 300, 12, 4, 77, 250, 9, 33]
KERNEL = 4


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_dhara_checkpoint(tmp_path_factory.mktemp("hf") / "dhara-tiny")


@pytest.fixture(scope="module")
def loaded(published: Path, tmp_path_factory: pytest.TempPathFactory) -> LoadedModel:
    return load_model(import_dhara(published, tmp_path_factory.mktemp("models")))


def full_logits(model: Model, tokens: list[int]) -> mx.array:
    return model(mx.array([tokens]))[0]


def stepped_logits(model: Model, tokens: list[int], pieces: list[int], cache: list) -> mx.array:
    """Feed `tokens` in pieces of the given sizes through one cache; the logits of every token."""
    out, at = [], 0
    for size in pieces:
        out.append(model(mx.array([tokens[at : at + size]]), cache=cache)[0])
        at += size
    assert at == len(tokens)
    return mx.concatenate(out)


def test_the_published_layout_converts_into_a_folder_the_app_loads(
    published: Path, loaded: LoadedModel
) -> None:
    assert "auto_map" in json.loads((published / "config.json").read_text())
    config = json.loads((loaded.path / "config.json").read_text())
    assert config["model_type"] == "dhara" and "auto_map" not in config
    assert config["canon_d_input"] == "product" and config["tie_word_embeddings"] is True
    assert loaded.model_type == "dhara" and loaded.context_length == 4096
    ids = loaded.tokenizer.apply_chat_template(
        [{"role": "user", "content": "Hello"}], add_generation_prompt=True
    )
    assert loaded.tokenizer.decode(ids).startswith("<|im_start|>user\nHello")


def test_canon_taps_keep_pytorchs_causal_order(published: Path, loaded: LoadedModel) -> None:
    """The converted canon A computes what PyTorch's Conv1d (left-padded by kernel - 1) does with
    the published weight: y[t] = x[t] + sum_k w[k] * x[t - 3 + k], channel by channel."""
    weight = np.array(mx.load(str(published / "model.safetensors"))["model.layers.0.canonA.weight"])
    x = np.random.default_rng(0).normal(size=(1, 9, weight.shape[0])).astype(np.float32)
    padded = np.pad(x, [(0, 0), (KERNEL - 1, 0), (0, 0)])
    expected = x + sum(weight[:, 0, k] * padded[:, k : k + 9, :] for k in range(KERNEL))
    got = loaded.model.layers[0].canon_a(mx.array(x), None, 0)
    np.testing.assert_allclose(np.array(got), expected, atol=1e-5)


@pytest.mark.parametrize("pieces", [[1] * 17, [3, 1, 1, 5, 2, 5], [16, 1], [2, 2, 2, 11]])
def test_cached_pieces_give_the_logits_of_one_full_forward(
    loaded: LoadedModel, pieces: list[int]
) -> None:
    model = loaded.model
    stepped = stepped_logits(model, TOKENS, pieces, model.make_cache())
    assert mx.abs(stepped - full_logits(model, TOKENS)).max().item() < 1e-4


def test_the_windows_carry_the_last_inputs_across_calls(loaded: LoadedModel) -> None:
    """Control: a cache whose canon windows are emptied between calls gives other logits, so
    the equality above depends on the windows being right."""
    model = loaded.model
    cache = model.make_cache()
    first = model(mx.array([TOKENS[:8]]), cache=cache)[0]
    for layer in cache:
        layer.caches[1].cache = [None] * len(layer.caches[1].cache)
    rest = model(mx.array([TOKENS[8:]]), cache=cache)[0]
    forgetful = mx.concatenate([first, rest])
    assert mx.abs(forgetful - full_logits(model, TOKENS)).max().item() > 1e-2


def test_canon_d_before_gating_is_read_from_the_weight_shape(tmp_path: Path) -> None:
    folder = build_dhara_checkpoint(tmp_path / "gate-up")
    weights = dhara_published_weights(DHARA_CONFIG)
    inter = DHARA_CONFIG["intermediate_size"]
    for i in range(DHARA_CONFIG["num_hidden_layers"]):
        weights[f"model.layers.{i}.mlp.canonD.weight"] = 0.5 * mx.random.normal((2 * inter, 1, 4))
    mx.save_safetensors(str(folder / "model.safetensors"), weights)
    converted = load_model(import_dhara(folder, tmp_path / "models"))
    assert json.loads((converted.path / "config.json").read_text())["canon_d_input"] == "gate_up"
    model = converted.model
    stepped = stepped_logits(model, TOKENS, [5, 1, 1, 10], model.make_cache())
    assert mx.abs(stepped - full_logits(model, TOKENS)).max().item() < 1e-4


def test_weights_that_fit_no_dhara_model_are_refused_and_nothing_is_left(tmp_path: Path) -> None:
    folder = build_dhara_checkpoint(tmp_path / "odd")
    weights = dhara_published_weights(DHARA_CONFIG)
    weights["model.layers.1.mlp.canonD.weight"] = mx.zeros((100, 1, 4))
    mx.save_safetensors(str(folder / "model.safetensors"), weights)
    models = tmp_path / "models"
    with pytest.raises(ModelLoadError, match="Canon D has"):
        import_dhara(folder, models)
    del weights["model.layers.1.mlp.canonD.weight"]
    mx.save_safetensors(str(folder / "model.safetensors"), weights)
    with pytest.raises(ModelLoadError, match=r"missing: model\.layers\.1\.mlp\.canon_d\."):
        import_dhara(folder, models)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "canon_set": "ABE"}))
    with pytest.raises(ModelLoadError, match="could not be converted: canon_set"):
        import_dhara(folder, models)
    (folder / "model.safetensors").unlink()
    with pytest.raises(ModelLoadError, match=r"no \.safetensors"):
        import_dhara(folder, models)
    assert list(models.iterdir()) == []


def test_the_cache_saves_loads_and_never_rewinds(loaded: LoadedModel, tmp_path: Path) -> None:
    model = loaded.model
    cache = model.make_cache()
    model(mx.array([TOKENS[:10]]), cache=cache)
    save_prompt_cache(str(tmp_path / "cache.safetensors"), cache)
    restored = load_prompt_cache(str(tmp_path / "cache.safetensors"))
    after = model(mx.array([TOKENS[10:]]), cache=restored)[0]
    assert mx.abs(after - full_logits(model, TOKENS)[10:]).max().item() < 1e-4
    assert not any(c.is_trimmable() for c in cache)
    # So the engine checkpoints at message boundaries.
    assert not BranchCache(model, 10**6, None).rewinds_anywhere


def test_window_bytes_are_what_canon_channels_say(loaded: LoadedModel) -> None:
    model = loaded.model
    cache = model.make_cache()
    model(mx.array([TOKENS]), cache=cache)
    per_layer = sum(canon_channels(model.args).values()) * (KERNEL - 1) * 4  # float32
    for layer in cache:
        windows = layer.caches[1]
        assert isinstance(windows, ArraysCache) and windows.nbytes == per_layer


def test_a_dhara_250m_checkpoint_holds_at_most_one_mib_beyond_its_kv() -> None:
    """dhara-250m's geometry (bfloat16 activations, as published): the canon windows of all 32
    layers, which a checkpoint stores besides the attention KV."""
    args = ModelArgs.from_dict(
        {
            "model_type": "dhara",
            "hidden_size": 768,
            "num_hidden_layers": 32,
            "intermediate_size": 2176,
            "num_attention_heads": 12,
            "num_key_value_heads": 4,
            "head_dim": 64,
            "vocab_size": 49152,
            "max_position_embeddings": 32768,
        }
    )
    channels = canon_channels(args)
    # The model card's canon parameter count, 638,976, is these channels times the kernel.
    assert sum(channels.values()) * args.canon_kernel * args.num_hidden_layers == 638_976
    window_bytes = sum(channels.values()) * (args.canon_kernel - 1) * 2 * args.num_hidden_layers
    assert window_bytes <= 2**20


def test_the_library_converts_a_published_checkpoint_into_an_entry(
    published: Path, tmp_path: Path
) -> None:
    from app.library import entries as library
    from app.library import install as model_install

    assert model_install.is_published_dhara(published)
    with pytest.raises(library.LibraryError, match="trust_remote_code"):
        model_install.validate_folder(published)  # as it is, it would need its own code
    entry = model_install.import_dhara_folder(published, tmp_path)
    [info] = library.list_models(tmp_path)
    assert info.folder == entry and info.problem is None and not info.linked
    assert (info.name, info.architecture) == ("dhara-tiny", "dhara")
    assert not model_install.is_published_dhara(entry)


def test_a_restored_checkpoint_holds_equal_windows_in_arrays_of_its_own(
    loaded: LoadedModel,
) -> None:
    model = loaded.model
    parent = CacheStack(model.make_cache(), list(TOKENS))
    model(mx.array([TOKENS]), cache=parent.caches)
    # A checkpoint taken and restored, as the branch cache does for layers that cannot rewind.
    child = CacheStack(model.make_cache(), list(TOKENS))
    for mine, theirs in zip(leaves(child.caches), leaves(parent.caches), strict=True):
        restore_snapshot(mine, capture(theirs))
    for mine, theirs in zip(child.caches, parent.caches, strict=True):
        for a, b in zip(mine.caches[1].cache, theirs.caches[1].cache, strict=True):
            assert a is not b and mx.array_equal(a, b).item()
    # The child's next token leaves the parent's windows as they were.
    before = [mx.array(w) for layer in parent.caches for w in layer.caches[1].cache]
    model(mx.array([[7]]), cache=child.caches)
    after = [w for layer in parent.caches for w in layer.caches[1].cache]
    assert all(mx.array_equal(x, y).item() for x, y in zip(before, after, strict=True))
