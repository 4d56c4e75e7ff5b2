"""One exception family for everything the engine refuses, so the app catches a single base class
and shows its message to the person."""

from __future__ import annotations


class InferenceError(Exception):
    """Base class: the message is written for the person using the app."""


class ModelLoadError(InferenceError):
    """A model folder or file could not be loaded or imported (missing, corrupt, unsupported)."""


class PromptError(InferenceError):
    """A request the engine cannot serve: empty, malformed, or longer than the context."""


class ContextOverflowError(PromptError):
    """The conversation does not fit the model's context and its overflow policy ("stop") may
    not leave earlier turns out: the app offers to continue in a new chat."""


class SamplingError(InferenceError):
    """Sampling settings out of range (e.g. `max_tokens` <= 0 or a negative temperature)."""
