"""The deep check of a model folder before it joins the library, run in a child process.

`inference.loading.folder_check` reads everything a load would (headers, config, tokenizer, chat
template) with native readers that a hostile file can crash or hang; in a child the worst such a
file can do is fail its own import.
"""

from __future__ import annotations

import threading
from pathlib import Path

from app.library.isolated import run_isolated
from app.library.model_check import Cancelled, LibraryError, read_json
from inference.speech.support import is_speech_config

# Reading a big tokenizer and building a large model lazily take seconds; minutes mean a hang.
CHECK_LIMIT_S = 300.0


def check_model_folder(folder: Path, cancel: threading.Event | None = None) -> None:
    """Raise LibraryError naming what is wrong with the folder, or Cancelled on `cancel`. A
    Whisper folder gets the speech model's checks (config and weights; no tokenizer)."""
    speech = is_speech_config(read_json(folder / "config.json") or {})
    run_isolated(
        "inference.speech.whisper:check_speech_folder"
        if speech
        else "inference.loading.folder_check:check_model_folder",
        folder,
        label=folder.name,
        failure=LibraryError,
        cancelled=Cancelled,
        cancel=cancel,
        timeout_s=CHECK_LIMIT_S,
    )
