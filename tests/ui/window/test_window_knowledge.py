"""Knowledge in the window: the composer's button chooses what the chat reads (and the meter
counts what it may bring), the person's message says it is searching, each reply that read
knowledge lists its sources under it, a citation `[N]` in the reply opens its source, *Open*
and *Reveal* reach the system's handler through Qt (never a `file:` link in the text), *Show*
opens the excerpt in its document, and a file changed since says so on the old turn.
Screenshots of a reply's sources unfolded, light and dark (sources-*)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QUrl

from tests.knowledge_fakes import FakeKnowledge
from tests.ui.screenshots.test_screenshots import _save_light_and_dark
from tests.ui.window_harness import OFFSCREEN_NOISE, ScriptedEngine, running_app, scripted_worker
from ui.chat import sources_panel
from ui.chat.source_dialog import SourceDialog
from ui.window.knowledge_features import SEARCHING

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)

ANSWER = "The Seine runs through Paris [1], the capital [2]; see [9] and `[1]`."


def test_sources_under_a_reply_and_citations_that_open_them(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    guide = tmp_path / "Manuals" / "guide.md"
    guide.parent.mkdir()
    guide.write_text("The Seine runs through Paris.\n\nParis is the capital of France.")
    knowledge = FakeKnowledge({"Manuals": {str(guide): guide.read_text()}, "Papers": {}})
    opened: list[tuple[str, str]] = []
    monkeypatch.setattr(sources_panel, "open_file", lambda p: opened.append(("open", p)))
    monkeypatch.setattr(sources_panel, "reveal_file", lambda p: opened.append(("reveal", p)))
    engine = ScriptedEngine([ANSWER])
    with running_app(qtbot, tmp_path / "data", tmp_path / "model", scripted_worker(engine)) as app:
        window, composer = app.window, app.window.composer
        app.controller.knowledge.set_base(knowledge)
        window.new_chat()
        button = composer.knowledge
        menu = button.menu()
        assert menu is not None
        menu.aboutToShow.emit()  # the menu lists the index's collections as it opens
        actions = {a.data(): a for a in menu.actions() if a.isCheckable()}
        assert set(actions) == {"Manuals", "Papers"}
        actions["Manuals"].setChecked(True)
        cid = window.current_conversation_id
        assert cid is not None
        assert app.store.get_conversation(cid).params["knowledge"] == ["Manuals"]
        assert button.text() == "Knowledge · 1"

        qtbot.keyClicks(composer.edit, "Which river runs through Paris?")
        qtbot.waitUntil(lambda: "+ up to" in composer.token_label.text(), timeout=5000)

        notes: list[str] = []
        app.controller.knowledge.turns.searching.connect(
            lambda s: (
                notes.append(window.chat_view.message_widget(str(s.message_id)).badge.text())
                if s.running
                else None
            )
        )
        with qtbot.waitSignal(
            app.controller.busyChanged, timeout=20000, check_params_cb=lambda busy: not busy
        ):
            composer.send()
        assert notes == [SEARCHING]
        reply = app.store.active_path(cid)[-1]
        widget = window.chat_view.message_widget(str(reply.id))
        assert widget is not None and widget.sources is not None
        panel = widget.sources
        assert panel.toggle.text() == "Sources · 2" and not panel.expanded
        assert [r.source.text for r in panel.rows] == [
            "The Seine runs through Paris.",
            "Paris is the capital of France.",
        ]
        html = widget.body.toHtml()
        # Citations of its sources are links; [9] (no such source) and code stay text.
        assert 'href="source:1"' in html and 'href="source:2"' in html
        assert "source:9" not in html and "file:" not in html
        widget.body.anchorClicked.emit(QUrl("source:2"))
        assert panel.expanded and panel.rows[1].property("marked") is True
        window.resize(1100, 760)  # the panel unfolded, the cited source marked
        _save_light_and_dark(window, {"sources": window})
        panel.rows[0].open_button.click()
        panel.rows[0].reveal_button.click()
        assert opened == [("open", str(guide)), ("reveal", str(guide))]
        # Show: the excerpt marked in its document, as the index holds it now.
        panel.rows[1].show_button.click()
        dialog = window.findChildren(SourceDialog)[-1]
        assert dialog.text.toPlainText() == guide.read_text() and not dialog.notice.isVisible()
        assert dialog.marked_span() == (31, 62)
        dialog.close()
        # The user message shows no chip for its excerpts: they are the reply's sources.
        user = window.chat_view.message_widget(str(app.store.active_path(cid)[0].id))
        assert user is not None and user.chips is None

        # The file changes: the old turn says so, and renders as it did.
        knowledge.collections["Manuals"][str(guide)] = "The Seine is long."
        window.open_conversation(app.controller.new_conversation())
        window.open_conversation(cid)
        panel = window.chat_view.message_widget(str(reply.id)).sources
        assert panel is not None and panel.toggle.text() == "Sources · 2 · 2 changed since"
        assert panel.rows[0].state.text() == "changed since"
        panel.rows[0].show_button.click()  # the excerpt the reply read, and why only it
        dialog = window.findChildren(SourceDialog)[-1]
        assert dialog.text.toPlainText() == "The Seine runs through Paris."
        assert dialog.notice.text().startswith("The file has changed since this reply read it")
