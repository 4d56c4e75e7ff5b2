"""The built-in embedding model: WordLlama's 256-dimension token table, installed with the app
(`app.library.embedded_model` finds its files), so knowledge folders have vectors on first start
with nothing downloaded. It is numpy work, no MLX: it runs on the index's own thread and on
whichever thread searches, and loads in a fraction of a second
(`inference.embedding.static_model`, MLX-free, imported when it is first loaded).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.knowledge.records import KnowledgeError
from app.library.embedded_model import EMBEDDER_NAME, embedded_embedder_files

if TYPE_CHECKING:
    from inference.embedding.static_model import StaticEmbedder

BUILTIN_NAME = "builtin"


def load_builtin_embedder() -> StaticEmbedder:
    """The built-in embedder. Raises KnowledgeError when this install lacks its files or they
    are damaged (search then goes on with BM25 alone)."""
    from inference.embedding.static_model import load_static_embedder
    from inference.errors import ModelLoadError

    files = embedded_embedder_files()
    if files is None:
        raise KnowledgeError(
            "The built-in embedding model is not installed (the wordllama package's data files "
            "are missing); knowledge search uses its text index alone."
        )
    try:
        return load_static_embedder(files.weights, files.tokenizer, EMBEDDER_NAME)
    except ModelLoadError as error:
        raise KnowledgeError(f"The built-in embedding model cannot be used: {error}") from error
