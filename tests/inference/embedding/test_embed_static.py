"""The built-in embedder (WordLlama's 256-dimension table, read from the installed package's data
files) gives WordLlama's own vectors, ranks by meaning, and refuses damaged files by name."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.library.embedded_model import EMBEDDER_NAME, EmbedderFiles, embedded_embedder_files
from inference.embedding.static_model import StaticEmbedder, load_static_embedder
from inference.errors import ModelLoadError

TEXTS = [
    "Hello world",
    "The quick brown fox jumps over the lazy dog. " * 40,
    "naïve café 東京 🎉 — ünïcödé",
    "def area(r):\n    return 3.14159 * r ** 2\n",
    " ",
]


@pytest.fixture(scope="module")
def files() -> EmbedderFiles:
    found = embedded_embedder_files()
    assert found is not None, "wordllama is installed by `make` (Makefile: WORDLLAMA)"
    return found


@pytest.fixture(scope="module")
def embedder(files: EmbedderFiles) -> StaticEmbedder:
    return load_static_embedder(files.weights, files.tokenizer, EMBEDDER_NAME)


def test_vectors_are_wordllamas_own(embedder: StaticEmbedder, files: EmbedderFiles) -> None:
    # WordLlama's own inference class over the same files (its loader would look for the
    # tokenizer in a folder the wheel does not have and try to download it).
    from safetensors import safe_open
    from tokenizers import Tokenizer
    from wordllama import WordLlamaInference

    with safe_open(str(files.weights), framework="np") as tensors:
        table = tensors.get_tensor("embedding.weight")
    theirs = WordLlamaInference(table, Tokenizer.from_file(str(files.tokenizer)))
    expected = np.asarray(theirs.embed(TEXTS, norm=True))
    mine = embedder.embed_documents(TEXTS)
    assert mine.dtype == np.float32 and mine.shape == (len(TEXTS), 256) == expected.shape
    np.testing.assert_allclose(mine, expected, rtol=0, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(mine, axis=1), 1.0, atol=1e-6)
    # A text of no tokens: WordLlama divides zero by zero; here it is a row of zeros, which
    # matches nothing rather than poisoning a search with NaN.
    with np.errstate(invalid="ignore"):
        assert np.isnan(theirs.embed([""], norm=True)).all()
    assert not embedder.embed_documents([""]).any()


def test_queries_find_the_passage_about_them(embedder: StaticEmbedder) -> None:
    passages = [
        "The cat sat on the windowsill, purring in the afternoon sun.",
        "Compound interest grows savings because interest is earned on interest.",
        "To replace a bicycle tyre, lever the old tyre off the rim and fit the new tube.",
    ]
    queries = ["my kitten likes sunny windows", "how do savings accounts grow", "fix a flat bike"]
    found = np.stack([embedder.embed_query(q) for q in queries])
    scores = found @ embedder.embed_documents(passages).T
    assert list(scores.argmax(axis=1)) == [0, 1, 2]


def test_the_model_id_names_the_table(embedder: StaticEmbedder, tmp_path: Path) -> None:
    assert embedder.model_id.startswith(EMBEDDER_NAME + "-")
    assert embedder.dimensions == 256
    # Another table (even one of the same shape) gives another id: its vectors are not these.
    from safetensors.numpy import save_file

    other = tmp_path / "other.safetensors"
    save_file({"embedding.weight": np.ones((32000, 4), dtype=np.float16)}, str(other))
    files = embedded_embedder_files()
    assert files is not None
    changed = load_static_embedder(other, files.tokenizer, EMBEDDER_NAME)
    assert changed.model_id != embedder.model_id and changed.dimensions == 4


def test_damaged_files_are_refused_by_name(files: EmbedderFiles, tmp_path: Path) -> None:
    cut = tmp_path / "l2_supercat_256.safetensors"
    cut.write_bytes(files.weights.read_bytes()[:4096])
    with pytest.raises(ModelLoadError, match=r"l2_supercat_256\.safetensors .*damaged"):
        load_static_embedder(cut, files.tokenizer, EMBEDDER_NAME)
    small = tmp_path / "small.safetensors"
    from safetensors.numpy import save_file

    save_file({"embedding.weight": np.ones((100, 8), dtype=np.float16)}, str(small))
    with pytest.raises(ModelLoadError, match="does not fit its tokenizer"):
        load_static_embedder(small, files.tokenizer, EMBEDDER_NAME)
    bad_tokenizer = tmp_path / "tokenizer.json"
    bad_tokenizer.write_text("{not json")
    with pytest.raises(ModelLoadError, match="could not be read"):
        load_static_embedder(files.weights, bad_tokenizer, EMBEDDER_NAME)
