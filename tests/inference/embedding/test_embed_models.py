"""Each way of embedding against a reference written out in the test from what the model's
publishers specify, one text at a time with no padding: Qwen3-Embedding reads the state at its
last token (the end-of-text token its tokenizer appends), after the query instruction;
EmbeddingGemma runs Gemma 3 both ways (a sliding layer sees fewer than window // 2 + 1
positions either way), averages, then applies its dense steps; bge is a BERT read at its first
token (a numpy BERT here). A batch of texts of different lengths, padded, gives each text's
own vector."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import mlx.core as mx
import numpy as np
import pytest
from tokenizers import Tokenizer

from inference.embedding.encoder import MlxEmbedder, batches, load_embedder
from inference.models.registry import get_model_classes
from tests.tiny_embedders import BERT, GEMMA, GEMMA_DOCUMENT, GEMMA_QUERY, QUERY_INSTRUCTION, QWEN3

TEXTS = [
    "The capital of France is Paris.",
    "cat",
    "Tell me a story about a cat and a dog who became friends in the city, then write a haiku.",
    "",
]


@pytest.fixture(scope="module")
def embedders(tiny_embedders_dir: Path) -> dict[str, MlxEmbedder]:
    return {name: load_embedder(tiny_embedders_dir / name) for name in ("qwen3", "gemma", "bge")}


def _ids(folder: Path, text: str, limit: int | None = None) -> list[int]:
    """The folder's tokenizer as the tokenizers library reads it, cut as Hugging Face cuts."""
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    if limit is not None:
        tokenizer.enable_truncation(limit)
    return tokenizer.encode(text).ids


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def _mlx_lm_model(folder: Path, config: dict[str, Any]) -> Any:
    """mlx-lm's own model with the folder's weights (named as the task model names them)."""
    model_class, args_class = get_model_classes(config)
    model = model_class(args_class.from_dict(config))
    weights = mx.load(str(folder / "model.safetensors"))
    assert isinstance(weights, dict)
    named = {k if k.startswith("model.") else f"model.{k}": v for k, v in weights.items()}
    model.load_weights(list(named.items()), strict=False)
    return model


def test_qwen3_reads_its_last_token_after_the_instruction(
    embedders: dict[str, MlxEmbedder], tiny_embedders_dir: Path
) -> None:
    folder = tiny_embedders_dir / "qwen3"
    model = _mlx_lm_model(folder, QWEN3)

    def reference(text: str) -> np.ndarray:
        ids = _ids(folder, text)
        assert ids[-1] == 0  # "<|endoftext|>", appended by the tokenizer
        states = model.model(mx.array([ids]))
        return _unit(np.array(states[0, -1], dtype=np.float64))

    embedder = embedders["qwen3"]
    queries = np.stack([embedder.embed_query(t) for t in TEXTS])
    documents = embedder.embed_documents(TEXTS)
    for i, text in enumerate(TEXTS):
        np.testing.assert_allclose(queries[i], reference(QUERY_INSTRUCTION + text), atol=1e-5)
        np.testing.assert_allclose(documents[i], reference(text), atol=1e-5)
    assert not np.allclose(queries, documents, atol=1e-3)  # the instruction is read


def test_embedding_gemma_attends_both_ways_in_its_windows(
    embedders: dict[str, MlxEmbedder], tiny_embedders_dir: Path
) -> None:
    folder = tiny_embedders_dir / "gemma"
    model = _mlx_lm_model(folder, {**GEMMA, "sliding_window_pattern": 3})
    dense = [mx.load(str(folder / f"{i}_Dense" / "model.safetensors")) for i in (2, 3)]
    reach = GEMMA["sliding_window"] // 2 + 1

    def reference(text: str, windowed: bool = True) -> np.ndarray:
        ids = mx.array([_ids(folder, text)])
        inner = model.model
        h = inner.embed_tokens(ids) * GEMMA["hidden_size"] ** 0.5
        n = ids.shape[1]
        near = mx.abs(mx.arange(n)[:, None] - mx.arange(n)[None, :]) < reach
        everywhere = mx.ones((n, n), dtype=mx.bool_)
        for layer, kind in zip(inner.layers, GEMMA["layer_types"], strict=True):
            sliding = kind == "sliding_attention" and windowed
            h = layer(h, near if sliding else everywhere, None)
        pooled = np.array(inner.norm(h)[0], dtype=np.float64).mean(axis=0)
        for step in dense:
            assert isinstance(step, dict)
            pooled = np.array(step["linear.weight"], dtype=np.float64) @ pooled
        return _unit(pooled)

    embedder = embedders["gemma"]
    queries = np.stack([embedder.embed_query(t) for t in TEXTS[:3]])
    documents = embedder.embed_documents(TEXTS[:3])
    assert documents.shape == (3, 48)
    for i, text in enumerate(TEXTS[:3]):
        np.testing.assert_allclose(queries[i], reference(GEMMA_QUERY + text), atol=1e-5)
        np.testing.assert_allclose(documents[i], reference(GEMMA_DOCUMENT + text), atol=1e-5)
    # The control: the window changes a long text's vector, so the check above sees it.
    long_text = GEMMA_DOCUMENT + TEXTS[2]
    assert not np.allclose(reference(long_text), reference(long_text, windowed=False), atol=1e-3)


