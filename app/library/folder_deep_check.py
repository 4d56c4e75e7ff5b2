"""The deep check of a model folder before it joins the library, run in a child process.

`inference.loading.folder_check` reads everything a load would (headers, config, tokenizer, chat
template) with native readers that a hostile file can crash or hang; in a child the worst such a
file can do is fail its own import.
"""

from __future__ import annotations

import threading
from pathlib import Path

from app.library.isolated import run_isolated
from app.library.model_check import Cancelled, LibraryError
from inference.embedding.folder import is_embedding_folder

# Reading a big tokenizer and building a large model lazily take seconds; minutes mean a hang.
CHECK_LIMIT_S = 300.0
_MODEL_CHECK = "inference.loading.folder_check:check_model_folder"
_EMBEDDING_CHECK = "inference.embedding.encoder:check_embedding_folder"


def check_model_folder(folder: Path, cancel: threading.Event | None = None) -> None:
    """Raise LibraryError naming what is wrong with the folder, or Cancelled on `cancel`. An
    embedding model's folder is checked as one (it has no chat template, and may be a BERT)."""
    run_isolated(
        _EMBEDDING_CHECK if is_embedding_folder(folder) else _MODEL_CHECK,
        folder,
        label=folder.name,
        failure=LibraryError,
        cancelled=Cancelled,
        cancel=cancel,
        timeout_s=CHECK_LIMIT_S,
    )
