"""Projects and presets in the window, as a person uses them: New chat inside a project (its
instructions in the prompt the model gets, its name under the title), moving chats by the
sidebar, deleting a project keeping its chats or with them, each undone by Edit › Undo; the
composer's preset picker giving a chat a preset, then showing it drifted. Screenshots, light and
dark: the sidebar with a project (sidebar-projects-*), its settings (project-settings-*), the
preset picker open on a chat that drifted (preset-picker-*)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QToolButton, QWidget

from app.store.project_records import ProjectFields
from tests.ui.screenshots.test_screenshots import _save_image, _save_light_and_dark, settle
from tests.ui.squeezed import squeezed_rows
from tests.ui.window_harness import (
    OFFSCREEN_NOISE,
    ScriptedEngine,
    click_in_next_message_box,
    running_app,
    scripted_worker,
    send_and_wait,
)

pytestmark = pytest.mark.qt_log_ignore(*OFFSCREEN_NOISE)


def _with_menu_open(window: QWidget, button: QToolButton) -> QImage:
    """The window with the button's menu open above it, as a person sees it (a popup is a
    window of its own: drawn over the window's picture where it opens)."""
    menu = button.menu()
    assert menu is not None
    menu.ensurePolished()  # styled in the theme and laid out, never shown (no popup grab)
    menu.adjustSize()
    image = window.grab().toImage()
    painter = QPainter(image)
    painter.drawPixmap(button.mapTo(window, QPoint(0, -menu.height())), menu.grab())
    painter.end()
    return image


def _with_loose_chats(app, other: int) -> None:
    """The sidebar as a person's looks: the project's second chat and two outside it, titled
    and with a message each (an empty chat is not kept once another opens)."""
    store, controller = app.store, app.controller
    controller.rename_conversation(other, "Compost bins")
    store.append_message(other, None, "user", "Which compost bin suits a small yard?")
    for title in ("Trip to Lisbon", "Python file reading"):
        cid = store.create_conversation(title).id
        store.append_message(cid, None, "user", f"A question about {title.lower()}.")
    controller.conversationsChanged.emit()


def test_a_project_from_new_chat_to_deletion_and_undo(qtbot, tmp_path: Path) -> None:
    engine = ScriptedEngine(["Noted."])
    with running_app(qtbot, tmp_path, tmp_path / "scripted", scripted_worker(engine)) as app:
        window, store, controller = app.window, app.store, app.controller
        project = controller.projects.create(ProjectFields("Garden", "Answer as a gardener."))
        assert project is not None
        loose = window.current_conversation_id
        assert loose is not None
        window.sidebar.projectChatRequested.emit(str(project.id))
        chat = window.current_conversation_id
        assert chat is not None and chat != loose
        assert store.get_conversation(chat).project_id == project.id
        # The empty chat open before is not kept; the new one is in the project's group.
        assert [c.id for c in store.list_conversations()] == [chat]
        assert window.header.project_marker.text() == "Project “Garden”"
        settings = window.projects.open_settings(project.id)
        assert settings is not None
        qtbot.waitExposed(settings)
        assert squeezed_rows(settings) == []  # the form scrolls rather than squeeze its hints
        settings.reject()
        send_and_wait(qtbot, app, "When do I plant tomatoes?")
        assert engine.prompts[-1][0] == {"role": "system", "content": "Answer as a gardener."}

        other = controller.new_conversation()
        window.sidebar.moveRequested.emit(str(other), str(project.id))
        assert set(store.project_chat_ids(project.id)) == {chat, other}
        _with_loose_chats(app, other)
        window.open_conversation(chat)
        window.resize(1100, 760)
        settings = window.projects.open_settings(project.id)
        assert settings is not None
        # Taller than the test screen's room (where it scrolls): the picture shows it all.
        settings.resize(max(settings.width(), 640), 760)
        _save_light_and_dark(window, {"sidebar-projects": window, "project-settings": settings})
        settings.reject()
        window.sidebar.moveRequested.emit(str(other), "")
        assert store.project_chat_ids(project.id) == [chat]

        # Keep its chats: they move out; Edit › Undo puts the project and them back.
        click_in_next_message_box("Keep chats")
        window.sidebar.projectDeleteRequested.emit(str(project.id))
        assert store.list_projects() == [] and store.get_conversation(chat).project_id is None
        assert window.menu_actions.undo.text() == "&Undo Delete Project “Garden”"
        window.menu_actions.undo.trigger()
        assert store.get_conversation(chat).project_id == project.id
        assert window.sidebar.model.project_row(str(project.id)) == 0

        # Delete its chats too: the open one goes, another opens; Undo brings it back open.
        click_in_next_message_box("Delete chats too")
        window.sidebar.projectDeleteRequested.emit(str(project.id))
        assert chat not in {c.id for c in store.list_conversations()}
        assert window.current_conversation_id != chat
        window.banner.action_button.click()
        assert window.current_conversation_id == chat
        assert store.get_conversation(chat).project_id == project.id


def test_the_preset_picker_gives_a_chat_a_preset_and_shows_its_drift(qtbot, tmp_path: Path) -> None:
    with running_app(
        qtbot, tmp_path, tmp_path / "scripted", scripted_worker(ScriptedEngine([]))
    ) as app:
        window, store, controller = app.window, app.store, app.controller
        preset = store.create_preset(
            "Careful", {"system_prompt": "Be careful.", "params": {"temperature": 0.2}}
        )
        controller.presets.presetsChanged.emit()
        button = window.presets.button
        menu = button.menu()
        assert button.text() == "No preset"
        next(a for a in menu.actions() if a.text() == "Careful").trigger()
        cid = window.current_conversation_id
        assert cid is not None
        chat = store.get_conversation(cid)
        assert (chat.preset_id, chat.system_prompt, chat.params["temperature"]) == (
            preset.id,
            "Be careful.",
            0.2,
        )
        assert button.text() == "Careful" and window.header.prompt_marker.isVisibleTo(window)
        controller.update_settings(cid, params={**chat.params, "temperature": 0.9})
        assert button.text() == "Careful (changed)"
        assert "temperature 0.2 → 0.9" in button.toolTip()
        window.resize(1100, 760)
        for theme in ("light", "dark"):
            window.set_theme(theme)
            settle()
            _save_image(_with_menu_open(window, button), f"preset-picker-{theme}")
        window.set_theme("light")
        update = next(a for a in menu.actions() if a.text().startswith("Update “Careful”"))
        update.trigger()
        assert button.text() == "Careful"
        settings = store.get_preset(preset.id).settings
        assert settings["params"]["temperature"] == 0.9

        # The chat's settings dialog fills its form from a preset, and saving puts the chat on it.
        hot = store.create_preset("Hot", {"system_prompt": "Be bold.", "params": {"top_k": 7}})
        dialog = window.open_settings()
        index = dialog.preset.box.findData(hot.id)
        dialog.preset.box.setCurrentIndex(index)
        dialog.preset.box.activated.emit(index)
        assert dialog.system_prompt.toPlainText() == "Be bold."
        assert dialog.sampling.top_k.value() == 7 and dialog.sampling.temperature.value() == 0.7
        dialog.accept()
        chat = store.get_conversation(cid)
        assert (chat.preset_id, chat.system_prompt, chat.params["top_k"]) == (hot.id, "Be bold.", 7)
        assert button.text() == "Hot"
