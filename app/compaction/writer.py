"""Which model writes a summary: the one Preferences › Summaries names, while the library has
it, as a request for the worker (held beside the chat's model when both fit in memory, else
loaded in its place, and the chat's model loaded back afterwards); otherwise the chat's own,
which reads the covered path from its cache."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from app.generation.worker_requests import RequestModel

if TYPE_CHECKING:
    from app.settings import Preferences


def summary_writer(
    chosen: str | None,
    chat_model: str | None,
    models_dir: Path | None,
    preferences: Preferences,
    held: tuple[Path, ...],
) -> tuple[str | None, RequestModel | None] | None:
    """(the model id that writes, the request model when it is not the chat's own); None when
    `chosen` is not in the library any more. `held`: the main model's folder, to stay beside."""
    if chosen is None or chosen == chat_model or models_dir is None:
        return chat_model, None
    from app.library.cpu_weights import running_weights_bytes
    from app.library.entries import list_models  # file work: only when a model is chosen

    info = next((m for m in list_models(models_dir) if m.path.name == chosen), None)
    if info is None or info.problem is not None:
        return None
    weights = running_weights_bytes(info.weights_bytes, info.parameters, preferences.cpu_float32)
    return chosen, RequestModel(info.path, weights, held)
