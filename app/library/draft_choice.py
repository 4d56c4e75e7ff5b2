"""Which draft model a chat's replies guess ahead with, and the folder it is loaded from.

A chat names its own in its params ("draft_model": a library folder name, with speculation
"draft"; None when the person chose prompt lookup); a chat that has not chosen uses the default
Preferences keeps for its model. With speculation "off" no model drafts. Folder names are
matched against the library as a loaded model's id is (the model folder's name), so the worker
is handed a path, never a name it would have to look up.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from app.settings import Preferences

# The conversation param naming the chat's own draft model.
DRAFT_MODEL_KEY = "draft_model"


def chosen_draft(
    params: Mapping[str, Any], model_id: str | None, preferences: Preferences
) -> str | None:
    """The draft model (folder name) for a chat with `params` on `model_id`, or None."""
    if params.get("speculation") == "off":
        return None
    if DRAFT_MODEL_KEY in params:
        own = params[DRAFT_MODEL_KEY]
        return own if isinstance(own, str) and own else None
    return preferences.draft_model_for(model_id) if model_id else None


def library_path(models_dir: Path, model_id: str) -> Path | None:
    """Where the library model `model_id` lives (a linked entry's original), or None when the
    library has no such model. An entry with a problem is still returned: loading it says why."""
    from app.library.entries import list_models  # slow to import: not needed before the first reply

    return next((m.path for m in list_models(models_dir) if m.path.name == model_id), None)


def with_draft(params: Mapping[str, Any], draft: Path | None) -> dict[str, Any]:
    """A reply's params: speculation "draft" naming `draft` when there is one; otherwise a
    "draft" speculation with no model to draft with guesses from the conversation."""
    if draft is not None:
        return {**params, "speculation": "draft", DRAFT_MODEL_KEY: draft.name}
    if params.get("speculation") == "draft":
        return {**params, "speculation": "prompt_lookup"}
    return dict(params)
