"""Exceptions from the engine turned into what the person is told, and recognised by kind.

An `inference` error is looked up in `sys.modules`, never imported: this also runs on the GUI
thread, which must not load MLX, and such an error can only exist once the worker has imported
`inference`. Anything that is not an `InferenceError` is a bug, logged with its traceback.
"""

from __future__ import annotations

import logging
import sys

_log = logging.getLogger(__name__)


def error_message(exc: BaseException) -> str:
    """A message for the person: the exception's own text, or its type when it has none."""
    text = str(exc).strip()
    if not text:
        text = type(exc).__name__
    if not _is_expected(exc):
        _log.error("Unexpected error (the person is told: %s)", text, exc_info=exc)
    return text


def is_invalid_request(exc: BaseException) -> bool:
    """A prompt or sampling settings the engine refused: the asker's fault, not the model's."""
    errors = sys.modules.get("inference.errors")
    return errors is not None and isinstance(exc, errors.PromptError | errors.SamplingError)


def _is_expected(exc: BaseException) -> bool:
    """An InferenceError says what went wrong in its message; anything else is a bug to log."""
    return is_error(exc, "InferenceError")


def is_error(exc: BaseException, name: str) -> bool:
    """Whether `exc` is `inference.errors.<name>`."""
    errors = sys.modules.get("inference.errors")
    return errors is not None and isinstance(exc, getattr(errors, name))
