"""The window's menus and their actions (File, Edit, View, Chat, Window, Help).

Standard commands use `QKeySequence`'s standard keys, so each platform gets its own shortcut;
on macOS the menu roles move Preferences, About and Quit into the application menu.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QAction, QActionGroup, QDesktopServices, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu, QMenuBar

from ui.widgets.theme import THEME_MODES

Keys = QKeySequence.StandardKey | str | None
HELP_MENU = "help_menu"
_THEME_LABELS = {"system": "Follow the System", "light": "Light", "dark": "Dark"}


@dataclass
class WindowActions:
    new_chat: QAction
    library: QAction
    knowledge: QAction
    import_gguf: QAction
    import_folder: QAction
    download: QAction
    export: QAction
    import_conversation: QAction
    import_chats: QAction
    import_chats_folder: QAction
    close: QAction
    quit: QAction
    undo: QAction
    undo_import: QAction
    copy: QAction
    find: QAction
    preferences: QAction
    themes: dict[str, QAction]
    toggle_sidebar: QAction
    stop: QAction
    regenerate: QAction
    edit_last: QAction
    previous_branch: QAction
    next_branch: QAction
    fork: QAction
    settings: QAction
    minimize: QAction
    about: QAction


def _action(
    window: QMainWindow,
    text: str,
    slot: Callable[[], object],
    keys: Keys = None,
    tip: str = "",
    role: QAction.MenuRole | None = None,
    fallback: str | None = None,
) -> QAction:
    action = QAction(text, window)
    if keys is not None:
        sequence = QKeySequence(keys)
        # Some desktops define no key for a standard command (e.g. Preferences on GNOME).
        if sequence.isEmpty() and fallback:
            sequence = QKeySequence(fallback)
        action.setShortcut(sequence)
    plain = text.replace("&", "").rstrip("…")
    shortcut = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
    action.setToolTip(f"{tip or plain} ({shortcut})" if shortcut else tip or plain)
    action.setStatusTip(tip or plain)
    if role is not None:
        action.setMenuRole(role)
    action.triggered.connect(slot)
    window.addAction(action)  # shortcuts work even while the menu bar is hidden
    return action


def build_actions(window: QMainWindow, slots: dict[str, Callable[[], object]]) -> WindowActions:
    """Every action, each calling `slots[name]`; theme actions call `slots["theme_<mode>"]`."""
    std = QKeySequence.StandardKey
    role = QAction.MenuRole
    group = QActionGroup(window)
    themes = {}
    for mode in THEME_MODES:
        action = _action(
            window,
            _THEME_LABELS[mode],
            slots[f"theme_{mode}"],
            tip=f"Use the {_THEME_LABELS[mode].lower()} theme",
        )
        action.setCheckable(True)
        group.addAction(action)
        themes[mode] = action
    return WindowActions(
        new_chat=_action(
            window, "&New Chat", slots["new_chat"], std.New, "Start a new conversation"
        ),
        library=_action(
            window,
            "Model &Library…",
            slots["library"],
            "Ctrl+Shift+L",
            "See, rename and delete models, and add new ones",
        ),
        knowledge=_action(
            window,
            "&Knowledge…",
            slots["knowledge"],
            "Ctrl+Shift+K",
            "Folders of documents that chats can read: add, index, remove",
        ),
        import_gguf=_action(
            window,
            "Import &GGUF…",
            slots["import_gguf"],
            tip="Convert a .gguf model file into the library",
        ),
        import_folder=_action(
            window,
            "Import Model &Folder…",
            slots["import_folder"],
            tip="Add an MLX model folder to the library (copy or link)",
        ),
        download=_action(
            window,
            "&Download Model…",
            slots["download"],
            tip="Download an MLX model by Hugging Face repository id",
        ),
        export=_action(
            window,
            "&Export Conversation…",
            slots["export"],
            std.Save,
            "Save this conversation as JSON (every branch) or Markdown",
        ),
        import_conversation=_action(
            window,
            "&Import Conversation…",
            slots["import_conversation"],
            std.Open,
            "Open a conversation exported as JSON",
        ),
        import_chats=_action(
            window,
            "Import C&hats…",
            slots["import_chats"],
            "Ctrl+Shift+I",
            "Bring conversations from ChatGPT, Claude, Open WebUI, LM Studio and"
            " other apps, with every branch",
        ),
        import_chats_folder=_action(
            window,
            "Import Chats from a F&older…",
            slots["import_chats_folder"],
            tip="Import the chats of an unpacked export or an app's data folder",
        ),
        close=_action(window, "&Close Window", slots["close"], std.Close, "Close the window"),
        quit=_action(
            window,
            "&Quit",
            slots["quit"],
            std.Quit,
            "Quit Branchwise",
            role.QuitRole,
            fallback="Ctrl+Q",
        ),
        undo=_action(window, "&Undo", slots["undo"], std.Undo, "Undo the last deletion"),
        undo_import=_action(
            window,
            "Undo &Import",
            slots["undo_import"],
            tip="Take the last import of chats back out",
        ),
        copy=_action(
            window, "&Copy", slots["copy"], std.Copy, "Copy the selection, or else the last reply"
        ),
        find=_action(
            window, "&Find in Chats", slots["find"], std.Find, "Search every conversation"
        ),
        preferences=_action(
            window,
            "&Preferences…",
            slots["preferences"],
            std.Preferences,
            "Cache memory budget and theme",
            role.PreferencesRole,
            fallback="Ctrl+,",
        ),
        themes=themes,
        toggle_sidebar=_action(
            window,
            "Show &Sidebar",
            slots["toggle_sidebar"],
            "Ctrl+Shift+S",
            "Show or hide the conversation list",
        ),
        stop=_action(
            window,
            "&Stop Generating",
            slots["stop"],
            "Esc",
            "Stop the reply being written; its text so far is kept",
        ),
        regenerate=_action(
            window,
            "&Regenerate Reply",
            slots["regenerate"],
            "Ctrl+Shift+R",
            "Write another version of the last reply",
        ),
        edit_last=_action(
            window,
            "&Edit Last Message",
            slots["edit_last"],
            "Ctrl+Shift+E",
            "Edit your last message; the original stays as a version",
        ),
        previous_branch=_action(
            window,
            "&Previous Version",
            slots["previous_branch"],
            "Ctrl+[",
            "Show the previous version of the selected or last branched message",
        ),
        next_branch=_action(
            window,
            "&Next Version",
            slots["next_branch"],
            "Ctrl+]",
            "Show the next version of the selected or last branched message",
        ),
        fork=_action(
            window,
            "Continue in a New &Chat",
            slots["fork"],
            "Ctrl+Shift+N",
            "Copy the branch shown into a new conversation and continue there",
        ),
        settings=_action(
            window,
            "Conversation &Settings…",
            slots["settings"],
            "Ctrl+Shift+,",
            "Model, system prompt and sampling for this conversation",
        ),
        minimize=_action(window, "&Minimize", slots["minimize"], "Ctrl+M", "Minimize the window"),
        about=_action(
            window, "&About Branchwise", slots["about"], tip="About Branchwise", role=role.AboutRole
        ),
    )


def build_menus(bar: QMenuBar, a: WindowActions) -> None:
    file = bar.addMenu("&File")
    for item in (
        a.new_chat,
        None,
        a.library,
        a.import_gguf,
        a.import_folder,
        a.download,
        None,
        a.knowledge,
        None,
        a.export,
        a.import_conversation,
        a.import_chats,
        a.import_chats_folder,
        None,
        a.close,
        a.quit,
    ):
        _add(file, item)
    edit = bar.addMenu("&Edit")
    for item in (a.undo, a.undo_import, None, a.copy, None, a.find, None, a.preferences):
        _add(edit, item)
    view = bar.addMenu("&View")
    theme = view.addMenu("&Theme")
    for action in a.themes.values():
        theme.addAction(action)
    view.addAction(a.toggle_sidebar)
    chat = bar.addMenu("&Chat")
    for item in (
        a.stop,
        a.regenerate,
        a.edit_last,
        None,
        a.previous_branch,
        a.next_branch,
        None,
        a.fork,
        a.settings,
    ):
        _add(chat, item)
    bar.addMenu("&Window").addAction(a.minimize)
    help_menu = bar.addMenu("&Help")
    help_menu.setObjectName(HELP_MENU)
    help_menu.addAction(a.about)
    for menu in (file, edit, view, theme, chat):
        menu.setToolTipsVisible(True)


def add_log_folder_action(window: QMainWindow, folder: Path) -> QAction:
    """Help › Show Log Folder: opens the folder in the file manager, to attach the log to a
    bug report."""

    def show() -> None:
        folder.mkdir(parents=True, exist_ok=True)  # nothing may have been logged yet
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))

    action = _action(
        window, "Show &Log Folder", show, tip="Open the folder that holds Branchwise's log"
    )
    help_menu = window.menuBar().findChild(QMenu, HELP_MENU)
    assert help_menu is not None, "build_menus makes the Help menu first"
    help_menu.insertAction(help_menu.actions()[0], action)
    return action


def _add(menu: QMenu, item: QAction | None) -> None:
    if item is None:
        menu.addSeparator()
    else:
        menu.addAction(item)
