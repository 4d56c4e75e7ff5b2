"""A chat's reasoning choices (Think on/off, effort) as chat-template keyword arguments.

The choices live in the conversation's params under `THINK` (true/false) and `EFFORT` ("low",
"medium", "high"); the loaded model's info says which template variables carry them
(`think_switch`, `effort_switch`, found in its template's source on load). A model whose
template reads neither gets no keyword arguments, so it renders exactly as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.generation.worker_events import ModelLoaded

THINK = "think"
EFFORT = "reasoning_effort"
EFFORT_LEVELS = ("low", "medium", "high")
DEFAULT_EFFORT = "medium"


def template_kwargs(model_info: ModelLoaded | None, params: Mapping[str, Any]) -> dict:
    """The keyword arguments for the model's chat template from a chat's params. Thinking is
    on unless the chat turned it off, as reasoning models' own templates default to."""
    kwargs: dict[str, Any] = {}
    if model_info is None:
        return kwargs
    think_switch, effort_switch = model_info.think_switch, model_info.effort_switch
    if think_switch:
        kwargs[think_switch] = bool(params.get(THINK, True))
    if effort_switch:
        effort = params.get(EFFORT)
        kwargs[effort_switch] = effort if effort in EFFORT_LEVELS else DEFAULT_EFFORT
    return kwargs
