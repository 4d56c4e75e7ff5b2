"""The window's dialogs and menus: conversation settings, preferences, the model library (add by
link, copy or GGUF import, rename, delete, cancel), export and import, and the menu conventions
(standard shortcuts, tooltips and accessible names on every control)."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QLineEdit,
    QPlainTextEdit,
    QWidget,
)

from app.library.embedded_model import embedded_gguf_path
from app.operations.models import add_folder
from app.paths import AppPaths
from tests.tiny_gguf import tiny_model, write_gguf
from tests.tiny_models import build_dhara_checkpoint
from tests.ui.window_harness import (
    OFFSCREEN_NOISE,
    SHORT,
    click_in_next_message_box,
    running_app,
    send_and_wait,
    set_params,
)
from ui.dialogs.task_progress import TaskProgressDialog
from ui.widgets.theme import is_dark

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)


# An import checks the model in a child process (it imports MLX there): seconds on a busy machine.
IMPORT_TIMEOUT_MS = 60_000


def test_conversation_settings_are_saved_and_used(qtbot, tmp_path: Path, llama_path: Path) -> None:
    with running_app(qtbot, tmp_path, llama_path) as app:
        window = app.window
        set_params(app, SHORT)  # its logit bias is no field of the dialog
        dialog = window.open_settings()
        dialog.system_prompt.setPlainText("You answer in French.")
        dialog.sampling.temperature.setValue(0.0)
        dialog.sampling.top_k.setValue(40)
        dialog.sampling.max_tokens.setValue(5)
        dialog.seed.setValue(7)
        dialog.accept()
        conversation = app.store.get_conversation(window.current_conversation_id)
        assert conversation.system_prompt == "You answer in French."
        assert conversation.params["top_k"] == 40 and conversation.params["seed"] == 7
        assert conversation.params["logit_bias"] == SHORT["logit_bias"], "kept, though not shown"
        send_and_wait(qtbot, app, "Bonjour")
        reply = app.store.active_path(conversation.id)[-1]
        assert reply.params["max_tokens"] == 5 and reply.stats["generated_tokens"] == 5
        # Reopened, the dialog shows what was saved; "random" is no seed.
        again = window.open_settings()
        assert again.sampling.top_k.value() == 40 and again.seed.value() == 7
        again.seed.setValue(-1)
        assert again.seed.text() == "random"
        again.accept()
        assert app.store.get_conversation(conversation.id).params["seed"] is None

        # A model added from the library while the dialog is open shows in its list.
        third = window.open_settings()
        assert third.model_box.currentText() == "llama (not in the library)"
        library = window.open_library()
        with qtbot.waitSignal(library.libraryChanged, timeout=IMPORT_TIMEOUT_MS):
            library.import_folder(llama_path, link=True)
        assert [third.model_box.itemText(i) for i in range(third.model_box.count())] == ["llama"]
        assert third.model_box.currentData() == "llama"


def test_the_per_chat_switch_turns_speculative_decoding_off(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    with running_app(qtbot, tmp_path, llama_path) as app:
        window = app.window
        cid = set_params(app, SHORT)
        dialog = window.open_settings()
        assert dialog.speculation.isChecked(), "on by default"
        dialog.speculation.setChecked(False)
        dialog.accept()
        assert app.store.get_conversation(cid).params["speculation"] == "off"
        send_and_wait(qtbot, app, "the cat sat on the mat, the cat sat on the mat")
        reply = app.store.active_path(cid)[-1]
        assert reply.params["speculation"] == "off" and reply.stats["drafted_tokens"] == 0
        again = window.open_settings()
        assert not again.speculation.isChecked()
        again.speculation.setChecked(True)
        again.accept()
        assert app.store.get_conversation(cid).params["speculation"] == "prompt_lookup"


def test_preferences_set_the_cache_budget_and_theme(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    with running_app(qtbot, tmp_path, llama_path) as app:
        window = app.window
        dialog = window.open_preferences()
        dialog.budget.setValue(1.5)
        dialog.theme.setCurrentIndex(dialog.theme.findData("dark"))
        dialog.accept()
        assert app.controller.preferences.cache_budget_bytes == 1_500_000_000
        assert app.controller.preferences.theme == "dark"
        assert is_dark() and window.menu_actions.themes["dark"].isChecked()
        window.menu_actions.themes["light"].trigger()
        assert not is_dark() and app.controller.preferences.theme == "light"


def test_library_adds_renames_uses_and_deletes_models(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    with running_app(qtbot, tmp_path, llama_path) as app:
        window = app.window
        library = window.open_library()
        assert library.table.rowCount() == 0

        with qtbot.waitSignal(library.libraryChanged, timeout=IMPORT_TIMEOUT_MS):
            library.import_folder(llama_path, link=True)
        assert [(m.name, m.linked) for m in library.models()] == [("llama", True)]
        assert library.table.item(0, 1).text() == "llama"  # architecture
        assert library.table.item(0, 5).text() == "4,096"  # context

        with qtbot.waitSignal(library.libraryChanged, timeout=IMPORT_TIMEOUT_MS):
            library.import_folder(llama_path, link=False)
        assert sorted(m.linked for m in library.models()) == [False, True]

        linked = next(m for m in library.models() if m.linked)
        library.table.item(library.models().index(linked), 0).setText("Tiny llama")  # F2 edit
        assert sorted(m.name for m in library.models()) == ["Tiny llama", "llama-2"]

        copied = next(m for m in library.models() if not m.linked)
        library.table.selectRow(library.models().index(copied))
        with qtbot.waitSignal(app.controller.worker.modelLoaded, timeout=30000):
            library.use_button.click()
        assert app.controller.model_info.model_id == copied.path.name == "llama-2"
        conversation = app.store.get_conversation(window.current_conversation_id)
        assert conversation.model_id == "llama-2"

        linked = next(m for m in library.models() if m.linked)
        library.table.selectRow(library.models().index(linked))
        click_in_next_message_box("Delete")
        library.delete_button.click()
        assert [m.name for m in library.models()] == ["llama-2"]
        assert llama_path.is_dir(), "deleting a linked model leaves its folder alone"


def test_the_library_opened_from_the_settings_dialog_takes_clicks(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    with running_app(qtbot, tmp_path, llama_path) as app:
        settings = app.window.open_settings()
        qtbot.waitExposed(settings)
        buttons = settings.findChildren(QAbstractButton)
        library_button = next(b for b in buttons if b.accessibleName() == "Model library")
        library_button.click()
        library = app.window.models.open_library()
        qtbot.waitExposed(library)
        close = library.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Close)
        # Through the window system, which drops input to windows a modal dialog blocks.
        QTest.mouseClick(
            library.windowHandle(),
            Qt.MouseButton.LeftButton,
            Qt.KeyboardModifier.NoModifier,
            close.mapTo(library, close.rect().center()),
        )
        qtbot.waitUntil(lambda: not library.isVisible())
        assert settings.isVisible(), "closing the library returns to the settings"
        settings.reject()


def test_import_model_folder_converts_a_published_dhara_checkpoint(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    published = build_dhara_checkpoint(tmp_path / "dhara-tiny")
    with running_app(qtbot, tmp_path / "data", llama_path) as app:
        library = app.window.open_library()
        with qtbot.waitSignal(library.libraryChanged, timeout=60000):
            library.import_folder(published, link=True)  # converted, so never linked
        [entry] = library.models()
        assert (entry.name, entry.architecture, entry.linked) == ("dhara-tiny", "dhara", False)
        assert entry.problem is None


def test_gguf_import_runs_with_progress_and_cancel_and_failures_add_nothing(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    gguf = write_gguf(*tiny_model("llama"), tmp_path / "tiny.gguf")
    with running_app(qtbot, tmp_path / "data", llama_path) as app:
        library = app.window.open_library()
        with qtbot.waitSignal(library.libraryChanged, timeout=60000):
            progress = library.import_gguf(gguf)
            assert progress.isVisible() and progress.button.text() == "Cancel"
        assert [m.name for m in library.models()] == ["tiny"]

        # Cancel pressed before the copy begins (as a click can land first): nothing is added.
        cancelled = TaskProgressDialog(
            lambda owner: add_folder(owner, llama_path, library.models_dir, link=False), library
        )
        cancelled.open()
        cancelled.button.click()
        assert cancelled.label.text() == "Cancelling…"
        cancelled.start()
        qtbot.waitUntil(lambda: cancelled.error is not None, timeout=IMPORT_TIMEOUT_MS)
        assert cancelled.error == "The import was cancelled."
        assert cancelled.button.text() == "Close"
        library.refresh()
        assert [m.name for m in library.models()] == ["tiny"]

        # A download that cannot start says why in its progress window (no network needed).
        failed = library.download("not a repo id")
        qtbot.waitUntil(lambda: failed.error is not None, timeout=IMPORT_TIMEOUT_MS)
        assert "is not a repository id" in failed.label.text()
        models_dir = AppPaths(tmp_path / "data").models_dir
        assert sorted(p.name for p in models_dir.iterdir()) == ["tiny"]


def test_bad_model_files_show_their_error_in_the_import_dialog_and_the_app_keeps_working(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    # The header that made MLX's GGUF reader crash the process: a tensor count of 2**48 - 1.
    source = embedded_gguf_path()
    assert source is not None
    data = bytearray(source.read_bytes())
    data[8:16] = struct.pack("<Q", 0xFFFFFFFFFFFF)
    bad_gguf = tmp_path / "SmolLM2-damaged.gguf"
    bad_gguf.write_bytes(data)
    looping = tmp_path / "looping-model"
    shutil.copytree(llama_path, looping)
    (looping / "chat_template.jinja").write_text(
        "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"
    )
    with running_app(qtbot, tmp_path / "data", llama_path) as app:
        library = app.window.open_library()
        for progress, message in (
            (library.import_gguf(bad_gguf), "SmolLM2-damaged.gguf is damaged or incomplete"),
            (library.import_folder(looping, link=False), "chat_template.jinja) did not finish"),
        ):
            qtbot.waitUntil(lambda p=progress: p.error is not None, timeout=120000)
            assert message in progress.label.text()
            assert progress.isVisible() and progress.button.text() == "Close"
            progress.button.click()
            assert not progress.isVisible()
        library.refresh()
        assert library.models() == []
        assert list(AppPaths(tmp_path / "data").models_dir.iterdir()) == []
        # The window and its model still work.
        cid = set_params(app, SHORT)
        send_and_wait(qtbot, app, "Still there?")
        reply = app.store.active_path(cid)[-1]
        assert reply.role == "assistant" and reply.stats["generated_tokens"] > 0


def test_export_and_import_a_conversation(qtbot, tmp_path: Path, llama_path: Path) -> None:
    with running_app(qtbot, tmp_path / "data", llama_path) as app:
        window = app.window
        set_params(app, SHORT)
        send_and_wait(qtbot, app, "Remember this")
        original = window.current_conversation_id
        assert window.export_conversation(tmp_path / "chat.json")
        assert window.export_conversation(tmp_path / "chat.md")
        assert "Remember this" in (tmp_path / "chat.md").read_text()
        data = json.loads((tmp_path / "chat.json").read_text())
        assert data["conversation"]["title"] == "Remember this"

        imported = window.import_conversation(tmp_path / "chat.json")
        assert imported is not None and imported != original
        assert window.current_conversation_id == imported
        assert app.store.active_path(imported)[0].content == "Remember this"

        (tmp_path / "broken.json").write_text("{not json")
        assert window.import_conversation(tmp_path / "broken.json") is None
        assert "broken.json could not be imported" in window.banner.text


def test_menus_use_standard_keys_and_every_control_is_named(
    qtbot, tmp_path: Path, llama_path: Path
) -> None:
    with running_app(qtbot, tmp_path, llama_path) as app:
        window = app.window
        actions = window.menu_actions
        std = QKeySequence.StandardKey
        for action, key in (
            (actions.new_chat, std.New),
            (actions.find, std.Find),
            (actions.close, std.Close),
            (actions.copy, std.Copy),
            (actions.undo, std.Undo),
        ):
            assert action.shortcut() == QKeySequence(key)
        assert not actions.preferences.shortcut().isEmpty()
        titles = [a.text().replace("&", "") for a in window.menuBar().actions()]
        assert titles == ["File", "Edit", "View", "Chat", "Window", "Help"]
        window.open_settings()
        window.open_preferences()
        window.open_library()
        window.knowledge_folders.open_page()
        set_params(app, SHORT)
        send_and_wait(qtbot, app, "Hello")
        for top in [window, *QApplication.topLevelWidgets()]:
            if not top.isVisible() or not isinstance(top, QWidget):
                continue
            for control in top.findChildren(QWidget):
                if not isinstance(
                    control, QAbstractButton | QLineEdit | QPlainTextEdit | QComboBox
                ) or not control.isVisibleTo(top):
                    continue
                if isinstance(control.parent(), QLineEdit | QAbstractSpinBox):
                    continue  # Qt's own parts of an editor (clear button, spin box text)
                name = control.accessibleName() or (
                    isinstance(control, QAbstractButton) and control.text()
                )
                where = control.parent().objectName()
                assert name, f"{type(control).__name__} in {where} has no accessible name"
                if isinstance(control, QAbstractButton) and top is window:
                    assert control.toolTip() or control.text(), control.accessibleName()
        for dialog in window.findChildren(QDialog):
            dialog.close()
        window.activateWindow()
        qtbot.waitUntil(window.isActiveWindow)
        actions.find.trigger()
        assert QApplication.focusWidget() is window.sidebar.search_box
