"""A library embedding model runs on the inference worker for the threads that index and search:
its vectors are the model's own, handed over a few texts per worker job (so a reply asked for
meanwhile waits for one small job at most), never waited for on the GUI thread, run at once by a
job of the worker's own, and a model that cannot load or a worker that has stopped is a clear
refusal rather than a hang."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.generation.worker import InferenceWorker
from app.knowledge.records import KnowledgeError
from app.knowledge.worker_embedder import TEXTS_PER_JOB, WorkerEmbedder
from inference.embedding.encoder import load_embedder
from inference.embedding.folder import embedding_model_id, read_embedding_folder

TEXTS = [f"passage {i}: the cat sat on the mat number {i}" for i in range(TEXTS_PER_JOB * 2 + 3)]


def _off_the_gui_thread[T](work: Callable[[], T]) -> T:
    """`work()` on a thread of its own, as the index runs it."""
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(_outcome(work)))
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), "the call hung"
    if isinstance(result[0], BaseException):
        raise result[0]
    return result[0]


def _outcome(work: Callable[[], Any]) -> Any:
    try:
        return work()
    except Exception as error:
        return error


def test_vectors_come_from_the_worker_equal_to_the_models_own(
    qtbot: Any, tiny_embedders_dir: Path
) -> None:
    folder = tiny_embedders_dir / "qwen3"
    worker = InferenceWorker()
    try:
        embedder = WorkerEmbedder(worker, folder)
        assert embedder.model_id == embedding_model_id(read_embedding_folder(folder))
        assert embedder.dimensions == 64
        documents = _off_the_gui_thread(lambda: embedder.embed_documents(TEXTS))
        query = _off_the_gui_thread(lambda: embedder.embed_query("where is the cat?"))
        with pytest.raises(RuntimeError, match="not on the GUI thread"):
            embedder.embed_query("on the GUI thread")
        # A job of the worker's own embeds at once rather than waiting for itself.
        inside: list[np.ndarray] = []
        worker.call(lambda _engine: inside.append(embedder.embed_query("where is the cat?")))
        qtbot.waitUntil(lambda: bool(inside), timeout=20_000)
        embedder.close()
    finally:
        worker.shutdown()
    reference = load_embedder(folder)
    np.testing.assert_allclose(documents, reference.embed_documents(TEXTS), atol=1e-6)
    np.testing.assert_allclose(query, reference.embed_query("where is the cat?"), atol=1e-6)
    np.testing.assert_allclose(inside[0], query, atol=1e-6)


class _Queue:
    """A worker stand-in that runs each job on a thread of its own, counting them."""

    def __init__(self, alive: bool = True) -> None:
        self.jobs = 0
        self.alive = alive

    def call(self, fn: Callable[[Any], Any]) -> None:
        self.jobs += 1
        if self.alive:
            threading.Thread(target=fn, args=(None,)).start()

    def is_alive(self) -> bool:
        return self.alive

    def on_worker_thread(self) -> bool:
        return False


def test_texts_go_a_few_per_job_and_failures_come_back_as_refusals(
    tiny_embedders_dir: Path, tmp_path: Path
) -> None:
    queue = _Queue()
    embedder = WorkerEmbedder(queue, tiny_embedders_dir / "bge")
    vectors = _off_the_gui_thread(lambda: embedder.embed_documents(TEXTS))
    assert vectors.shape == (len(TEXTS), 32)
    assert queue.jobs == 3  # 8 + 8 + 3 texts: a reply queued meanwhile waits for one at most
    stopped = WorkerEmbedder(_Queue(alive=False), tiny_embedders_dir / "bge")
    with pytest.raises(KnowledgeError, match="worker has stopped"):
        _off_the_gui_thread(lambda: stopped.embed_query("anything"))
    broken = shutil.copytree(tiny_embedders_dir / "bge", tmp_path / "bge")
    damaged = WorkerEmbedder(_Queue(), broken)
    (broken / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}")
    with pytest.raises(KnowledgeError, match=r"model\.safetensors in bge is damaged"):
        _off_the_gui_thread(lambda: damaged.embed_documents(["a text"]))
    (broken / "modules.json").unlink()
    with pytest.raises(KnowledgeError, match="cannot be used"):
        WorkerEmbedder(_Queue(), broken)
