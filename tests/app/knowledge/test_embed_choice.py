"""Choosing the embedding model of knowledge folders: the preference and what it reads back, the
options (text search alone, the built-in model, the library's embedding models, each usable or
saying why not), the embedder each choice makes, and the library telling an embedding model
from a chat model, copying its step folders in and never offering it to chat."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import app.library.entries as library
from app.knowledge import embedder as embedder_registry
from app.knowledge.builtin_embedder import BUILTIN_NAME
from app.knowledge.embedder_choice import (
    DEFAULT_CHOICE,
    EmbedderChoice,
    EmbedderKind,
    PreferredEmbedder,
    embedder_options,
    make_embedder,
)
from app.knowledge.index import KnowledgeIndex
from app.knowledge.records import KnowledgeError
from app.knowledge.worker_embedder import WorkerEmbedder
from app.library.embedded_model import (
    EMBEDDER_NAME,
    EMBEDDER_TOKENIZER,
    EMBEDDER_WEIGHTS,
    EmbedderFiles,
    embedded_embedder_files,
)
from app.library.install import import_folder
from app.settings import Preferences
from inference.loading.model_files import is_model_file


class _Worker:
    def __init__(self) -> None:
        self.calls = 0

    def call(self, fn: object) -> None:
        self.calls += 1

    def is_alive(self) -> bool:
        return True

    def on_worker_thread(self) -> bool:
        return False


def test_the_preference_reads_back_each_choice(tmp_path: Path) -> None:
    preferences = Preferences(tmp_path / "settings.ini")
    assert preferences.knowledge_embedder is None
    assert EmbedderChoice.from_setting(preferences.knowledge_embedder) == DEFAULT_CHOICE
    for choice in (
        EmbedderChoice(EmbedderKind.NONE),
        EmbedderChoice(EmbedderKind.BUILTIN),
        EmbedderChoice(EmbedderKind.LIBRARY, "Qwen3-Embedding-0.6B"),
    ):
        preferences.knowledge_embedder = choice.setting
        again = Preferences(tmp_path / "settings.ini")
        assert EmbedderChoice.from_setting(again.knowledge_embedder) == choice
    for unreadable in ("", "model:", "bm25", "model"):
        assert EmbedderChoice.from_setting(unreadable) == DEFAULT_CHOICE


def test_the_builtin_model_is_the_default_and_the_command_lines_too() -> None:
    assert EmbedderChoice(EmbedderKind.BUILTIN) == DEFAULT_CHOICE
    assert embedder_registry.DEFAULT_EMBEDDER == BUILTIN_NAME
    made = embedder_registry.EMBEDDERS[BUILTIN_NAME]()
    assert made.model_id.startswith(EMBEDDER_NAME) and made.dimensions == 256


@pytest.fixture
def models(tmp_path: Path, tiny_embedders_dir: Path, llama_path: Path) -> Path:
    """A library with a chat model, a usable embedding model and a damaged one."""
    folder = tmp_path / "models"
    folder.mkdir()
    shutil.copytree(llama_path, folder / "tiny-chat")
    shutil.copytree(tiny_embedders_dir / "qwen3", folder / "tiny-qwen3-embedding")
    broken = shutil.copytree(tiny_embedders_dir / "bge", folder / "broken-bge")
    pooling = broken / "1_Pooling" / "config.json"
    pooling.write_text(json.dumps({"pooling_mode_max_tokens": True}))
    return folder


def test_options_list_the_librarys_embedding_models_and_what_keeps_one_out(
    models: Path,
) -> None:
    options = {option.choice.setting: option for option in embedder_options(models)}
    assert list(options) == ["none", "builtin", "model:broken-bge", "model:tiny-qwen3-embedding"]
    assert options["builtin"].problem is None
    assert options["model:tiny-qwen3-embedding"].problem is None
    assert "pools by pooling_mode_max_tokens" in (options["model:broken-bge"].problem or "")
    # The chat side: an embedding model is never loadable as a chat model.
    infos = {info.id: info for info in library.list_models(models)}
    assert not infos["tiny-chat"].embedding and infos["tiny-chat"].problem is None
    assert infos["tiny-qwen3-embedding"].embedding
    assert infos["tiny-qwen3-embedding"].problem == library.EMBEDDING_ONLY


def test_each_choice_makes_its_embedder_or_says_why_not(models: Path) -> None:
    assert make_embedder(EmbedderChoice(EmbedderKind.NONE), models, None) is None
    builtin = make_embedder(EmbedderChoice(EmbedderKind.BUILTIN), models, None)
    assert builtin is not None and builtin.model_id.startswith(EMBEDDER_NAME)
    chosen = EmbedderChoice(EmbedderKind.LIBRARY, "tiny-qwen3-embedding")
    assert isinstance(make_embedder(chosen, models, _Worker()), WorkerEmbedder)
    with pytest.raises(KnowledgeError, match="needs the inference worker"):
        make_embedder(chosen, models, None)
    with pytest.raises(KnowledgeError, match=r"cannot embed: .*pools by"):
        make_embedder(EmbedderChoice(EmbedderKind.LIBRARY, "broken-bge"), models, _Worker())
    with pytest.raises(KnowledgeError, match="embedding model is gone"):
        make_embedder(EmbedderChoice(EmbedderKind.LIBRARY, "deleted"), models, _Worker())


def test_the_preferred_embedder_is_kept_while_the_preference_holds(models: Path) -> None:
    setting = ["none"]
    worker = _Worker()
    preferred = PreferredEmbedder(lambda: setting[0], models, worker)
    assert preferred() is None and preferred.problem is None
    setting[0] = "builtin"
    builtin = preferred()
    assert builtin is not None and preferred() is builtin  # made once
    setting[0] = "model:tiny-qwen3-embedding"
    library_model = preferred()
    assert isinstance(library_model, WorkerEmbedder) and preferred() is library_model
    setting[0] = "model:deleted"
    assert preferred() is None and "gone" in (preferred.problem or "")
    assert worker.calls == 1  # the library model was released on the worker
    setting[0] = "builtin"
    assert preferred() is not None and preferred.problem is None


def test_a_missing_or_damaged_builtin_model_is_a_refusal_not_a_crash(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    installed = embedded_embedder_files()
    assert installed is not None
    # A frozen bundle's copy comes first: here a damaged one.
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    bundled = tmp_path / "wordllama" / EMBEDDER_WEIGHTS
    bundled.parent.mkdir(parents=True)
    bundled.write_bytes(installed.weights.read_bytes()[:1000])
    shutil.copytree(installed.tokenizer.parent, tmp_path / "wordllama" / "tokenizers")
    assert embedded_embedder_files() == EmbedderFiles(
        bundled, tmp_path / "wordllama" / EMBEDDER_TOKENIZER
    )
    with pytest.raises(
        KnowledgeError, match=r"cannot be used: l2_supercat_256\.safetensors .*damaged"
    ):
        make_embedder(EmbedderChoice(EmbedderKind.BUILTIN), tmp_path, None)
    monkeypatch.setattr("app.knowledge.builtin_embedder.embedded_embedder_files", lambda: None)
    with pytest.raises(KnowledgeError, match="not installed"):
        make_embedder(EmbedderChoice(EmbedderKind.BUILTIN), tmp_path, None)


def test_an_embedding_folder_joins_the_library_with_its_steps(
    tmp_path: Path, tiny_embedders_dir: Path
) -> None:
    assert is_model_file("1_Pooling/config.json") and is_model_file("2_Dense/model.safetensors")
    assert not is_model_file("docs/tokenizer.json") and not is_model_file("a/1_Pooling/config.json")
    models = tmp_path / "models"
    models.mkdir()
    entry = import_folder(tiny_embedders_dir / "gemma", models)  # checked in a child process
    assert (entry / "2_Dense" / "model.safetensors").is_file()
    assert (entry / "1_Pooling" / "config.json").is_file()
    (info,) = library.list_models(models)
    assert info.embedding and info.problem == library.EMBEDDING_ONLY


def test_the_builtin_model_gives_an_index_its_vectors(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "cats.txt").write_text("The cat sat on the windowsill, purring in the sun.\n")
    (folder / "money.txt").write_text("Compound interest makes savings grow year after year.\n")
    embedder = make_embedder(EmbedderChoice(EmbedderKind.BUILTIN), tmp_path, None)
    assert embedder is not None
    with KnowledgeIndex.open(tmp_path / "knowledge.db") as index:
        index.add("notes", folder)
        report = index.sync("notes", embedder=embedder)
        assert report.embedded == 2
        assert index.status("notes").collection.embedding_model == embedder.model_id
        # No word in common with its answer: only the vectors can find it.
        (hit, *_) = index.search(["notes"], "kitten", 2, embedder=embedder)
    assert hit.path.endswith("cats.txt")
    assert np.isclose(np.linalg.norm(embedder.embed_query("kitten")), 1.0)
