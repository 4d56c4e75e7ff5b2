"""Compaction in the window (issue 47): *Summarise up to Here* on a message, the summary folded
under what it stands for, `‹ 2/2 ›` back to the full chat, the notice, the proposal, an edit, the
branch map's line, and `/compact` typed in the message box. The states are saved as pictures
(light and dark) into tests/screenshots/ for a person to look at."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QToolButton, QWidget

from app.compaction.events import SummaryProposal
from tests.ui.screenshots.test_screenshots import _save
from tests.ui.window_harness import (
    OFFSCREEN_NOISE,
    ScriptedEngine,
    running_app,
    scripted_worker,
    send_and_wait,
)
from ui.chat.message_toolbar import SUMMARISE_BUTTON
from ui.chat.summary_message import SummaryWidget
from ui.window.compaction_features import COMPARE_TEXT

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)

QUESTIONS = [
    "I'm planning three days in Porto in May. Where should I stay?",
    "What should we eat there?",
    "Is a day trip to the Douro valley worth it?",
]
REPLIES = [
    "Stay in **Ribeira** for the river views, or **Cedofeita** for quieter streets and cafés.",
    "Try a *francesinha*, grilled sardines, and pastéis de nata from Manteigaria.",
    "Yes: a train along the Douro to Pinhão takes 2.5 hours, with port tastings at the quintas.",
]
SUMMARY = (
    "- Three days in **Porto** in May.\n"
    "- Stay: Ribeira (river views) or Cedofeita (quieter).\n"
    "- Food: francesinha, grilled sardines, pastéis de nata (Manteigaria)."
)
AFTER = "Day one: Ribeira and the Dom Luís I bridge at sunset; day two: the Douro by train."
FULL = "Day one: Ribeira and a francesinha; day two: the Douro train to Pinhão; day three: Foz."


def _shot(qtbot, widget: QWidget, name: str) -> None:
    qtbot.wait(50)  # laid out and painted as a person sees it
    _save(widget, name)


def test_summarise_up_to_here_in_the_window(qtbot, tmp_path: Path) -> None:
    engine = ScriptedEngine(
        [*REPLIES, SUMMARY, AFTER, FULL, SUMMARY], chars_per_step=12, step_s=0.002
    )
    with running_app(qtbot, tmp_path, tmp_path / "demo-model", scripted_worker(engine)) as app:
        window, ctl = app.window, app.controller
        window.resize(1100, 760)
        for question in QUESTIONS:
            send_and_wait(qtbot, app, question)
        cid = window.current_conversation_id
        assert cid is not None
        full = ctl.store.active_path(cid)
        last = window.chat_view.message_widget(str(full[-1].id))
        assert last is not None
        button = next(b for b in last.findChildren(QToolButton) if b.property(SUMMARISE_BUTTON))
        with qtbot.waitSignal(ctl.compaction.compacted, timeout=10000):
            button.click()
        qtbot.waitUntil(lambda: not ctl.is_busy(), timeout=10000)

        # The summary's own prompt: the covered path, then the request (the model's cache).
        assert [m["content"] for m in engine.prompts[-1][:2]] == [QUESTIONS[0], REPLIES[0]]
        branch = ctl.store.active_path(cid)
        summary = window.chat_view.message_widget(str(branch[0].id))
        assert isinstance(summary, SummaryWidget) and not summary.is_open
        line = summary.header.label.text()
        assert (
            line.startswith("Summary of 2 earlier messages · ") and "4 later messages kept" in line
        )
        assert summary.nav is not None and summary.nav.isVisible()
        assert "Summarised 2 earlier messages" in window.banner.text
        _shot(qtbot, window, "summary-folded-light")
        window.set_theme("dark")
        _shot(qtbot, window, "summary-folded-dark")
        window.set_theme("light")

        summary.header.toggle.click()
        assert summary.is_open and "francesinha" in summary.body.toPlainText()
        window.set_theme("dark")
        _shot(qtbot, window, "summary-open-dark")
        window.set_theme("light")
        _shot(qtbot, window, "summary-open-light")

        # The branch map names what the compacted branch summarises.
        window.compare.map_action.trigger()
        tree = window.compare.dock.tree
        qtbot.waitUntil(lambda: tree.topLevelItemCount() == 2, timeout=10000)
        label = tree.topLevelItem(1).text(0)
        assert label.startswith("● 2/2 · Summary of 2 messages, “I'm planning three days") and (
            "tokens" in label
        )
        window.resizeDocks([window.compare.dock], [560], Qt.Orientation.Horizontal)
        _shot(qtbot, window, "branch-map-summary-light")
        window.set_theme("dark")
        _shot(qtbot, window, "branch-map-summary-dark")
        window.set_theme("light")
        window.compare.map_action.trigger()

        # A follow-up on the compacted branch; its stats say what the summary stands for.
        send_and_wait(qtbot, app, "Plan the days for us")
        reply = ctl.store.active_path(cid)[-1]
        assert reply.stats["summary_of_tokens"] > 0
        widget = window.chat_view.message_widget(str(reply.id))
        assert widget is not None and widget.stats_label is not None
        assert "a summary stands for" in widget.stats_label.text()

        # The same question asked of the full chat, both answers side by side.
        menu = widget.regenerate_button.menu() if widget.regenerate_button else None
        compare = next(a for a in menu.actions() if a.text() == COMPARE_TEXT) if menu else None
        assert compare is not None
        with qtbot.waitSignal(ctl.compaction.compared, timeout=10000):
            compare.trigger()
        dialog = window.compaction.diff
        assert dialog is not None and dialog.windowTitle() == "With and Without the Summary"
        assert [p.toPlainText() for p in dialog.panes] == [FULL, AFTER]
        dialog.resize(900, 420)
        _shot(qtbot, dialog, "compare-with-full-chat-light")
        dialog.close()

        # ‹ 1/2 › is the full chat, as it was, with the question the comparison asked it.
        ctl.switch_sibling(branch[0].id, -1)
        shown = ctl.store.active_path(cid)
        assert [m.id for m in shown[: len(full)]] == [m.id for m in full]
        assert [m.content for m in shown[len(full) :]] == ["Plan the days for us", FULL]

        # The proposal: a sticky notice whose button summarises the branch shown.
        ctl.compaction.proposed.emit(SummaryProposal(cid, 3481, 4096))
        assert window.banner.text.startswith("This chat takes 85% of its 4,096-token context.")
        window.set_theme("dark")
        _shot(qtbot, window, "proposal-dark")
        window.set_theme("light")
        _shot(qtbot, window, "proposal-light")
        with qtbot.waitSignal(ctl.compaction.compacted, timeout=10000):
            window.banner.action_button.click()
        qtbot.waitUntil(lambda: not ctl.is_busy(), timeout=10000)
        assert len(ctl.store.siblings(full[0].id)[0]) == 3


def test_compact_typed_and_a_summary_edited(qtbot, tmp_path: Path) -> None:
    engine = ScriptedEngine([*REPLIES[:2], SUMMARY], chars_per_step=12, step_s=0.002)
    with running_app(qtbot, tmp_path, tmp_path / "demo-model", scripted_worker(engine)) as app:
        window, ctl = app.window, app.controller
        for question in QUESTIONS[:2]:
            send_and_wait(qtbot, app, question)
        cid = window.current_conversation_id
        assert cid is not None
        send_and_wait(qtbot, app, "/compact the food matters most")
        assert engine.prompts[-1][-1]["content"].endswith(
            "Pay most attention to: the food matters most"
        )
        assert window.composer.edit.toPlainText() == ""
        summary = ctl.store.active_path(cid)[0]
        widget = window.chat_view.message_widget(str(summary.id))
        assert isinstance(widget, SummaryWidget) and widget.edit_button is not None
        widget.edit_button.click()
        assert widget.is_editing
        editor = widget.findChild(QWidget, "InlineEditor")
        assert editor is not None
        window.chat_view.editSubmitted.emit(str(summary.id), "- Porto, May, food.", [])
        edited = ctl.store.active_path(cid)
        assert edited[0].content == "- Porto, May, food." and edited[0].id != summary.id
        assert [m.content for m in edited[1:]] == [QUESTIONS[1], REPLIES[1]]
        assert ctl.store.get_message(summary.id).content == SUMMARY  # the written one stays
