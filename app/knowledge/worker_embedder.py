"""An embedding model of the library, run on the inference worker for the threads that index and
search (`Embedder`).

MLX arrays belong to the thread that made them, and every MLX job runs on the one inference
worker, queued between generations. So each call hands its texts to the worker a few at a time
(`TEXTS_PER_JOB`), one queued job after another, and waits for each answer: a reply the person
asks for meanwhile is queued behind at most one small job, and an index run that is cancelled
stops at its next batch. The model is loaded on the worker by the first job
(`inference.embedding.encoder`, imported there) and released by `close`. Its `model_id` and
`dimensions` come from the folder's files, read without MLX, so the index can tell which
vectors it has before the model is loaded.

A call on the worker thread itself (a job of its own) runs at once; a call on the GUI thread is
refused, since it would wait for a reply to finish.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from app.knowledge.records import KnowledgeError

# Texts per worker job: a few hundred milliseconds of a 0.6B model on a laptop's GPU at most.
TEXTS_PER_JOB = 8
_POLL_S = 0.25


class WorkerQueue(Protocol):
    """What this needs of the inference worker (`app.generation.worker.InferenceWorker`)."""

    def call(self, fn: Callable[[Any], Any]) -> None: ...
    def is_alive(self) -> bool: ...
    def on_worker_thread(self) -> bool: ...


class _Model(Protocol):
    """The loaded model (`inference.embedding.encoder.MlxEmbedder`), on the worker only."""

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]: ...
    def embed_query(self, text: str) -> NDArray[np.float32]: ...


class WorkerEmbedder:
    def __init__(self, worker: WorkerQueue, folder: Path) -> None:
        from inference.embedding.folder import embedding_model_id, read_embedding_folder
        from inference.errors import ModelLoadError

        try:
            spec = read_embedding_folder(folder)
            self._model_id = embedding_model_id(spec)
        except (ModelLoadError, OSError) as error:
            raise KnowledgeError(f"The embedding model cannot be used: {error}") from error
        self._dimensions = spec.dimensions
        self._worker = worker
        self._folder = folder
        self._model: _Model | None = None  # touched on the worker thread only

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        rows = [np.zeros((0, self._dimensions), dtype=np.float32)]
        for start in range(0, len(texts), TEXTS_PER_JOB):
            part = list(texts[start : start + TEXTS_PER_JOB])
            rows.append(self._on_worker(lambda model, part=part: model.embed_documents(part)))
        return np.concatenate(rows)

    def embed_query(self, text: str) -> NDArray[np.float32]:
        return self._on_worker(lambda model: model.embed_query(text))

    def close(self) -> None:
        """Release the model on the worker (a later call loads it again)."""
        self._worker.call(lambda _engine: self._release())

    def _release(self) -> None:
        self._model = None

    def _on_worker(self, work: Callable[[_Model], NDArray[np.float32]]) -> NDArray[np.float32]:
        if self._worker.on_worker_thread():
            return work(self._loaded())
        if threading.current_thread() is threading.main_thread():
            raise RuntimeError("Embedding waits for the inference worker: not on the GUI thread.")
        answer = _Answer()
        self._worker.call(lambda _engine: answer.run(lambda: work(self._loaded())))
        return answer.wait(self._worker)

    def _loaded(self) -> _Model:
        if self._model is None:
            from inference.embedding.encoder import load_embedder
            from inference.errors import ModelLoadError

            try:
                self._model = load_embedder(self._folder)
            except ModelLoadError as error:
                raise KnowledgeError(str(error)) from error
        return self._model


class _Answer:
    """One job's result or error, handed from the worker thread to the one waiting."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self._value: NDArray[np.float32] | None = None
        self._error: BaseException | None = None

    def run(self, work: Callable[[], NDArray[np.float32]]) -> None:
        try:
            self._value = work()
        except Exception as error:  # handed to the caller, who reports it
            self._error = error
        finally:
            self._done.set()

    def wait(self, worker: WorkerQueue) -> NDArray[np.float32]:
        while not self._done.wait(_POLL_S):
            if not worker.is_alive():
                raise KnowledgeError("The inference worker has stopped; nothing was embedded.")
        if self._error is not None:
            raise self._error
        assert self._value is not None
        return self._value
