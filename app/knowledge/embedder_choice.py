"""Which embedding model knowledge folders use: the preference (`Preferences.knowledge_embedder`),
the options a person picks from, and the `Embedder` a choice makes.

Three kinds: text search alone (BM25, no vectors), the built-in model (WordLlama, numpy, shipped
with the app), or an embedding model of the library (downloaded like any model, run on MLX on
the inference worker: `app.knowledge.worker_embedder`). The default is `DEFAULT_CHOICE`, the
one the offline evaluation supports (`bench/knowledge_quality.py`; the README has its figures).
Changing the choice makes the index embed every folder's chunks again in the background
(`app.knowledge.embedding_run`); search goes on with BM25 and the vectors made so far.
`PreferredEmbedder` is what the app hands its index runs and searches: the preference's
embedder, kept while the preference holds.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from app.knowledge.builtin_embedder import load_builtin_embedder
from app.knowledge.embedder import Embedder
from app.knowledge.records import KnowledgeError
from app.knowledge.worker_embedder import WorkerEmbedder, WorkerQueue
from app.library.embedded_model import embedded_embedder_files
from app.library.entries import EMBEDDING_ONLY, find_model, list_models
from app.library.model_check import LibraryError

_LIBRARY_PREFIX = "model:"
_log = logging.getLogger(__name__)


class EmbedderKind(StrEnum):
    NONE = "none"  # BM25 alone
    BUILTIN = "builtin"
    LIBRARY = "model"


@dataclass(frozen=True)
class EmbedderChoice:
    kind: EmbedderKind
    model_id: str = ""  # the library entry's id, for LIBRARY

    @property
    def setting(self) -> str:
        """The preference's text: "none", "builtin" or "model:<library id>"."""
        if self.kind is EmbedderKind.LIBRARY:
            return _LIBRARY_PREFIX + self.model_id
        return self.kind.value

    @classmethod
    def from_setting(cls, text: str | None) -> EmbedderChoice:
        """The choice a preference holds; DEFAULT_CHOICE when it holds none (or no longer
        reads as one)."""
        if text is not None and text.startswith(_LIBRARY_PREFIX) and text != _LIBRARY_PREFIX:
            return cls(EmbedderKind.LIBRARY, text.removeprefix(_LIBRARY_PREFIX))
        if text in (EmbedderKind.NONE, EmbedderKind.BUILTIN):
            return cls(EmbedderKind(text))
        return DEFAULT_CHOICE


# What the evaluation supports (bench/knowledge_quality.py; figures in the README).
DEFAULT_CHOICE = EmbedderChoice(EmbedderKind.BUILTIN)


@dataclass(frozen=True)
class EmbedderOption:
    """One line of the choice: what it is called, and why it cannot be chosen (None: it can)."""

    choice: EmbedderChoice
    label: str
    problem: str | None = None


def embedder_options(models_dir: Path) -> list[EmbedderOption]:
    """Text search alone, the built-in model, then each embedding model of the library."""
    builtin = None if embedded_embedder_files() else "not installed with this copy of the app"
    options = [
        EmbedderOption(EmbedderChoice(EmbedderKind.NONE), "Text search only (BM25)"),
        EmbedderOption(
            EmbedderChoice(EmbedderKind.BUILTIN), "Built-in: WordLlama, 256 dimensions", builtin
        ),
    ]
    for info in list_models(models_dir):
        if info.embedding:
            problem = None if info.problem == EMBEDDING_ONLY else info.problem
            choice = EmbedderChoice(EmbedderKind.LIBRARY, info.id)
            options.append(EmbedderOption(choice, info.name, problem))
    return options


def make_embedder(
    choice: EmbedderChoice, models_dir: Path, worker: WorkerQueue | None
) -> Embedder | None:
    """The embedder of `choice` (None: BM25 alone). A library model needs the inference worker
    (`worker`); without one (the command line) it is refused. Raises KnowledgeError saying why
    a choice cannot be used: a model removed from the library, missing files."""
    if choice.kind is EmbedderKind.NONE:
        return None
    if choice.kind is EmbedderKind.BUILTIN:
        return load_builtin_embedder()
    try:
        info = find_model(models_dir, choice.model_id)
    except LibraryError as error:
        raise KnowledgeError(f"The embedding model is gone: {error}") from error
    if not info.embedding or info.problem != EMBEDDING_ONLY:
        reason = info.problem or "it is not an embedding model"
        raise KnowledgeError(f"{info.name} cannot embed: {reason}")
    if worker is None:
        raise KnowledgeError(f"{info.name} runs in the app only (it needs the inference worker).")
    return WorkerEmbedder(worker, info.path)


class PreferredEmbedder:
    """The embedder the preference names, for index runs and searches (`KnowledgeFolders`'
    `embedder`): made when first asked for and kept while the preference holds it, so a library
    model stays loaded on the worker between runs; made anew (the old one released) when the
    preference changes. A choice that cannot be used gives None (BM25 alone) and says why in
    `problem` until it can."""

    def __init__(
        self, setting: Callable[[], str | None], models_dir: Path, worker: WorkerQueue | None
    ) -> None:
        self._setting = setting
        self._models_dir = models_dir
        self._worker = worker
        self._choice: EmbedderChoice | None = None
        self._made: Embedder | None = None
        self.problem: str | None = None

    def __call__(self) -> Embedder | None:
        choice = EmbedderChoice.from_setting(self._setting())
        if choice != self._choice or self.problem is not None:
            self.close()
            try:
                self._made, self.problem = (
                    make_embedder(choice, self._models_dir, self._worker),
                    None,
                )
            except KnowledgeError as error:
                self._made, self.problem = None, str(error)
                _log.warning("Knowledge search uses BM25 alone: %s", error)
            self._choice = choice
        return self._made

    def close(self) -> None:
        """Release what the embedder holds (a library model, on the worker)."""
        if isinstance(self._made, WorkerEmbedder):
            self._made.close()
        self._made = None
