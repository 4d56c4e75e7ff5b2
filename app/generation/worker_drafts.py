"""The draft model the inference worker holds for its main model (worker thread only).

A request naming a draft model's folder gets it loaded once and set on the engine, which checks
that it shares the main model's tokenizer; later requests naming the same folder reuse it, one
naming another replaces it. A draft that cannot be loaded or is refused is not tried again for
this main model: the reply guesses from the conversation instead, and the person is told why
once. A new main model starts afresh (a draft must be checked against it again). A draft
loads under the same float32 policy as its main model ("never" keeps both as stored).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

_log = logging.getLogger(__name__)


class WorkerDrafts:
    """`load(path, cpu_float32)` loads a model folder (the worker thread's
    `inference.load_model`)."""

    def __init__(self, load: Callable[[Path, str], Any] | None = None) -> None:
        self._load = load
        self._policy = "auto"  # the main model's float32 policy (inference.cpu)
        self._path: Path | None = None
        self._weights_bytes = 0
        self._refused: set[Path] = set()

    @property
    def weights_bytes(self) -> int:
        """Memory the held draft model's weights take (0 without one)."""
        return self._weights_bytes

    def reset(self) -> None:
        """A new main model (or none): the draft goes with the old engine, refusals are
        forgotten."""
        self._release()
        self._refused.clear()

    def follow(self, cpu_float32: str) -> None:
        """Load drafts under the float32 policy the main model was loaded with."""
        self._policy = cpu_float32

    def prepare(self, engine: Any, main_id: str, path: Path | None) -> tuple[bool, str | None]:
        """Make `engine` draft with the model at `path` (None: no draft model). Returns whether
        it does, and a message for the person the first time the draft cannot be used."""
        if path is None or path in self._refused:
            return False, None
        if path == self._path:
            return True, None
        if self._path is not None:  # another draft: let the old one go before loading
            engine.set_draft_model(None)
            self._release()
        try:
            loaded = self._loader()(path, self._policy)
        except Exception as exc:
            return False, self._refuse(
                path,
                f"“{path.name}” could not be loaded as the draft model for “{main_id}”: "
                f"{_text(exc)}",
            )
        try:
            engine.set_draft_model(loaded)
        except Exception as exc:  # the tokenizers differ, or its caches cannot rewind
            return False, self._refuse(path, _text(exc))
        self._path, self._weights_bytes = path, int(getattr(loaded, "weights_bytes", 0))
        return True, None

    def _release(self) -> None:
        self._path, self._weights_bytes = None, 0

    def _refuse(self, path: Path, why: str) -> str:
        self._refused.add(path)
        _log.warning("The draft model at %s is not used: %s", path, why)
        return f"{why} This chat's replies guess ahead from the conversation instead."

    def _loader(self) -> Callable[[Path, str], Any]:
        if self._load is None:
            from inference import load_model  # on the worker thread: it loads MLX

            self._load = load_model
        return self._load


def _text(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if text.endswith((".", "!", "?")) else f"{text}."
