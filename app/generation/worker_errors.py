"""The worker's failures as data: what kind of failure (`FailureKind`) and what the person is
told, built from the exception where it was caught, on the worker thread.

The kind is found by `isinstance` against inference's own error classes, imported here: they
load no MLX (`inference.errors`, and `inference.importing.model_folder` for a cancelled import),
so importing `app` still leaves MLX unloaded and the window shows before the model loads. The
GUI thread then matches a failure by its `kind`, never by a class name: an exception class that
only shares a name with one of inference's is a bug like any other. Anything that is not an
`InferenceError` is a bug, logged with its traceback.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import Enum, auto
from typing import Literal

from inference.errors import (
    ContextOverflowError,
    InferenceError,
    ModelLoadError,
    PromptError,
    SamplingError,
)
from inference.importing.model_folder import ImportCancelled

_log = logging.getLogger(__name__)


class FailureKind(Enum):
    """Why work asked of the worker (or of a remote backend standing in for it) failed."""

    CONTEXT_FULL = auto()  # the chat outgrew the context and its overflow policy is "stop"
    INVALID_REQUEST = auto()  # a prompt or sampling settings the engine refused
    LOAD_FAILED = auto()  # a model folder or file could not be loaded or imported
    CANCELLED = auto()  # the person stopped it (an import)
    REFUSED = auto()  # any other expected failure: its message says what was wrong
    NO_MODEL = auto()  # a generation asked while no model is loaded
    INTERRUPTED = auto()  # a remote reply cut off midway: its text so far is good
    BUG = auto()  # anything else: its traceback is in the log


@dataclass(frozen=True)
class WorkerFailure:
    """A failure as the worker's signals carry it: `message` is for the person; `request_id`
    is the generation it ended (None for a model load or a call)."""

    kind: FailureKind
    message: str
    request_id: int | None = None

    @property
    def invalid_request(self) -> bool:
        """The request itself was at fault, not the model: a context too small for it too."""
        return self.kind in (FailureKind.INVALID_REQUEST, FailureKind.CONTEXT_FULL)

    @property
    def reply_status(self) -> Literal["interrupted", "error"]:
        """The stored status of a reply this ended: only a cut-off one's text so far is good."""
        return "interrupted" if self.kind is FailureKind.INTERRUPTED else "error"


# Most specific first: a ContextOverflowError is a PromptError, an ImportCancelled a
# ModelLoadError, and every one of them an InferenceError.
_KINDS: tuple[tuple[type[InferenceError], FailureKind], ...] = (
    (ContextOverflowError, FailureKind.CONTEXT_FULL),
    (PromptError, FailureKind.INVALID_REQUEST),
    (SamplingError, FailureKind.INVALID_REQUEST),
    (ImportCancelled, FailureKind.CANCELLED),
    (ModelLoadError, FailureKind.LOAD_FAILED),
    (InferenceError, FailureKind.REFUSED),
)


def failure_of(exc: BaseException, request_id: int | None = None) -> WorkerFailure:
    """`exc` as a failure: its own text for the person (its type's name when it has none)."""
    text = str(exc).strip() or type(exc).__name__
    kind = next((kind for error, kind in _KINDS if isinstance(exc, error)), FailureKind.BUG)
    if kind is FailureKind.BUG:
        _log.error("Unexpected error (the person is told: %s)", text, exc_info=exc)
    return WorkerFailure(kind, text, request_id)
