"""Screenshots of Import Chats: the preview of a small ChatGPT export (one conversation
unticked, a refused entry under Problems) and the report after the import, light and dark,
saved into tests/screenshots/ for a person to look at; each must be a real picture."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.dialogs.chat_exports import chatgpt_export
from tests.ui.screenshots.test_screenshots import _save
from tests.ui.window_harness import OFFSCREEN_NOISE, ScriptedEngine, running_app, scripted_worker

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)

TITLES = (
    "Greetings",
    "Trip to Vienna: trains, museums and where to eat",
    "Sourdough starter keeps failing",
    "Tax questions 2025",
)


def _settled(widgets: list) -> object:
    seen: list[list[tuple[int, ...]]] = []

    def check() -> bool:
        seen.append([(*w.geometry().getRect(), w.body.height()) for w in widgets])
        return len(seen) > 3 and seen[-1] == seen[-2] == seen[-3] == seen[-4]

    return check


def test_screenshots_of_the_import_preview_and_report(qtbot, tmp_path: Path) -> None:
    export = chatgpt_export(tmp_path / "chatgpt-export.zip", TITLES)
    engine = ScriptedEngine([])
    with running_app(qtbot, tmp_path / "data", tmp_path / "model", scripted_worker(engine)) as app:
        window = app.window
        window.resize(1100, 760)
        dialog = window.history_import.open_preview([export])
        dialog.resize(820, 560)
        qtbot.waitUntil(lambda: dialog.step == "preview", timeout=20000)
        dialog.preview.set_checked("Tax questions 2025", False)
        for theme in ("light", "dark"):
            window.set_theme(theme)
            _save(dialog, f"import-preview-{theme}")
        with qtbot.waitSignal(dialog.imported, timeout=20000):
            dialog.import_button.click()
        for theme in ("light", "dark"):
            window.set_theme(theme)
            _save(dialog, f"import-report-{theme}")
        greetings = next(c for c in window.store.list_conversations() if c.title == "Greetings")
        window.open_conversation(greetings.id)
        dialog.close()
        path = window.store.active_path(greetings.id)
        reply = window.chat_view.message_widget(str(path[1].id))
        reply.trace_section.set_expanded(True)
        widgets = [window.chat_view.message_widget(str(m.id)) for m in path]
        # Laid out over the event loop's next turns (the bubbles fit their text, the opened
        # trace grows): shot once nothing moves for a few turns and the token count is in.
        qtbot.waitUntil(_settled(widgets), timeout=10000)
        qtbot.waitUntil(window.composer.token_label.isVisible, timeout=10000)
        for theme in ("light", "dark"):
            window.set_theme(theme)
            _save(window, f"imported-chat-{theme}")
        window.set_theme("light")
