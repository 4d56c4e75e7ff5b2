"""Choosing a draft model in the window: per chat in its settings, and per model in Preferences,
with the tiny llama and a draft of the same family (other weights, the same tokenizer) in the
library."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.paths import AppPaths
from tests.tiny_models import build_model
from tests.ui.window_harness import OFFSCREEN_NOISE, SHORT, running_app, send_and_wait
from ui.forms.draft_model_choice import NO_DRAFT_TEXT

pytestmark = [pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE), pytest.mark.usefixtures("free_drafts")]


@pytest.fixture
def data_dir(tmp_path: Path, llama_path: Path) -> Path:
    """A data folder whose library has the main model's draft (the main model is opened with
    --model, from outside the library)."""
    build_model("llama", AppPaths.resolve(tmp_path).models_dir / "llama-draft", seed=1)
    return tmp_path


def offered(box) -> list[str]:
    return [box.itemText(i) for i in range(box.count())]


def test_a_chat_chooses_its_draft_model_in_its_settings(
    qtbot, data_dir: Path, llama_path: Path
) -> None:
    with running_app(qtbot, data_dir, llama_path) as app:
        window = app.window
        cid = window.current_conversation_id
        app.controller.update_settings(cid, params=SHORT)
        dialog = window.open_settings()
        # Prompt lookup first, then the library's models but the chat's own.
        assert offered(dialog.draft_model) == [NO_DRAFT_TEXT, "llama-draft"]
        assert dialog.draft_model.chosen() is None
        dialog.draft_model.setCurrentIndex(1)
        dialog.draft_model.activated.emit(1)  # as a person's pick does
        dialog.accept()
        params = app.store.get_conversation(cid).params
        assert params["speculation"] == "draft" and params["draft_model"] == "llama-draft"

        send_and_wait(qtbot, app, "Tell me a story about Paris.")
        reply = app.store.active_path(cid)[-1]
        assert reply.params["draft_model"] == "llama-draft" and reply.stats["drafted_tokens"] > 0

        # Unticking "Draft ahead" turns speculation off and greys the row; the choice is kept.
        again = window.open_settings()
        assert again.draft_model.chosen() == "llama-draft" and again.draft_model.isEnabled()
        again.speculation.setChecked(False)
        assert not again.draft_model.isEnabled()
        again.accept()
        params = app.store.get_conversation(cid).params
        assert params["speculation"] == "off" and params["draft_model"] == "llama-draft"
        send_and_wait(qtbot, app, "And then?")
        assert app.store.active_path(cid)[-1].stats["drafted_tokens"] == 0

        # Back on, with prompt lookup chosen: no draft model.
        third = window.open_settings()
        third.speculation.setChecked(True)
        third.draft_model.setCurrentIndex(0)
        third.draft_model.activated.emit(0)
        third.accept()
        params = app.store.get_conversation(cid).params
        assert params["speculation"] == "prompt_lookup" and params["draft_model"] is None


def test_preferences_set_a_models_default_draft_which_chats_without_their_own_use(
    qtbot, data_dir: Path, llama_path: Path
) -> None:
    models_dir = AppPaths.resolve(data_dir).models_dir
    build_model("llama", models_dir / "llama-main")  # the model the defaults are set for
    with running_app(qtbot, data_dir, models_dir / "llama-main") as app:
        window = app.window
        preferences = window.open_preferences()
        drafts = preferences.model_defaults
        assert drafts.model.currentData() == "llama-main", "the loaded model first"
        assert offered(drafts.draft) == [NO_DRAFT_TEXT, "llama-draft"]
        drafts.draft.setCurrentIndex(1)
        drafts.draft.activated.emit(1)
        preferences.accept()
        assert app.controller.preferences.draft_model_for("llama-main") == "llama-draft"

        # A new chat shows its model's default, and its replies draft with it.
        window.new_chat()
        cid = window.current_conversation_id
        app.controller.update_settings(cid, params=SHORT)
        dialog = window.open_settings()
        assert dialog.draft_model.chosen() == "llama-draft"
        dialog.accept()
        assert "draft_model" not in app.store.get_conversation(cid).params, "no choice of its own"
        send_and_wait(qtbot, app, "Tell me a story about Paris.")
        reply = app.store.active_path(cid)[-1]
        assert reply.params["draft_model"] == "llama-draft" and reply.stats["drafted_tokens"] > 0

        # Cleared in Preferences, the default is gone for every chat without its own choice.
        preferences = window.open_preferences()
        preferences.model_defaults.draft.setCurrentIndex(0)
        preferences.model_defaults.draft.activated.emit(0)
        preferences.accept()
        assert app.controller.preferences.draft_model_for("llama-main") is None
        assert window.open_settings().draft_model.chosen() is None