def _layer_norm(x: np.ndarray, w: dict[str, np.ndarray], name: str) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + BERT["layer_norm_eps"]) * w[name + ".weight"] + w[
        name + ".bias"
    ]


def _bert_reference(w: dict[str, np.ndarray], ids: list[int]) -> np.ndarray:
    """BertModel's last hidden state at the first token, in float64 numpy."""
    heads = BERT["num_attention_heads"]
    x = w["embeddings.word_embeddings.weight"][ids]
    x = x + w["embeddings.position_embeddings.weight"][: len(ids)]
    x = _layer_norm(x + w["embeddings.token_type_embeddings.weight"][0], w, "embeddings.LayerNorm")
    erf = np.vectorize(math.erf)
    for i in range(BERT["num_hidden_layers"]):
        p = f"encoder.layer.{i}."

        def linear(v: np.ndarray, name: str, p: str = p) -> np.ndarray:
            return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]

        q, k, v = (
            linear(x, f"attention.self.{n}").reshape(len(ids), heads, -1).transpose(1, 0, 2)
            for n in ("query", "key", "value")
        )
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        context = (weights / weights.sum(-1, keepdims=True)) @ v
        context = context.transpose(1, 0, 2).reshape(len(ids), -1)
        x = _layer_norm(
            x + linear(context, "attention.output.dense"), w, p + "attention.output.LayerNorm"
        )
        up = linear(x, "intermediate.dense")
        x = _layer_norm(
            x + linear(0.5 * up * (1 + erf(up / math.sqrt(2))), "output.dense"),
            w,
            p + "output.LayerNorm",
        )
    return _unit(x[0])


def test_bge_reads_its_first_token_of_a_bert(
    embedders: dict[str, MlxEmbedder], tiny_embedders_dir: Path
) -> None:
    folder = tiny_embedders_dir / "bge"
    loaded = mx.load(str(folder / "model.safetensors"))
    assert isinstance(loaded, dict)
    w = {k: np.array(v, dtype=np.float64) for k, v in loaded.items()}
    limit = json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"]
    long_text = " ".join(TEXTS[:3] * 4)  # over the limit: cut, its [SEP] kept
    texts = [*TEXTS, long_text]
    vectors = embedders["bge"].embed_documents(texts)
    for i, text in enumerate(texts):
        ids = _ids(folder, text, limit)
        np.testing.assert_allclose(vectors[i], _bert_reference(w, ids), atol=1e-5)
    assert len(_ids(folder, long_text)) > limit


@pytest.mark.parametrize("name", ["qwen3", "gemma", "bge"])
def test_a_padded_batch_gives_each_texts_own_vector(
    embedders: dict[str, MlxEmbedder], name: str
) -> None:
    embedder = embedders[name]
    together = embedder.embed_documents(TEXTS)
    alone = np.stack([embedder.embed_documents([text])[0] for text in TEXTS])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)


def test_batches_go_shortest_first_within_their_bounds() -> None:
    assert batches([5, 1, 3]) == [[1, 2, 0]]
    # 2 x 2000 padded tokens fit in 4096, 3 x 2000 do not; a text over half of it goes alone.
    assert batches([2000, 2000, 10]) == [[2, 0], [1]]
    assert batches([3000, 3000]) == [[0], [1]]
    assert [len(b) for b in batches([1] * 130)] == [64, 64, 2]
