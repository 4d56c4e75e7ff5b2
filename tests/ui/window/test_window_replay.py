"""A reply's Details and Replay in the window, with the tiny llama: the Details button opens
what the reply recorded, Replay says it is identical and leaves the tree alone; after the
weights changed it says where the tokens part and what changed, and Keep as Sibling adds the
replayed reply beside the first. Screenshots, light and dark, go to tests/screenshots/."""

from __future__ import annotations

import shutil
from pathlib import Path

from PySide6.QtWidgets import QToolButton

from tests.tiny_models import build_model
from tests.ui.screenshots.test_screenshots import _save
from tests.ui.window_harness import SHORT, running_app, send_and_wait, set_params
from ui.chat.message_toolbar import DETAILS_BUTTON

GREEDY = {**SHORT, "max_tokens": 10, "seed": None, "speculation": "off"}


def _details_button(window, message_id: int) -> QToolButton:
    widget = window.chat_view.message_widget(str(message_id))
    assert widget is not None
    return next(b for b in widget.findChildren(QToolButton) if b.property(DETAILS_BUTTON))


def _shots(qtbot, dialog, window, name: str) -> None:
    for theme in ("light", "dark"):
        window.set_theme(theme)
        dialog.adjustSize()
        dialog.resize(max(dialog.width(), 780), max(dialog.height(), 440))
        qtbot.wait(50)  # the new palette and style sheet reach the dialog through events
        _save(dialog, f"{name}-{theme}")
    window.set_theme("light")


def test_details_replay_and_keeping_the_replay(qtbot, tmp_path: Path, llama_path: Path) -> None:
    model = Path(shutil.copytree(llama_path, tmp_path / "library" / "llama"))
    with running_app(qtbot, tmp_path / "data", model) as app:
        window, store = app.window, app.controller.store
        window.resize(1100, 760)
        cid = set_params(app, GREEDY)
        send_and_wait(qtbot, app, "the cat sat on the mat")
        reply = store.active_path(cid)[-1]
        assert reply.provenance["token_ids"]

        _details_button(window, reply.id).click()
        dialog = window.replay.dialog
        assert dialog is not None and dialog.replay_button.isEnabled()
        shown = {label: value for label, value in dialog.details.rows}
        assert shown["Model"] == "llama" and shown["Seed"].startswith("none")
        with qtbot.waitSignal(app.controller.replays.finished, timeout=60000):
            dialog.replay_button.click()
        assert dialog.outcome is not None and dialog.outcome.identical
        assert "Identical" in dialog.replay_result.text() and not dialog.keep_button.isVisible()
        assert len(store.all_messages(cid)) == 2  # a replay writes nothing
        _shots(qtbot, dialog, window, "reply-details-identical")

        other = build_model("llama", tmp_path / "other", seed=7)
        shutil.copy(other / "model.safetensors", model / "model.safetensors")
        with qtbot.waitSignal(app.controller.replays.finished, timeout=60000):
            dialog.replay_button.click()
        outcome = dialog.outcome
        assert outcome is not None and not outcome.identical
        assert [c.key for c in outcome.changed] == ["model.weights_digest"]
        assert "the weights" in dialog.replay_result.text() and dialog.keep_button.isVisible()
        _shots(qtbot, dialog, window, "reply-details-different")

        dialog.keep_button.click()
        siblings, _ = store.siblings(reply.id)
        assert len(siblings) == 2 and store.active_path(cid)[-1].id != reply.id
        kept = store.active_path(cid)[-1]
        assert kept.provenance["token_ids"] == outcome.provenance["token_ids"]
        assert kept.content == outcome.text
